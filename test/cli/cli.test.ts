// The `leash` command's conventions: --version, help for every subcommand, --quiet, and the one
// rule both grace settings follow.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { describeRange, formatTime, graceFromEnvironment, LIBRARY_GRACE, parseGrace, REAP_GRACE, RUN_GRACE } from '../../src/config/grace.js';
import { CLI_ENTRY, FIXTURES, killMarked, LIBRARY_ENTRY, markedEnv, newMark, REPO_ROOT } from '../helpers/processes.js';

function leash(args: string[], extraEnv: NodeJS.ProcessEnv = {}, mark = newMark()) {
  const result = spawnSync(process.execPath, [CLI_ENTRY, ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', ...extraEnv }),
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('leash --version prints the package name and version', () => {
  const manifest = JSON.parse(readFileSync(`${REPO_ROOT}package.json`, 'utf8'));
  for (const flag of ['--version', '-V']) {
    const result = leash([flag]);
    assert.equal(result.code, 0);
    assert.equal(result.stdout, `leash ${manifest.version} (${manifest.name})\n`);
  }
});

test('every subcommand has help: `leash help X`, `leash X --help`, `leash X -h`', () => {
  for (const command of ['run', 'status', 'supervise', 'check']) {
    for (const args of [['help', command], [command, '--help'], [command, '-h']]) {
      const result = leash(args);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stdout, new RegExp(`^usage: leash ${command}`), args.join(' '));
    }
  }
  for (const args of [['help'], ['--help'], ['-h']]) {
    const result = leash(args);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^usage: leash <command>/);
  }
  assert.equal(leash([]).code, 64);
  assert.equal(leash(['help', 'nope']).code, 64);
});

test('after --, --help belongs to the command, not to leash run', () => {
  const result = leash(['run', '--quiet', '--', 'sh', '-c', 'echo "got $1"', 'sh', '--help']);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, 'got --help\n');
});

test('without --, the command starts at the first word that is not an option, and its --help is its own', () => {
  const bare = leash(['run', '-q', 'sleep', '0.1']);
  assert.equal(bare.code, 0, bare.stderr);
  const own = leash(['run', '--quiet', '--grace', '1', 'sh', '-c', 'echo "got $1"', 'sh', '--help']);
  assert.equal(own.code, 0, own.stderr);
  assert.equal(own.stdout, 'got --help\n');
  const asked = leash(['run', '--grace', '1', '--help']);
  assert.equal(asked.code, 0);
  assert.match(asked.stdout, /^usage: leash run/);
});

test('leash run --quiet drops the phase lines and keeps errors', async () => {
  const mark = newMark();
  try {
    const loud = leash(['run', '--', 'true'], {}, mark);
    assert.match(loud.stderr, /phase=/);
    const quiet = leash(['run', '--quiet', '--', 'true'], {}, mark);
    assert.equal(quiet.code, 0);
    assert.equal(quiet.stderr, '');
    const missing = leash(['run', '-q', '--', 'leash-no-such-command-anywhere'], {}, mark);
    assert.equal(missing.code, 127);
    assert.match(missing.stderr, /command not found/);
    const warned = leash(['run', '-q', '--', 'true'], { LEASH_GRACE_SECONDS: 'abc' }, mark);
    assert.match(warned.stderr, /warning: ignoring LEASH_GRACE_SECONDS='abc'/);
  } finally {
    await killMarked(mark);
  }
});

test('both grace settings: empty is unset, bad or out of range is a warning and the default', () => {
  for (const setting of [LIBRARY_GRACE, RUN_GRACE]) {
    const warnings: string[] = [];
    const read = (value: string | undefined) => graceFromEnvironment({ [setting.name]: value }, setting, (m) => warnings.push(m));
    assert.equal(read(undefined), setting.fallback);
    assert.equal(read(''), setting.fallback);
    assert.equal(read('  '), setting.fallback);
    assert.equal(warnings.length, 0, 'empty or unset must not warn');
    assert.equal(read(String(setting.max)), setting.max);
    assert.equal(read(String(setting.min)), setting.min);
    for (const bad of ['abc', '-1', String(setting.max * 2), '1e3', '0x10', '12abc']) {
      assert.equal(read(bad), setting.fallback, `${setting.name}=${bad}`);
    }
    assert.equal(warnings.length, 6);
    for (const warning of warnings) assert.match(warning, new RegExp(`^ignoring ${setting.name}='.*': expected ${describeRange(setting)}; using ${formatTime(setting.fallback, setting.unit)}$`));
  }
  assert.equal(parseGrace('1.5', LIBRARY_GRACE), undefined, 'milliseconds are whole');
  assert.equal(parseGrace('1.5', RUN_GRACE), 1.5);
  // One syntax everywhere; a bare number is in the unit the setting's name says.
  for (const [text, ms] of [['5s', 5000], ['500ms', 500], ['1.5s', 1500], ['2m', 120_000], ['.5s', 500], [' 7s ', 7000]] as const) {
    assert.equal(parseGrace(text, LIBRARY_GRACE), ms, `LEASH_GRACE_MS=${text}`);
    assert.equal(parseGrace(text, RUN_GRACE), ms / 1000, `--grace ${text}`);
    assert.equal(parseGrace(text, REAP_GRACE), ms / 1000, `reap --grace ${text}`);
  }
  assert.equal(parseGrace('5', LIBRARY_GRACE), 5);
  assert.equal(parseGrace('5', RUN_GRACE), 5);
  for (const bad of ['5 s', '5sec', '1h', '-5s', 's', '0.0001s', '1e3ms']) {
    for (const setting of [LIBRARY_GRACE, RUN_GRACE, REAP_GRACE]) assert.equal(parseGrace(bad, setting), undefined, `${setting.name} ${bad}`);
  }
  // leash run's cap fits slow shutdowns: ten minutes.
  assert.equal(parseGrace('10m', RUN_GRACE), 600);
  assert.equal(parseGrace('601s', RUN_GRACE), undefined);
  assert.equal(parseGrace('0.01', RUN_GRACE), undefined, 'below the minimum');
});

