// What `leash reap` prints when nothing matches, its help, and the container flag.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { CLI_ENTRY, newMark } from '../helpers/processes.js';

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
