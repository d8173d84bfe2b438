// leash check as a pre-commit hook (.pre-commit-hooks.yaml): the manifest, the flag the hook passes
// (--force-exclude), and the hook installed by pre-commit itself from a local clone of this
// repository, blocking a commit that adds a detached spawn and letting a clean one through.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { killMarked, markedEnv, newMark, REPO_ROOT } from '../helpers/processes.js';
import { describeResult, run } from '../package/packages.js';
import { project, runCheck } from './harness.js';

const MANIFEST = readFileSync(join(REPO_ROOT, '.pre-commit-hooks.yaml'), 'utf8');
const manifestField = (name: string): string => {
  const match = new RegExp(`^(?:- |  )${name}: (.*)$`, 'm').exec(MANIFEST);
  assert.ok(match, `.pre-commit-hooks.yaml has no ${name}`);
  return match[1]!.trim();
};
const packageJson = (dir: string) => JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string> };

const PYTHON_DETACHED = 'import subprocess\n\nsubprocess.Popen(["sleep", "1"], start_new_session=True)\n';
const JS_DETACHED = "import { spawn } from 'node:child_process';\nspawn('sleep', ['1'], { detached: true });\n";

test('the hook manifest: node, the check of the same release as the hook\'s dependency, its bin as the entry', () => {
  assert.equal(manifestField('id'), 'leash-check');
  assert.equal(manifestField('language'), 'node');
  const entry = manifestField('entry').split(' ');
  const check = packageJson('packages/check');
  // The entry is a bin of a package the hook installs: the check, declared below.
  assert.ok(check.bin[entry[0]!], `${entry[0]} is not a bin of ${check.name}`);
  assert.ok(entry.includes('--force-exclude'));
  assert.equal(manifestField('additional_dependencies'), `['${check.name}@${check.version}']`, 'the hook must install the check of this release');
  assert.equal(check.version, packageJson('.').version);
  // Every file the check reads passes the manifest's `files`, and nothing else needs to.
  const files = new RegExp(manifestField('files'));
  for (const name of ['a.py', 'a.js', 'a.cjs', 'a.mjs', 'a.ts', 'a.cts', 'a.mts', 'a.jsx', 'a.tsx']) assert.match(name, files);
  for (const name of ['a.pyc', 'a.json', 'a.md', 'a.sh', 'a.tsbuildinfo']) assert.doesNotMatch(name, files);
  // pre-commit's own reading of it, where pre-commit is installed.
  if (spawnSync('pre-commit', ['--version']).status === 0) {
    const valid = run('pre-commit', ['validate-manifest', join(REPO_ROOT, '.pre-commit-hooks.yaml')], REPO_ROOT);
    assert.equal(valid.status, 0, describeResult(valid));
  }
});

test('--force-exclude: named files are skipped as a run without paths would skip them, without a note', async (t) => {
  const mark = newMark();
  const dir = project({
    'app/main.py': PYTHON_DETACHED,
    'tests/test_main.py': PYTHON_DETACHED,
    'tests/helpers.py': PYTHON_DETACHED,
    'src/spawn.test.mjs': JS_DETACHED,
    'gen/out.mjs': JS_DETACHED,
    'README.md': 'start_new_session=True\n',
    '.leash-check.json': JSON.stringify({ skip: ['gen/**'] }),
  }, 'leash-check-force-exclude-');
  t.after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await killMarked(mark);
  });
  const named = ['app/main.py', 'tests/test_main.py', 'src/spawn.test.mjs', 'gen/out.mjs', 'README.md'];
  const paths = (stdout: string) => [...new Set((JSON.parse(stdout) as { findings: Array<{ path: string }> }).findings.map((f) => f.path))].sort();

  // Without the flag a named file is checked whatever its name: all four are reported.
  const plain = await runCheck(['--format', 'json', ...named], dir, mark);
  assert.equal(plain.code, 1, plain.stderr);
  assert.deepEqual(paths(plain.stdout), ['app/main.py', 'gen/out.mjs', 'src/spawn.test.mjs', 'tests/test_main.py']);

  const forced = await runCheck(['--format', 'json', '--force-exclude', ...named], dir, mark);
  assert.equal(forced.code, 1, forced.stderr);
  assert.deepEqual(paths(forced.stdout), ['app/main.py']);
  assert.deepEqual((JSON.parse(forced.stdout) as { notes: string[] }).notes, []);

  // Only skipped files and folders: a clean run, not an error.
  const none = await runCheck(['--force-exclude', 'tests/test_main.py', 'README.md', 'tests', 'gen'], dir, mark);
  assert.equal(none.code, 0, none.stdout + none.stderr);
  assert.match(none.stdout, /\(0 file\(s\) checked/);
  // A named folder without the flag is walked whatever its own name.
  const folder = await runCheck(['--format', 'json', 'tests'], dir, mark);
  assert.deepEqual(paths(folder.stdout), ['tests/helpers.py']);
});