test('the owner library reads LEASH_GRACE_MS by the same rule (empty: no warning)', async () => {
  const mark = newMark();
  const owner = (value: string) =>
    spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `const { spawnOwned, terminateOwned } = await import(${JSON.stringify(LIBRARY_ENTRY)});
await terminateOwned(spawnOwned('true', [], { stdio: 'ignore' }), { graceMs: 1000 });`],
      { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL', env: markedEnv(mark, { LEASH_GRACE_MS: value }) },
    );
  try {
    const empty = owner('');
    assert.equal(empty.status, 0, empty.stderr);
    assert.doesNotMatch(empty.stderr, /LEASH_GRACE_MS/);
    const bad = owner('soon');
    assert.equal(bad.status, 0, bad.stderr);
    assert.match(bad.stderr, /ignoring LEASH_GRACE_MS='soon': expected a time such as 5s, 500ms or 1.5s, a bare number being milliseconds, from 0ms to 10m; using 3s/);
  } finally {
    await killMarked(mark);
  }
});

// `help` is itself a listed command: `leash help help` (and `leash help --help`) used to exit 64
// saying there was no such command.
test('leash help help, leash help --help and leash help -h print the main help', () => {
  for (const args of [['help', 'help'], ['help', '--help'], ['help', '-h']]) {
    const result = leash(args);
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stdout, /^usage: leash <command>/, args.join(' '));
  }
  for (const args of [['help', 'reap'], ['reap', '--help'], ['reap', '-h']]) {
    const result = leash(args);
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stdout, /^usage: leash reap/, args.join(' '));
  }
});

// The help texts name every exit code their command returns: `leash status` exits 69 for a stale
// document (its writer died), which its help used to leave out.
test('leash status --help lists each of its exit codes', async () => {
  const { StatusExit } = await import('../../src/run/status.js');
  const help = leash(['status', '--help']).stdout;
  for (const [meaning, code] of Object.entries(StatusExit)) assert.match(help, new RegExp(`\\b${code} `), `${meaning} (${code}) in: ${help}`);
  assert.match(help, /-.*stdin/, 'FILE - (stdin) is mentioned');
});

// leash run's help names every stop signal (SIGQUIT was left out) and the exit status 1 of
// --die-with-parent when the parent is already gone.
test('leash run --help names every stop signal and exit status', async () => {
  const { STOP_SIGNALS } = await import('../../src/run/signals.js');
  const help = leash(['run', '--help']).stdout;
  for (const signal of STOP_SIGNALS) assert.ok(help.includes(signal.slice(3)), `${signal} in: ${help}`);
  assert.match(help, /\b1 --die-with-parent/);
});

// `leash check` exits 1 for findings and 2 when it cannot run. A proc-leash-check that fails to
// load, or throws, used to surface as "leash: ..." with exit 1: a build read it as findings.
for (const broken of ['load', 'throw']) {
  test(`leash check with a proc-leash-check that fails to ${broken}: exit 2 and a message`, () => {
    const hooks = pathToFileURL(`${FIXTURES}cli/broken-check-hooks.mjs`).href;
    const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks)});`;
    const result = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, CLI_ENTRY, 'check', '.'], {
      encoding: 'utf8',
      timeout: 20_000,
      killSignal: 'SIGKILL',
      env: { ...process.env, LEASH_TEST_BROKEN_CHECK: broken },
    });
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /^leash check: .*(half installed|internal failure)/);
  });
}
