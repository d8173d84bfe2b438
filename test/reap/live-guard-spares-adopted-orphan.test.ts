// `leash reap` must know a live death supervisor by its `--owner-token T` flag, whatever runs it.
// The supervisors leash itself starts (owner library, leash run's guard) run as `node --v8-pool-size=0 .../supervisor.cjs
// --parent-pgid P --grace-ms G --owner-token T`: no such word. So an adopted orphan inside a
// *live* `leash run` (or a daemonised grandchild of a live owner) is listed as "leash owner and
// supervisor gone", and `--kill` ends it under its living owner.
// Fails without the fix (supervisors recognised by `supervise` in argv): the orphan is listed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { guardOf, markedScratch, startLeash } from '../helpers/leash-run.js';
import { markedPidRunning } from '../helpers/processes.js';
import { runReap } from '../reap/harness.js';
import { cgroupOf } from '../helpers/cgroup.js';

test('leash reap never lists an orphan adopted by a live leash run whose guard is alive', async (t) => {
  const { mark } = markedScratch(t);
  const marker = `review-orphan-${mark}`;
  const script = `(sh -c 'sleep 1000; : ${marker}' </dev/null >/dev/null 2>&1 &); exec sleep 1000`;
  const leash = startLeash(['run', '--', 'sh', '-c', script], mark);
  const leashPid = leash.child.pid as number;
  assert.ok(
    // The orphan itself (leash run's own command line holds the marker too).
    await waitUntil(() => markedPidRunning(mark, `sh -c sleep 1000; : ${marker}`) !== undefined, 10_000),
    `no orphan: ${leash.stderr()}`,
  );
  assert.ok(guardOf(leashPid) !== undefined, 'leash run has its guard');
  // Listing only: never --kill here.
  const listed = runReap(['--match', marker]);
  assert.deepEqual(listed.report.trees.map((tree) => [tree.pid, tree.reasons]), [], 'a live owner and a live guard: nothing leaked');
  assert.equal(listed.code, 0);
});

// The same orphan with a stdout whose reader is gone (its pipeline partner exited): cut off, but
// inside a tree whose owner lives (its token's supervisor runs). It used to be listed, and
// `--kill` would have ended it under its living `leash run`.
test('leash reap never lists a cut-off orphan whose owner token still has a live supervisor', async (t) => {
  const { mark } = markedScratch(t);
  const marker = `review-cut-off-${mark}`;
  const script = `(sh -c 'sleep 1000; : ${marker}' </dev/null 2>/dev/null | true &); exec sleep 1000`;
  // The owner token's supervisor is the process tree's guard (contained, there is no token).
  const leash = startLeash(['run', '--', 'sh', '-c', script], mark, { LEASH_CONTAINMENT: 'tree' });
  const leashPid = leash.child.pid as number;
  const orphan = () => markedPidRunning(mark, `sh -c sleep 1000; : ${marker}`);
  assert.ok(await waitUntil(() => orphan() !== undefined && readProcStat(orphan()!)?.ppid === leashPid, 10_000), `no orphan: ${leash.stderr()}`);
  assert.ok(guardOf(leashPid) !== undefined, 'leash run has its guard');
  // Listing only: never --kill here.
  const listed = runReap(['--match', marker]);
  assert.deepEqual(listed.report.trees.map((tree) => [tree.pid, tree.reasons]), [], 'a live owner and a live guard: nothing leaked');
  assert.equal(listed.code, 0);
});

// Contained in a cgroup there is no owner token: the live `leash run` whose cgroup holds the
// orphan answers for it. Listed (stdout-no-reader) before reap knew the run cgroups.
test('leash reap never lists a cut-off orphan in the cgroup of a live leash run', async (t) => {
  const { mark } = markedScratch(t);
  const marker = `review-cut-off-cgroup-${mark}`;
  const script = `(sh -c 'sleep 1000; : ${marker}' </dev/null 2>/dev/null | true &); exec sleep 1000`;
  const leash = startLeash(['run', '--', 'sh', '-c', script], mark, { LEASH_CONTAINMENT: 'auto' });
  const orphan = () => markedPidRunning(mark, `sh -c sleep 1000; : ${marker}`);
  assert.ok(await waitUntil(() => /containment: /.test(leash.stderr()), 10_000), leash.stderr());
  if (!/containment: cgroup v2/.test(leash.stderr())) {
    t.skip(`no cgroup here: ${leash.stderr().split('\n')[0]}`);
    return;
  }
  // Orphaned: its parent is outside the run's cgroup. leash, or init for an orphan made before
  // leash became a subreaper (before the command starts, in both containments: subreaper-first.test.ts).
  const orphaned = () => {
    const pid = orphan();
    const parent = pid === undefined ? undefined : readProcStat(pid)?.ppid;
    return pid !== undefined && parent !== undefined && cgroupOf(parent) !== cgroupOf(pid);
  };
  assert.ok(await waitUntil(orphaned, 10_000), `no orphan: ${leash.stderr()}`);
  const listed = runReap(['--match', marker]);
  assert.deepEqual(listed.report.trees.map((tree) => [tree.pid, tree.reasons]), [], 'a live leash run holds it: nothing leaked');
  assert.equal(listed.code, 0);
});
