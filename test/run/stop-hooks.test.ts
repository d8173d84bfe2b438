// The room the stop leaves for what a run holds beyond its processes (containers: issue #32):
// `beforeStop` is called once as a stop begins, with its signal and the grace; `afterStop` once
// the tree is empty, and leash's run ends only after it settles. The supervisor runs in this test's
// own process (a test file is a process of its own): tree containment, no guard.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { TreeSupervisor } from '../../src/run/supervisor.js';
import { loadNative } from '../../src/sys/native.js';
import { markedScratch } from '../helpers/leash-run.js';
import { markedPids, MARK_VARIABLE } from '../helpers/processes.js';

test('beforeStop once with the signal and the grace; afterStop awaited before the run ends', async (t) => {
  const { mark } = markedScratch(t);
  assert.ok(await loadNative(), 'no native calls here');
  const events: string[] = [];
  const supervisor = new TreeSupervisor({
    command: 'sh',
    // The runner exits and leaves a sleeper: the stop begins with SIGTERM.
    args: ['-c', 'sleep 30 & exit 0'],
    graceMs: 2000,
    dieWithParent: false,
    log: () => undefined,
    beforeStop: (signal, graceMs) => events.push(`before ${signal} ${graceMs} ${markedPids(mark).length}`),
    afterStop: async () => {
      events.push(`after, left ${markedPids(mark).length}`);
      await delay(200);
      events.push('after settled');
    },
  });
  process.env[MARK_VARIABLE] = mark;
  const code = await supervisor.run();
  events.push(`run ${code} ${supervisor.phase}`);
  // The sleeper lived when the stop began, and was gone when afterStop was called.
  assert.deepEqual(events, ['before SIGTERM 2000 1', 'after, left 0', 'after settled', 'run 0 exited']);
});
