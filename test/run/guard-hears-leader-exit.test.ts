// Issue #28, case 6 (second half): in the process tree, a group whose leader exits and leaves a
// scrubbed member (env -i: no owner token) is registered again with the guard when the leader
// exits (a pidfd of the leader, polled), not at the next walk. The supervisor then records the
// member, so a SIGKILL of leash 0.3 s later does not leak it. Before, the guard knew the group
// only with its leader's start time until the next walk (a second or more away at the quiet pace):
// its supervisor found the leader gone and no member provably the run's, and dropped the group.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { liveDescendantsOf, markedScratch, startLeash } from '../helpers/leash-run.js';
import { exited, markedPidRunning, waitForGone } from '../helpers/processes.js';
import { readCalls, settledPace } from './walks.js';

test('tree: a leader exits leaving a scrubbed member; leash SIGKILLed 0.3 s later, before any walk: the guard ends the member', async (t) => {
  const { mark, dir } = markedScratch(t);
  const makeGroup = join(dir, 'make-group');
  const endLeader = join(dir, 'end-leader');
  execFileSync('mkfifo', [makeGroup, endLeader]);
  // The runner makes the group when told (a leader in a session of its own, with a scrubbed
  // member), waits for the leader (so it is reaped, not a zombie), then stays.
  const leader = `env -i LEASH_TEST_MARK=${mark} sleep 1001 & echo "leader $$"; read y < '${endLeader}'; exit 0`;
  const script = `read x < '${makeGroup}'; setsid sh -c '${leader.replace(/'/g, `'\\''`)}' & wait; exec sleep 1000`;
  const leash = startLeash(['run', '--grace', '1', '--', 'sh', '-c', script], mark, { LEASH_CONTAINMENT: 'tree' });
  const leashPid = leash.child.pid as number;
  assert.ok(await waitUntil(() => liveDescendantsOf(leashPid).length >= 1, 10_000), `never started: ${leash.stderr()}`);
  await settledPace(leashPid);
  writeFileSync(makeGroup, 'go\n');
  assert.ok(await waitUntil(() => /^leader \d+$/m.test(leash.stdout()), 5000), leash.stderr());
  const leaderPid = Number(/^leader (\d+)$/m.exec(leash.stdout())![1]);
  const member = () => markedPidRunning(mark, 'sleep 1001');
  assert.ok(await waitUntil(() => member() !== undefined, 5000));
  const memberPid = member() as number;
  // The group is the leader's, and the member has no token.
  assert.equal(readProcStat(memberPid)?.pgid, leaderPid);
  // A walk sees the group while its leader lives (the tree changed: the sweep comes within a
  // second), then the pace settles again: right after a walk, the next is a second or more away.
  const walkReads = await settledPace(leashPid);
  // A walk reads /proc for every process of the tree, the leader watch a few times at most.
  assert.ok(walkReads >= 8, `a walk made only ${walkReads} reads: too few to tell it from the leader watch`);
  writeFileSync(endLeader, 'go\n');
  assert.ok(await waitUntil(() => readProcStat(leaderPid) === undefined, 2000), 'the leader was not reaped');
  const readsBefore = readCalls(leashPid);
  await new Promise((resolve) => setTimeout(resolve, 300));
  // The case: no walk since the leader's exit (else a walk, not the leader watch, re-registered
  // it). The watch's own reads (its wake pipe, the group's stat) may fall in this window.
  const readsBetween = readCalls(leashPid) - readsBefore;
  assert.ok(readsBetween < walkReads / 2, `leash walked between the leader's exit and its SIGKILL (${readsBetween} reads; a walk makes ${walkReads}): the case did not happen`);
  assert.equal(readProcStat(memberPid)?.pgid, leaderPid, 'the member left its group');
  signalProcess(leashPid, 'SIGKILL');
  await exited(leash.child);
  assert.ok(await waitForGone([memberPid], 15_000), `member ${memberPid} outlived leash run (alive: ${isProcessAlive(memberPid)})`);
});
