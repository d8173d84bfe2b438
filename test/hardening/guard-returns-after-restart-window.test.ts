// SupervisorLink replaces a dead supervisor at most 5 times in 10 s, then gives up for a while.
// leash run registers only when a new process group appears, so a give-up that lasted "until the
// next registration" left a steady tree unguarded for good after six quick deaths of its guard
// (a same-user script, a cgroup OOM kill that keeps picking it, ...). Once the window has room
// the link starts a guard again by itself, and a SIGKILL of leash run then takes the tree down.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { guardOf, liveDescendantsOf, markedScratch, startLeash } from '../helpers/leash-run.js';
import { exited, waitForGone } from '../helpers/processes.js';

test('leash run is guarded again once its guard stops dying', async (t) => {
  const { mark } = markedScratch(t);
  // The process tree's guard (a death supervisor and its restart window).
  const leash = startLeash(['run', '--grace', '1', '--', 'sh', '-c', 'sleep 1005'], mark, { LEASH_CONTAINMENT: 'tree' });
  const pid = leash.child.pid as number;
  assert.ok(await waitUntil(() => liveDescendantsOf(pid).length >= 2 && guardOf(pid) !== undefined, 10_000), leash.stderr());
  const tree = liveDescendantsOf(pid);
  for (let kills = 0; kills < 6; kills += 1) {
    const guard = guardOf(pid);
    if (guard !== undefined) {
      signalProcess(guard, 'SIGKILL');
      await waitForGone([guard], 5000);
    }
    await waitUntil(() => guardOf(pid) !== undefined, 2000);
  }
  // The sixth death made the link give up; once the 10 s window has room it starts a guard again.
  assert.ok(await waitUntil(() => guardOf(pid) !== undefined, 15_000), `no guard came back; leash said: ${leash.stderr()}`);
  signalProcess(pid, 'SIGKILL');
  await exited(leash.child);
  assert.ok(await waitForGone(tree, 10_000), `the tree outlived leash run; leash said: ${leash.stderr()}`);
});
