// A pipe end held by a process reap cannot look at (here: another user's, read by an ordinary
// user) must never read as "no writer". Real processes of two users, real pipes; nothing mocked.
// The kernel itself is asked whether the writer is gone (pipe-probe); where it cannot answer
// (bytes are waiting in the pipe), the tree is unknown: shown apart, and --kill leaves it alone
// unless --include-unknown says otherwise.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { processUid, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { IDLE, OTHER_USER_CLI, REAP_FIXTURES, idle, q, reapScratch, runReap, runShell } from './harness.js';

const CALLER_UID = 1; // daemon: runs leash reap and owns the servers
const OTHER_UID = 65534; // nobody: holds pipe ends the caller cannot see
const CROSS_USER_PIPE = `${REAP_FIXTURES}cross-user-pipe.py`;
const SUBREAPER_WITH_LEAK = `${REAP_FIXTURES}subreaper-with-leak.py`;
/** A Python the caller's user may run (root's own may sit under /root), started by path: execv does not search. */
const SYSTEM_PYTHON = '/usr/bin/python3';

/** WRITER | READER, each as its user, through a pipe the caller's user made. */
function crossUserPipe(writer: [number, string[]], reader: [number, string[]]): string {
  return ['python3', CROSS_USER_PIPE, String(writer[0]), String(reader[0]), String(CALLER_UID), ...writer[1], '--', ...reader[1]].map(q).join(' ');
}

