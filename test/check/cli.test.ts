// `leash check` as a command: file listing, fail-closed git, configuration, baseline, formats, exit codes.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { killMarked, newMark, REPO_ROOT } from '../helpers/processes.js';
import { ruleDocsUrl } from 'proc-leash-check';
import { gitInit, project, runCheck } from './harness.js';

const DETACHED_TWICE = `import { spawn } from 'node:child_process';
spawn('a', [], { detached: true });
spawn('b', [], { detached: true });
`;

test('leash check', async (t) => {
  const mark = newMark();
  const dirs: string[] = [];
  t.after(async () => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await killMarked(mark);
  });
  const make = (files: Record<string, string>) => {
    const dir = project(files, 'leash-check-cli-');
    dirs.push(dir);
    return dir;
  };

  await t.test('fails closed with exit 2 when git cannot list the files', async () => {
    const dir = make({ 'src/a.mjs': DETACHED_TWICE });
    const run = await runCheck([], dir, mark, { GIT_CEILING_DIRECTORIES: tmpdir() });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /cannot list the tracked files with git/);
    assert.equal(run.stdout, '');
  });

  await t.test('checks tracked files, skips tests, fixtures, vendored code and configured helpers', async () => {
    const dir = make({
      'src/a.mjs': DETACHED_TWICE,
      'src/helper.mjs': DETACHED_TWICE,
      'test/a.mjs': DETACHED_TWICE,
      'src/a.test.mjs': DETACHED_TWICE,
      'lib/fixtures/x.mjs': DETACHED_TWICE,
      'tools/test_x.py': 'import os\nos.setsid()\n',
      'node_modules/m/index.js': DETACHED_TWICE,
      '.yarn/releases/yarn-4.1.0.cjs': DETACHED_TWICE,
      'app/main.py': 'import os\nos.setsid()\n',
      '.leash-check.json': JSON.stringify({ helpers: ['src/helper.mjs'] }),
    });
    gitInit(dir);
    writeFileSync(join(dir, 'src/untracked.mjs'), DETACHED_TWICE);
    const run = await runCheck(['--format', 'json'], dir, mark);
    assert.equal(run.code, 1, run.stderr);
    const paths = (JSON.parse(run.stdout) as { findings: Array<{ path: string }> }).findings.map((f) => f.path);
    assert.deepEqual([...new Set(paths)].sort(), ['app/main.py', 'src/a.mjs']);
  });

  await t.test('exits 0 on a clean tree and 2 on bad usage or a missing path', async () => {
    const dir = make({ 'src/ok.mjs': "import { spawn } from 'node:child_process';\nspawn('a', []);\n" });
    assert.equal((await runCheck(['src'], dir, mark)).code, 0);
    const bad = await runCheck(['--format', 'xml'], dir, mark);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown format 'xml'/);
    assert.equal((await runCheck(['--bogus'], dir, mark)).code, 2);
    const missing = await runCheck(['nope.ts'], dir, mark);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read nope.ts: ENOENT/);
  });

  await t.test('baseline: tolerates up to its count, reports all above it, flags stale counts', async () => {
    const dir = make({ 'src/a.mjs': DETACHED_TWICE });
    const printed = await runCheck(['--print-baseline', 'src'], dir, mark);
    assert.equal(printed.code, 0);
    assert.deepEqual(JSON.parse(printed.stdout), { version: 1, files: { 'src/a.mjs': { 'js-detached-spawn': 2 } } });
    writeFileSync(join(dir, '.leash-check-baseline.json'), printed.stdout);
    assert.equal((await runCheck(['src'], dir, mark)).code, 0);
    assert.equal((await runCheck(['--all', 'src'], dir, mark)).code, 1);

    writeFileSync(join(dir, 'src/a.mjs'), `${DETACHED_TWICE}spawn('c', [], { detached: true });\n`);
    const above = await runCheck(['--format', 'json', 'src'], dir, mark);
    assert.equal(above.code, 1);
    assert.equal((JSON.parse(above.stdout) as { findings: unknown[] }).findings.length, 3);

    writeFileSync(join(dir, 'src/a.mjs'), "import { spawn } from 'node:child_process';\nspawn('a', [], { detached: true });\n");
    const stale = await runCheck(['src'], dir, mark);
    assert.equal(stale.code, 0);
    assert.match(stale.stdout, /1 js-detached-spawn finding\(s\) left, the baseline allows 2/);
    assert.equal((await runCheck(['--strict-baseline', 'src'], dir, mark)).code, 1);
    assert.equal((await runCheck(['--baseline', 'missing.json', 'src'], dir, mark)).code, 2);
  });

  await t.test('formats: text with the fix, SARIF keeping suppressed findings, GitHub annotations', async () => {
    const dir = make({
      'src/a.mjs': `import { spawn } from 'node:child_process';\nspawn('a', [], { detached: true });\n// detached-spawn: ok — outlives us on purpose\nspawn('b', [], { detached: true });\n`,
    });
    const text = await runCheck(['src'], dir, mark);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /^src\/a\.mjs:2:1 js-detached-spawn /m);
    assert.match(text.stdout, /spawnOwned.*ownProcessGroup.*detached-spawn: ok — <reason>/);

    const sarif = JSON.parse((await runCheck(['--format', 'sarif', 'src'], dir, mark)).stdout);
    assert.equal(sarif.version, '2.1.0');
    const results = sarif.runs[0].results as Array<{ locations: Array<{ physicalLocation: { region: { startLine: number } } }>; suppressions?: Array<{ kind: string; justification: string }> }>;
    assert.equal(results.length, 2);
    const exempt = results.find((r) => r.locations[0]?.physicalLocation.region.startLine === 4);
    assert.deepEqual(exempt?.suppressions, [{ kind: 'inSource', justification: 'outlives us on purpose' }]);

    const github = await runCheck(['src'], dir, mark, { GITHUB_ACTIONS: 'true' });
    assert.equal(github.code, 1);
    assert.match(github.stdout, /^::error file=src\/a\.mjs,line=2,col=1,title=leash js-detached-spawn::/m);
    assert.ok(github.stdout.includes(`(${ruleDocsUrl('js-detached-spawn')})\n`), 'each annotation links its rule\'s docs');
    // One annotation per finding, and the fix said once for the run, not on every annotation.
    assert.equal(github.stdout.split('\n').filter((l) => l.startsWith('::error')).length, 1);
    assert.equal(github.stdout.split('spawnOwned').length - 1, 1);
  });

  await t.test('summaries say what failed: a stale strict baseline, parse errors apart from spawns; a baseline cannot absorb a parse error', async () => {
    const dir = make({ 'src/a.mjs': DETACHED_TWICE });
    writeFileSync(join(dir, '.leash-check-baseline.json'), JSON.stringify({ version: 1, files: { 'src/a.mjs': { 'js-detached-spawn': 3 } } }));
    const strict = await runCheck(['--strict-baseline', 'src'], dir, mark);
    assert.equal(strict.code, 1);
    assert.doesNotMatch(strict.stdout, /no detached spawns/);
    assert.match(strict.stdout, /a stale baseline \(--strict-baseline\)/);

    const broken = make({ 'src/broken.py': 'word = "setsid"\ndef f(:\n    pass\n', 'src/a.mjs': DETACHED_TWICE });
    const text = await runCheck(['--all', 'src'], broken, mark);
    assert.match(text.stdout, /^2 detached spawn finding\(s\), 1 file\(s\) that could not be parsed \(/m);
    const printed = await runCheck(['--print-baseline', 'src'], broken, mark);
    assert.deepEqual(JSON.parse(printed.stdout).files, { 'src/a.mjs': { 'js-detached-spawn': 2 } });
    writeFileSync(join(broken, '.leash-check-baseline.json'), JSON.stringify({ version: 1, files: { 'src/broken.py': { 'parse-error': 1 }, 'src/a.mjs': { 'js-detached-spawn': 2 } } }));
    const absorbed = await runCheck(['--format', 'json', 'src'], broken, mark);
    assert.equal(absorbed.code, 1);
    const report = JSON.parse(absorbed.stdout) as { findings: Array<{ rule: string }>; advisories: string[] };
    assert.deepEqual(report.findings.map((f) => f.rule), ['parse-error']);
    assert.match(report.advisories.join('\n'), /parse-error, which a baseline cannot tolerate/);
  });

  await t.test('SARIF names the tool version', async () => {
    const dir = make({ 'src/a.mjs': DETACHED_TWICE });
    const sarif = JSON.parse((await runCheck(['--format', 'sarif', 'src'], dir, mark)).stdout);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'packages/check/package.json'), 'utf8')) as { version: string };
    assert.equal(sarif.runs[0].tool.driver.version, pkg.version);
    assert.equal(sarif.runs[0].tool.driver.rules[0].helpUri, ruleDocsUrl(sarif.runs[0].tool.driver.rules[0].id));
  });

  await t.test('an unparseable file is a finding, not a silent skip', async () => {
    const dir = make({ 'src/broken.py': 'import os\ndef f(:\n    os.setsid()\n' });
    const run = await runCheck(['--format', 'json', 'src'], dir, mark);
    assert.equal(run.code, 1);
    const rules = (JSON.parse(run.stdout) as { findings: Array<{ rule: string }> }).findings.map((f) => f.rule);
    assert.ok(rules.includes('parse-error'), rules.join());
  });

  await t.test("a project's own copy of a PTY library is reported where it spawns, not at its callers", async () => {
    // extraterm's PTY server, run as a script, imports the ptyprocess copy beside it. The same
    // import with no copy beside it is the library's, and a PTY spawn by its `dimensions`.
    const call = 'import ptyprocess\n\npty = ptyprocess.PtyProcess.spawn(["bash"], dimensions=(24, 80))\n';
    const dir = make({
      'server/ptyprocess/__init__.py': 'from .ptyprocess import PtyProcess\n',
      'server/ptyprocess/ptyprocess.py': 'import pty\n\n\nclass PtyProcess:\n    @classmethod\n    def spawn(cls, argv, dimensions=None):\n        pid, fd = pty.fork()\n        return pid\n',
      'server/main.py': call,
      'client/main.py': call,
      'local/pexpect.py': 'def spawn(cmd):\n    return cmd\n',
      'local/run.py': 'import pexpect\n\npexpect.spawn("ssh host")\n',
    });
    const run = await runCheck(['--format', 'json', '.'], dir, mark);
    assert.equal(run.code, 1, run.stderr);
    const findings = (JSON.parse(run.stdout) as { findings: Array<{ path: string; line: number; rule: string }> }).findings;
    assert.deepEqual(findings.map((f) => `${f.path}:${f.line} ${f.rule}`).sort(), ['client/main.py:3 py-pty', 'server/ptyprocess/ptyprocess.py:7 py-pty']);

    // In a package, `import pexpect` finds the installed library whatever lies beside the module:
    // a planted pexpect.py there hides nothing.
    const planted = make({ 'pkg/__init__.py': '', 'pkg/pexpect.py': 'def spawn(cmd):\n    return cmd\n', 'pkg/run.py': 'import pexpect\n\npexpect.spawn("ssh host")\n' });
    const seen = await runCheck(['--format', 'json', '.'], planted, mark);
    assert.equal(seen.code, 1, seen.stderr);
    assert.deepEqual((JSON.parse(seen.stdout) as { findings: Array<{ path: string; line: number; rule: string }> }).findings.map((f) => `${f.path}:${f.line} ${f.rule}`), ['pkg/run.py:3 py-pty']);
  });

  await t.test('this repository passes its own check', async () => {
    const run = await runCheck([], REPO_ROOT, mark);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  });
});
