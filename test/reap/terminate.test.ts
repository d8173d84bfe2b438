// Ending trees: a listed process whose pid now names another process (a different start time)
// is never signalled; the processes the scan saw get SIGTERM, then SIGKILL after the grace.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { LeakedTree, TreeMember } from '../../src/reap/scan.js';
import { endTrees } from '../../src/reap/terminate.js';
import { loadNative } from '../../src/sys/native.js';
import { isProcessAlive } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { exited, killMarked, newMark, startFixture } from '../helpers/processes.js';
import { ReadyDir } from './harness.js';

function treeOf(members: TreeMember[]): LeakedTree {
  const top = members[0]!;
  return {
    pid: top.pid,
    startTime: top.startTime,
    command: 'idle',
    ageSeconds: 0,
    parent: { pid: 1, command: 'init' },
    reasons: ['stdin-no-writer'],
    unproven: [],
    members,
    rssKb: 0,
  };
}

/** A test's marked idle fixtures, each reporting its pid by role, all ended after the test. */
async function idleFixtures(t: TestContext) {
  await loadNative();
  const mark = newMark();
  const ready = new ReadyDir();
  t.after(async () => {
    await killMarked(mark);
    ready.remove();
  });
  const start = (role: string) => startFixture('reap/idle.mjs', ['marker', role], mark, { extraEnv: { LEASH_REAP_READY_DIR: ready.path } });
  const member = async (role: string, shift = 0) => {
    const pid = await ready.pid(role);
    return { pid, startTime: readProcStat(pid)!.startTime + shift, command: role, rssKb: 0 };
  };
  return { start, member };
}

test('a recycled pid is never signalled; the real processes get TERM, then KILL after the grace', async (t) => {
  const { start, member } = await idleFixtures(t);
  const stubborn = start('ignore-term');
  const bystander = start('recycled');
  // The bystander stands for a process that took the pid of a listed member that died since
  // the scan: same pid, another start time.
  const tree = treeOf([await member('ignore-term'), await member('recycled', 1)]);

  const [outcome] = await endTrees([tree], 300);
  assert.equal(outcome!.result, 'ended');
  assert.equal(outcome!.signalled, 1, 'only the process the scan saw was signalled');
  assert.equal(outcome!.killed, 1, 'it ignored SIGTERM, so it took SIGKILL after the grace');
  assert.equal((await exited(stubborn)).signal, 'SIGKILL');
  assert.ok(isProcessAlive(bystander.pid!), 'the process now at the recycled pid is untouched');

  // A tree whose top is no longer the process the scan saw is left alone entirely.
  const [stale] = await endTrees([treeOf([{ ...(await member('recycled')), startTime: 1 }])], 200);
  assert.equal(stale!.signalled, 0);
  assert.ok(isProcessAlive(bystander.pid!));
});

// The top of a listed tree may exit between the scan and --kill (a wrapper that leaves), while
// what it started runs on. Those members are still the processes the scan judged (their start
// times prove it): they are ended. They used to be skipped with the top, and the tree reported
// 'ended' ("nothing of it runs") while they ran.
test('a tree whose top exited since the scan: its members are still ended, and the result says so', async (t) => {
  const { start, member } = await idleFixtures(t);
  const top = start('top');
  const child = start('member');
  const tree = treeOf([await member('top'), await member('member')]);
  top.kill('SIGKILL');
  await exited(top);

  const [outcome] = await endTrees([tree], 300);
  assert.equal(outcome!.signalled, 1, 'the member the scan saw was signalled');
  assert.equal((await exited(child)).signal, 'SIGTERM');
  assert.equal(outcome!.result, 'ended');
});