test('a stdin fed by a process reap cannot read is never ended as leaked', { skip: process.getuid?.() !== 0 && 'needs root to start processes as two users' }, async (t) => {
  const { mark, marker, ready, byIdentity } = reapScratch(t);
  const remember = byIdentity;

  const node = (role: string) => [process.execPath, IDLE, marker, role];
  // fed: stdin a pipe whose only writer is another user's idle process.
  await runShell(crossUserPipe([OTHER_UID, node('writer')], [CALLER_UID, node('fed')]), mark, ready);
  // waiting: the same, but the writer put bytes in the pipe that were never read.
  await runShell(crossUserPipe([OTHER_UID, ['/bin/sh', '-c', `echo pending; exec ${idle(marker, 'writer2')}`]], [CALLER_UID, node('waiting')]), mark, ready);
  // read: stdin /dev/null, stdout a pipe whose only reader is another user's process.
  await runShell(crossUserPipe([CALLER_UID, node('read')], [OTHER_UID, node('reader')]), mark, ready);
  // cut: a real leak of the caller's own, its writer gone; the caller must still find it.
  await runShell(`true | ${idle(marker, 'cut')} >/dev/null 2>&1 &`, mark, ready, CALLER_UID);
  const pids = {
    writer: remember(await ready.pid('writer')),
    writer2: remember(await ready.pid('writer2')),
    fed: remember(await ready.pid('fed')),
    waiting: remember(await ready.pid('waiting')),
    cut: remember(await ready.pid('cut')),
    read: remember(await ready.pid('read')),
    reader: remember(await ready.pid('reader')),
  };
  assert.equal(processUid(pids.writer), OTHER_UID);
  assert.equal(processUid(pids.fed), CALLER_UID);
  assert.equal(processUid(pids.reader), OTHER_UID);
  for (const pid of [pids.fed, pids.waiting, pids.cut, pids.read]) assert.equal(readProcStat(pid)?.ppid, 1, 'orphaned, like a leak');

  const killed = runReap(['--match', marker, '--kill', '--grace', '1s'], CALLER_UID);
  assert.equal(killed.code, 1, killed.stderr);
  assert.ok(killed.report.blindSpot, 'other users\' descriptors are a blind spot for an ordinary user');
  // The leak is still found and ended: the kernel says its writer is gone.
  assert.deepEqual(killed.report.trees.map((tree) => [tree.pid, tree.reasons, tree.kill?.result]), [[pids.cut, ['stdin-no-writer'], 'ended']]);
  // The fed one has a writer (the kernel says so though its holder is unseen): not listed at all.
  // So has the stdout of the one that is read: it is not listed either.
  for (const pid of [pids.fed, pids.read]) assert.ok(!killed.report.unknown.some((tree) => tree.pid === pid), `${pid} is not even unknown`);
  // The one with bytes waiting cannot be decided: unknown, and left alone.
  assert.deepEqual(killed.report.unknown.map((tree) => [tree.pid, tree.reasons, tree.unproven]), [[pids.waiting, [], ['stdin-no-writer']]]);
  assert.ok(isProcessAlive(pids.fed), 'the fed process was ended');
  assert.ok(isProcessAlive(pids.read), 'the read process was ended');
  assert.ok(isProcessAlive(pids.waiting), 'the undecided process was ended without --include-unknown');
  assert.ok(!isProcessAlive(pids.cut));

  // The table: unknown trees apart, after the leaked ones, the blind spot named on stderr; exit 0.
  const table = spawnSync(
    'setpriv',
    [`--reuid=${CALLER_UID}`, `--regid=${CALLER_UID}`, '--clear-groups', process.execPath, OTHER_USER_CLI, 'reap', '--match', marker],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(table.status, 0, table.stderr);
  // The row named by its pid: the table shortens a long command line (a fixture's copied path).
  assert.match(table.stdout, new RegExp(`^0 leaked trees, 0 kB\\n\\nPID .*\\n${pids.waiting} .*stdin: no writer seen, not proven .*\\n1 unknown tree, `));
  assert.match(table.stderr, /cannot be seen here: .*not ours to read.*--include-unknown to end it too/);

  // Root reads every process: the writers are seen, nothing is unknown, nothing listed.
  const asRoot = runReap(['--match', marker]);
  assert.deepEqual([asRoot.report.trees, asRoot.report.unknown.filter((tree) => tree.pid === pids.waiting)], [[], []], asRoot.stderr);

  // Asked by name, the unknown one is ended too.
  const included = runReap(['--match', `${marker} waiting$`, '--include-unknown', '--kill', '--grace', '1s'], CALLER_UID);
  assert.deepEqual(included.report.trees.map((tree) => [tree.pid, tree.unproven, tree.kill?.result]), [[pids.waiting, ['stdin-no-writer'], 'ended']]);
  assert.deepEqual(included.report.unknown, []);
  assert.ok(isProcessAlive(pids.fed), 'the fed process survives even --include-unknown');
  signalProcess(pids.fed, 'SIGTERM');
});

test('a leaked server adopted below an unknown tree is listed once, on its own, and ended without the tree above it', { skip: (process.getuid?.() !== 0 && 'needs root to start processes as two users') || (!existsSync(SYSTEM_PYTHON) && `needs ${SYSTEM_PYTHON}`) }, async (t) => {
  const { mark, marker, ready, byIdentity } = reapScratch(t);
  const node = (role: string) => [process.execPath, IDLE, marker, role];
  // above: a subreaper whose stdin is fed by another user's writer that left bytes in the pipe
  // (undecidable: unknown); below it, adopted, a server whose stdin lost its writer (leaked).
  const above = [SYSTEM_PYTHON, SUBREAPER_WITH_LEAK, ...node('adopted'), '--', ...node('above')];
  await runShell(crossUserPipe([OTHER_UID, ['/bin/sh', '-c', `echo pending; exec ${idle(marker, 'feeder')}`]], [CALLER_UID, above]), mark, ready);
  const pids = {
    feeder: byIdentity(await ready.pid('feeder')),
    above: byIdentity(await ready.pid('above')),
    adopted: byIdentity(await ready.pid('adopted')),
  };
  assert.ok(await waitUntil(() => readProcStat(pids.adopted)?.ppid === pids.above, 10_000), 'the server was not adopted by the subreaper');

  const listed = runReap(['--match', marker], CALLER_UID);
  assert.deepEqual(listed.report.trees.map((tree) => [tree.pid, tree.reasons, tree.processes.map((m) => m.pid)]), [[pids.adopted, ['stdin-no-writer'], [pids.adopted]]], listed.stderr);
  assert.deepEqual(
    listed.report.unknown.map((tree) => [tree.pid, tree.processes.map((m) => m.pid)]),
    [[pids.above, [pids.above]]],
    'the unknown tree holds its own processes, not the leaked tree below it',
  );

  const killed = runReap(['--match', marker, '--kill', '--grace', '1s'], CALLER_UID);
  assert.deepEqual(killed.report.trees.map((tree) => [tree.pid, tree.kill?.result]), [[pids.adopted, 'ended']], killed.stderr);
  assert.ok(!isProcessAlive(pids.adopted), 'the leaked server was not ended');
  assert.ok(isProcessAlive(pids.above), 'the unknown tree above it was ended without --include-unknown');
  for (const pid of [pids.above, pids.feeder]) signalProcess(pid, 'SIGTERM');
});