// pre-commit 4.6.1 and later run `npm install -g git+file://CLONE`; npm prepares that clone with
// npm_config_global=true in the environment, so its own install leaves the build tools out. The
// prepare step installs them, locally, first; and only then. (The whole install, simulated with
// npm 11.19 and that command, takes a minute of building: measured by hand, see docs/check.md.)
test('prepare-git-install.mjs installs the build tools only in a global install that lacks them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'leash-prepare-'));
  try {
    // A copy beside no node_modules: typescript cannot be resolved from it.
    const script = join(dir, 'prepare-git-install.mjs');
    writeFileSync(script, readFileSync(join(REPO_ROOT, 'scripts/prepare-git-install.mjs')));
    // npm stand-in: records how it was called.
    const fakeNpm = join(dir, 'fake-npm.cjs');
    const record = join(dir, 'npm-called.json');
    writeFileSync(fakeNpm, `require('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify({ args: process.argv.slice(2), global: process.env.npm_config_global }));\n`);
    const prepare = (extra: NodeJS.ProcessEnv) => {
      const env: NodeJS.ProcessEnv = { ...process.env, npm_execpath: fakeNpm, ...extra };
      for (const [key, value] of Object.entries(extra)) if (value === undefined) delete env[key];
      return spawnSync(process.execPath, [script], { cwd: dir, env, encoding: 'utf8', timeout: 30_000 });
    };

    const local = prepare({ npm_config_global: undefined });
    assert.equal(local.status, 0, describeResult(local));
    assert.ok(!existsSync(record), 'npm was run by an ordinary prepare');

    const global = prepare({ npm_config_global: 'true' });
    assert.equal(global.status, 0, describeResult(global));
    const called = JSON.parse(readFileSync(record, 'utf8')) as { args: string[]; global: string };
    assert.deepEqual(called.args.slice(0, 2), ['install', '--include=dev']);
    assert.equal(called.global, 'false');

    // With the tools there (the repository's own copy, beside its node_modules): nothing to do.
    rmSync(record);
    const installed = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/prepare-git-install.mjs')], { cwd: REPO_ROOT, env: { ...process.env, npm_execpath: fakeNpm, npm_config_global: 'true' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(installed.status, 0, describeResult(installed));
    assert.ok(!existsSync(record), 'npm was run although typescript is installed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const preCommit = spawnSync('pre-commit', ['--version'], { encoding: 'utf8' });
const PRE_COMMIT_ABSENT = preCommit.status === 0 ? false : 'SKIP: pre-commit is not installed (apt-get install -y pre-commit)';
/** npm could not reach the registry for what its cache lacks: the environment, not the hook. */
const OFFLINE = /ENOTCACHED|EAI_AGAIN|ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT/;

test('pre-commit installs the hook from a local clone; it blocks a staged detached spawn and passes a clean change', { skip: PRE_COMMIT_ABSENT, timeout: 180_000 }, async (t) => {
  const mark = newMark();
  const scratch = mkdtempSync(join(tmpdir(), 'leash-precommit-'));
  t.after(async () => {
    await killMarked(mark);
    rmSync(scratch, { recursive: true, force: true });
  });
  const env = markedEnv(mark, {
    PRE_COMMIT_HOME: join(scratch, 'pre-commit-home'), // a fresh install, never the user's
    // npm's cache first (CI has just run `npm ci`); the registry only for what the cache lacks.
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    NODE_OPTIONS: '',
  });
  for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'PRE_COMMIT', 'GITHUB_ACTIONS']) delete env[name];
  const git = (cwd: string, args: string[], extra: NodeJS.ProcessEnv = {}) => {
    const result = run('git', ['-c', 'user.name=leash test', '-c', 'user.email=test@leash.invalid', '-c', 'commit.gpgsign=false', ...args], cwd, { ...env, ...extra });
    assert.equal(result.status, 0, `git ${args.join(' ')}: ${describeResult(result)}`);
    return result.stdout.trim();
  };

  // The hook repository: this work tree as a commit, with its built dist/ (as a release commit
  // could carry it), so that the `prepare` build pre-commit's npm install runs finds its inputs
  // unchanged and is skipped (the build has tests of its own; a full one here is a minute).
  const hookRepo = join(scratch, 'hook-repo');
  mkdirSync(hookRepo);
  const inHookRepo = { GIT_DIR: join(hookRepo, '.git'), GIT_WORK_TREE: REPO_ROOT };
  git(hookRepo, ['init', '-q'], inHookRepo);
  git(REPO_ROOT, ['add', '-A'], inHookRepo);
  git(REPO_ROOT, ['add', '-f', 'dist', 'packages/check/dist'], inHookRepo);
  git(REPO_ROOT, ['commit', '-q', '-m', 'hook'], inHookRepo);
  const rev = git(REPO_ROOT, ['rev-parse', 'HEAD'], inHookRepo);

  // proc-leash-check of this work tree, for the hook's additional_dependencies: the manifest names
  // the release on npm, which is this code only once it is published.
  const packed = run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', scratch], join(REPO_ROOT, 'packages/check'), env);
  assert.equal(packed.status, 0, describeResult(packed));
  const checkTarball = join(scratch, packed.stdout.trim().split('\n').at(-1)!);

  // A fresh repository that adds the hook as a user would, plus the two lines this test needs:
  // the check's tarball, and the system's Node (nodeenv must not download one).
  const user = join(scratch, 'user-repo');
  mkdirSync(user);
  git(user, ['init', '-q']);
  writeFileSync(
    join(user, '.pre-commit-config.yaml'),
    `repos:\n- repo: ${hookRepo}\n  rev: ${rev}\n  hooks:\n  - id: leash-check\n` +
      `    additional_dependencies: [${JSON.stringify(checkTarball)}]\n    language_version: system\n`,
  );
  const installed = run('pre-commit', ['install'], user, env);
  assert.equal(installed.status, 0, describeResult(installed));

  mkdirSync(join(user, 'app'));
  writeFileSync(join(user, 'app/run.py'), PYTHON_DETACHED);
  writeFileSync(join(user, 'app/spawn.mjs'), JS_DETACHED);
  git(user, ['add', '.']);
  const blocked = run('git', ['-c', 'user.name=t', '-c', 'user.email=t@leash.invalid', 'commit', '-m', 'detached'], user, env, 170_000);
  const output = blocked.stdout + blocked.stderr;
  if (blocked.status !== 0 && OFFLINE.test(output) && !/leash check \(detached spawns\)/.test(output)) {
    t.skip(`SKIP: npm could not fetch what its cache lacks to install the hook (${OFFLINE.exec(output)![0]})`);
    return;
  }
  // The hook really ran: its report names both files, and the commit was refused.
  assert.match(output, /leash check \(detached spawns\)\.+Failed/, describeResult(blocked));
  assert.match(output, /app\/run\.py:3:\d+ py-new-session/);
  assert.match(output, /app\/spawn\.mjs:2:\d+ js-/);
  assert.notEqual(blocked.status, 0);
  assert.notEqual(run('git', ['rev-parse', '--verify', '-q', 'HEAD'], user, env).status, 0, 'the commit was made');

  // A clean change passes: the spawn without its flag, and a test file the check skips.
  writeFileSync(join(user, 'app/run.py'), 'import subprocess\n\nsubprocess.Popen(["sleep", "1"])\n');
  git(user, ['rm', '-q', '--cached', 'app/spawn.mjs']);
  rmSync(join(user, 'app/spawn.mjs'));
  mkdirSync(join(user, 'tests'));
  writeFileSync(join(user, 'tests/test_run.py'), PYTHON_DETACHED);
  git(user, ['add', '.']);
  const passed = run('git', ['-c', 'user.name=t', '-c', 'user.email=t@leash.invalid', 'commit', '-m', 'clean'], user, env, 60_000);
  assert.equal(passed.status, 0, describeResult(passed));
  assert.match(passed.stdout + passed.stderr, /leash check \(detached spawns\)\.+Passed/);
  assert.equal(git(user, ['show', '--name-only', '--format=', 'HEAD']).split('\n').sort().join(' '), '.pre-commit-config.yaml app/run.py tests/test_run.py');
});
