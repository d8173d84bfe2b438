// Review finding: SupervisorLink replaces a dead supervisor at most 5 times in 10 s, then waits
// for "the next registration" before trying again. leash run registers only when a new process
// group appears, so after six quick deaths of its guard (a same-user script, a cgroup OOM kill
// that keeps picking it, ...) a steady tree stays unguarded for good, and a SIGKILL of leash run
// leaves it running. The window passing should bring the guard back.
// Fails on e654987: the runner outlives leash run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { guardOf, liveDescendantsOf, markedScratch, startLeash } from '../helpers/leash-run.js';
import { exited, waitForGone } from '../helpers/processes.js';

test('leash run is guarded again once its guard stops dying', async (t) => {
  const { mark } = markedScratch(t);
  const leash = startLeash(['run', '--grace', '1', '--', 'sh', '-c', 'sleep 1005'], mark);
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
  // Past the 10 s restart window a guard may be had again.
  await waitUntil(() => guardOf(pid) !== undefined, 12_000);
  signalProcess(pid, 'SIGKILL');
  await exited(leash.child);
  assert.ok(await waitForGone(tree, 10_000), `the tree outlived leash run; leash said: ${leash.stderr()}`);
});
