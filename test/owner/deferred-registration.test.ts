// spawnOwned defers its supervisor write to the end of the current turn (one write per burst).
// The groups must still be registered, with their identities, in order with what the same turn
// says about them (a release, a termination), and listed at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { hasProcfs } from '../../src/sys/procfs.js';
import { exited, JsonLines, killMarked, newMark, startFixture, waitForGone } from '../helpers/processes.js';

interface Report {
  owned: number[];
  released: number;
  terminated?: number;
  listed: boolean;
  tokenless: boolean;
  supervisor: number;
}

test('a burst of spawnOwned in one turn is registered by group: children without the token die with the owner', { skip: !hasProcfs() && 'needs /proc' }, async () => {
  const mark = newMark();
  try {
    const owner = startFixture('deferred-registration.mjs', ['20'], mark, { extraEnv: { LEASH_GRACE_MS: '500' } });
    const report = await new JsonLines(owner).next<Report>(20_000);
    assert.equal(report.owned.length, 20);
    assert.ok(report.listed, 'ownedProcessGroups did not list the burst in the turn it was spawned');
    assert.ok(report.tokenless, 'the children still carry the token: the test would prove nothing');
    assert.ok(report.terminated !== undefined, 'terminateOwned in the spawning turn did not end its group');
    for (const pid of [...report.owned, report.released]) assert.ok(isProcessAlive(pid), `pid ${pid} is not running`);
    owner.kill('SIGKILL');
    await exited(owner);
    // Only the group registrations can find these children: none carries the token any more.
    assert.ok(await waitForGone(report.owned, 10_000), `survivors: ${report.owned.filter((pid) => isProcessAlive(pid)).join(' ')}`);
    assert.ok(await waitForGone([report.supervisor], 10_000), 'the supervisor did not end');
    // Released in the spawning turn: spared, not torn down.
    assert.ok(isProcessAlive(report.released), 'the group released in its spawning turn was torn down');
    signalProcess(report.released, 'SIGKILL');
  } finally {
    await killMarked(mark);
  }
});
