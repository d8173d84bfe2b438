// The stranger case (issue 19): an owned group whose leader exited while a member lived on; the
// member exits, and a stranger's double-fork daemon takes the group's number with no leader. The
// number answers a probe, but nothing in it is ours: the owner's death (the supervisor),
// terminateOwned and leash run's guard must leave the stranger alone. Forced in a private pid
// namespace through ns_last_pid (root only).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { exited, FIXTURES, JsonLines, killMarked, LIBRARY_ENTRY, markedEnv, newMark } from '../helpers/processes.js';
import { GROUP_PATHS, type GroupPath } from '../helpers/group-paths.js';

const canUnshare =
  process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
const skip = canUnshare ? false : 'needs root and unshare --pid';

interface Outcome {
  pgid: number;
  stranger: number;
  reused: boolean;
  strangerAlive: boolean;
  controlAlive: boolean;
  result: { empty: boolean; escalated: boolean } | null;
  ownerPidfds: number;
  supervisorPidfds: number;
  replacement: { supervisor: number; supervisorPidfds: number } | null;
  error?: string;
}

async function runStranger(scenario: 'owner-death' | 'terminate' | 'guard-death' | 'replay', path: GroupPath): Promise<Outcome> {
  const mark = newMark();
  try {
    const run = spawn('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, FIXTURES + 'stranger-group.mjs', scenario], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: markedEnv(mark, { LEASH_LIBRARY: LIBRARY_ENTRY, ...path.env }),
    });
    let stderr = '';
    run.stderr.setEncoding('utf8');
    run.stderr.on('data', (chunk: string) => (stderr += chunk));
    const outcome = await new JsonLines(run).next<Outcome>(40_000);
    assert.equal(outcome.error, undefined);
    // The case really happened: the stranger's daemon is in a group with the owned number, no leader.
    assert.equal(outcome.reused, true, 'the stranger did not take the group number');
    assert.equal((await exited(run)).code, 0);
    const notice = new RegExp(`process group ${outcome.pgid} lost its leader and none of its 1 live member\\(s\\) is provably ours`);
    if (path.handles && scenario !== 'guard-death') {
      // The owner held the group by a pidfd from its spawn on: the pidfd says the group is gone,
      // whoever has the number now. Nothing to report.
      assert.ok(outcome.ownerPidfds >= 2, 'the owner held no pidfd for its groups');
      assert.ok(outcome.supervisorPidfds >= 2, 'the supervisor held no pidfd for the groups');
      assert.doesNotMatch(stderr, notice);
    } else {
      // Dropped and reported: the supervisor's notice, or the owner library's warning.
      assert.match(stderr, notice);
    }
    return outcome;
  } finally {
    await killMarked(mark);
  }
}

for (const path of GROUP_PATHS) {
  test(`[${path.name}] the owner SIGKILLed: its supervisor spares a stranger that took a leaderless group's number`, { skip }, async () => {
    const outcome = await runStranger('owner-death', path);
    assert.equal(outcome.controlAlive, false, 'the teardown did not run (the control group lives)');
    assert.equal(outcome.strangerAlive, true, 'the stranger was signalled');
  });

  test(`[${path.name}] terminateOwned of a leaderless group whose number a stranger took: the stranger lives, the group is dropped`, { skip }, async () => {
    const outcome = await runStranger('terminate', path);
    assert.equal(outcome.strangerAlive, true, 'the stranger was signalled');
    assert.equal(outcome.result?.escalated, false);
    // The pidfd says the group is gone; on the fallback the unproven stranger keeps it from reading as empty.
    if (path.handles) assert.equal(outcome.result?.empty, true);
  });

  test(`[${path.name}] the supervisor dies after a stranger took the number: the owner's replay does not hand the stranger to the replacement`, { skip }, async () => {
    const outcome = await runStranger('replay', path);
    assert.ok(outcome.replacement && outcome.replacement.supervisor > 0, 'no replacement supervisor');
    if (path.handles) assert.ok(outcome.replacement.supervisorPidfds >= 1, 'the replacement inherited no pidfd');
    assert.equal(outcome.controlAlive, false, 'the replacement\'s teardown did not run (the control group lives)');
    assert.equal(outcome.strangerAlive, true, 'the stranger was signalled');
  });

  test(`[${path.name}] leash run's guard with a group recorded without its leader: a stranger at its number survives the guard's teardown`, { skip }, async () => {
    const outcome = await runStranger('guard-death', path);
    assert.equal(outcome.controlAlive, false, 'the teardown did not run (the control group lives)');
    assert.equal(outcome.strangerAlive, true, 'the stranger was signalled');
  });
}
