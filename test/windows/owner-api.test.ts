// The owner library's API on Windows: terminateOwned, ownProcessGroup (a pid there),
// releaseProcessGroup, and what joining the owner job does to the owner's other children.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, test } from 'node:test';
import { killFromLinux, killMarked, linuxPidsWith, ownerLinuxPid, startScenario, waitUntil } from './helpers.js';

const marks: string[] = [];
after(async () => {
  for (const mark of marks) await killMarked(mark);
});

function scenario(name: string) {
  const run = startScenario(name);
  marks.push(run.mark);
  return run;
}

/** Kills the scenario's owner from Linux (kill -9) and waits for its exit. */
async function killOwner(run: ReturnType<typeof scenario>): Promise<void> {
  const exited = once(run.owner, 'exit');
  const pid = ownerLinuxPid(run);
  assert.ok(pid, 'the owner is not visible from Linux');
  assert.ok(await killFromLinux([pid]));
  await exited;
}

const count = (mark: string, role: string) => linuxPidsWith(`${mark}-${role}`).length;

test('terminateOwned ends one child tree that ignores console control events, and only that one', async () => {
  const run = scenario('terminate');
  assert.deepEqual((await run.next()).ready, true);
  // cmd.exe and its node grandchild, plus the other owned child.
  assert.ok(await waitUntil(() => count(run.mark, 'target') === 2 && count(run.mark, 'other') === 1, 90_000));
  run.owner.stdin?.write('go\n');
  const seen = await run.next();
  const result = seen.result as Record<string, unknown>;
  assert.equal(result.owned, true);
  assert.equal(result.empty, true, 'terminateOwned resolved before the job was empty');
  assert.equal(result.escalated, true, 'the ignoring child can only have been ended by TerminateJobObject');
  assert.equal((seen.again as Record<string, unknown>).owned, false, 'a terminated child is forgotten');
  // The job is empty in wineserver's view when terminateOwned resolves; the Linux processes that
  // carried the killed Windows ones end a moment later (wineserver signals them asynchronously:
  // one CI run in many saw the grandchild's still there at once). A deadline, not a retry.
  assert.ok(await waitUntil(() => count(run.mark, 'target') === 0, 5_000), 'the grandchild through cmd.exe survived terminateOwned');
  assert.equal(count(run.mark, 'other'), 1, 'terminateOwned ended another owned child');
  assert.deepEqual(seen.owned, [seen.otherPid]);
  assert.equal(seen.supervisor, null, 'no supervisor process on Windows');
  await killOwner(run);
  assert.ok(await waitUntil(() => count(run.mark, 'other') === 0, 10_000), 'the other child outlived the owner');
});

test('ownProcessGroup owns a plainly spawned detached pid; releaseProcessGroup lets one go', async () => {
  const run = scenario('own-and-release');
  const seen = await run.next();
  assert.equal(seen.ownedKept, true);
  assert.equal(seen.ownedReleased, true);
  assert.equal(seen.releasedResult, true);
  assert.equal(seen.releaseUnknown, false, 'a released pid is no longer owned');
  assert.equal(seen.ownSelf, false);
  assert.equal(seen.ownNothing, false);
  assert.deepEqual(seen.warnings, ['LEASH_UNSAFE_GROUP', 'LEASH_NO_GROUP']);
  assert.equal((seen.owned as number[]).length, 1);
  await killOwner(run);
  // The owned one goes with the owner; the released one (detached, in no job) stays.
  assert.ok(await waitUntil(() => count(run.mark, 'kept') === 0, 10_000), 'the owned pid outlived the owner');
  assert.ok(!(await waitUntil(() => count(run.mark, 'released') === 0, 1500)), 'the released pid died with the owner');
});

test('releaseProcessGroup refuses a child started inside the owner job (it cannot leave it)', async () => {
  const run = scenario('release-inside');
  const seen = await run.next();
  assert.equal(seen.released, false);
  assert.deepEqual(seen.warnings, ['LEASH_UNSUPPORTED_PLATFORM']);
  assert.equal((seen.owned as number[]).length, 1, 'still owned after the refused release');
  await killOwner(run);
  assert.ok(await waitUntil(() => count(run.mark, 'inside') === 0, 10_000));
});

test("the owner job: the owner's later children die with it, detached or not; earlier detached ones do not", async () => {
  const run = scenario('other-children');
  assert.equal((await run.next()).ok, true);
  await killOwner(run);
  for (const role of ['owned', 'attached-before', 'attached-after', 'plain-after']) {
    assert.ok(await waitUntil(() => count(run.mark, role) === 0, 10_000), `${role} outlived the owner`);
  }
  assert.equal(count(run.mark, 'plain-before'), 1, 'a detached child from before the first spawnOwned is not in the owner job');
});

for (const joined of [true, false]) {
  test(joined
    ? 'the owner job ends a grandchild started before its parent was put in a job'
    : 'without the owner job, a grandchild started before its parent was put in a job escapes (why spawnOwned joins one)', async () => {
    const run = scenario(joined ? 'late-own-joined' : 'late-own');
    assert.equal((await run.next()).ready, true);
    // The raw spawner and its grandchild both carry <mark>-late.
    assert.ok(await waitUntil(() => count(run.mark, 'late') === 2, 90_000), 'the grandchild did not start');
    run.owner.stdin?.write('own\n');
    assert.equal((await run.next()).owned, true);
    await killOwner(run);
    if (joined) {
      assert.ok(await waitUntil(() => count(run.mark, 'late') === 0, 10_000), 'the early grandchild outlived the owner');
    } else {
      // The child's own job ends the child; the grandchild, in no job, is left.
      assert.ok(await waitUntil(() => count(run.mark, 'late') === 1, 10_000), 'the owned child outlived the owner');
      assert.ok(!(await waitUntil(() => count(run.mark, 'late') === 0, 1500)), 'the early grandchild died: the window is not shown');
    }
  });
}
