// The waits behind a grace keep time on the monotonic clock: the wall clock stepped back an hour
// in the middle of one (NTP, an administrator, a suspended VM put right) must not stretch it, and
// a step forward must not cut it. The wall clock is the one thing faked here: a real process
// cannot step the machine's clock without stepping it for everyone on it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { waitForGroupEmpty } from '../../src/sys/group-exit.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, markedEnv, newMark } from '../helpers/processes.js';

const HOUR_MS = 3_600_000;

/**
 * Runs `body` with Date.now stepped by `stepMs` 5 ms after it starts. A wait the step stretched
 * fails here after 10 s (timers run on the monotonic clock) rather than hang the run for an hour.
 */
async function withSteppedClock<T>(stepMs: number, body: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  const start = realNow();
  Date.now = () => realNow() + (realNow() - start > 5 ? stepMs : 0);
  let guard: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      body(),
      new Promise<never>((_, reject) => {
        guard = setTimeout(() => reject(new Error('the wait was stretched by the clock step: still waiting after 10 s')), 10_000);
      }),
    ]);
  } finally {
    clearTimeout(guard);
    Date.now = realNow;
  }
}

test('a wait of 300 ms ends after about 300 ms with the wall clock stepped back or forward an hour', async () => {
  for (const step of [-HOUR_MS, HOUR_MS]) {
    const began = performance.now();
    const outcome = await withSteppedClock(step, () => waitUntil(() => false, 300));
    const took = performance.now() - began;
    assert.equal(outcome, false);
    assert.ok(took >= 290 && took < 5000, `a 300 ms wait took ${took.toFixed(0)} ms with the clock stepped ${step / HOUR_MS} h`);
  }
});

test('waiting for a group that never empties ends at its budget with the wall clock stepped back an hour', async (t) => {
  const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore', env: markedEnv(newMark()) });
  t.after(async () => {
    child.kill('SIGKILL');
    await exited(child, 10_000);
  });
  const began = performance.now();
  const empty = await withSteppedClock(-HOUR_MS, () => waitForGroupEmpty(child.pid!, 300));
  const took = performance.now() - began;
  assert.equal(empty, false);
  assert.ok(took >= 290 && took < 5000, `a 300 ms wait for the group took ${took.toFixed(0)} ms`);
});
