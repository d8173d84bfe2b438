// What `leash reap` prints when nothing matches, its help, and the container flag.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI_ENTRY, FIXTURES, newMark } from '../helpers/processes.js';
import { idle, q, reapScratch, runReap, runShell } from './harness.js';

test('nothing matching: the table says so and the exit code is 0', () => {
  const result = spawnSync(process.execPath, [CLI_ENTRY, 'reap', '--match', `no-such-process-${newMark()}`], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout, '0 leaked trees, 0 kB\n');
});

test('--help prints the options and exit codes, and exits 0', () => {
  const result = spawnSync(process.execPath, [CLI_ENTRY, 'reap', '--help'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 0);
  assert.match(result.stdout, /^usage: leash reap /);
  for (const flag of ['--json', '--match', '--older-than', '--min-memory', '--kill', '--grace']) assert.ok(result.stdout.includes(flag), flag);
  assert.match(result.stdout, /exit codes: 0 nothing found, 1 leaked trees found/);
});

const canUnshare = process.getuid?.() === 0 && spawnSync('unshare', ['-pf', '--mount-proc', 'true']).status === 0;

test('inside a new pid namespace the JSON says nestedPidNamespace', { skip: !canUnshare && 'needs root and unshare' }, () => {
  const argv = [process.execPath, CLI_ENTRY, 'reap', '--json', '--match', `no-such-process-${newMark()}`];
  const inside = spawnSync('unshare', ['-pf', '--mount-proc', ...argv], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(inside.status, 0, inside.stderr);
  assert.equal(JSON.parse(inside.stdout).nestedPidNamespace, true);
  // The control: the same command where the test runs. (Tests run in the machine's first pid
  // namespace here; elsewhere this half says nothing.)
  const outside = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 30_000 });
  const outer = JSON.parse(outside.stdout).nestedPidNamespace;
  assert.equal(typeof outer, 'boolean');
});

// A leaked process's argv is anyone's text: printed raw, a newline forges a table row and an
// escape sequence rewrites the reader's terminal. The table shows control characters as '?'
// (as ps does); --json keeps the exact text (JSON escapes it).
test('control characters in a command line never reach the table raw', async (t) => {
  const { mark, marker, ready } = reapScratch(t);
  const hostile = 'a\u001b[2J\rb\nFAKE 1 1s\u0007\u009b31m\u202ez';
  // The text is argv[0] (bash's exec -a), so that the table's 100-character clip keeps it.
  await runShell(`true | bash -c ${q(`exec -a ${q(hostile)} ${idle(marker, 'hostile')}`)} >/dev/null 2>&1 &`, mark, ready);
  const pid = await ready.pid('hostile');
  const table = spawnSync(process.execPath, [CLI_ENTRY, 'reap', '--match', marker], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(table.status, 1, table.stderr);
  const lines = table.stdout.split('\n');
  assert.equal(lines.length, 4, `header, one row, the total and the final newline: ${JSON.stringify(table.stdout)}`);
  assert.match(lines[1]!, new RegExp(`^${pid} `));
  assert.ok(lines[1]!.includes('a?[2J?b?FAKE 1 1s??31m?z'), JSON.stringify(lines[1]));
  assert.doesNotMatch(table.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
  const { report } = runReap(['--match', marker]);
  assert.ok(report.trees[0]?.command.startsWith(`${hostile} `), 'the JSON keeps the exact command line');
});

// Where the kernel refuses sock_diag, reap still judges pipes and says sockets go unjudged; it
// used to die with exit 1, which reads as "leaked trees found".
test('a refused sock_diag read is a warning, not a crash', () => {
  const hooks = pathToFileURL(join(FIXTURES, 'reap', 'no-sock-diag-hooks.mjs')).href;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks)});`;
  const result = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, CLI_ENTRY, 'reap', '--match', `no-such-process-${newMark()}`],
    { encoding: 'utf8', timeout: 30_000 },
  );
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout, '0 leaked trees, 0 kB\n');
  assert.match(result.stderr, /^leash reap: warning: .*EPROTONOSUPPORT.*stdio sockets are not judged\n$/);
});
