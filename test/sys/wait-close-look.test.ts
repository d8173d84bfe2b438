// waitUntil's close look: pauses of a few ms for a while, as long as each look is cheap, then the
// usual back-off. Counted in looks, not timed: a loaded machine delays every timer alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitUntil } from '../../src/sys/wait.js';

/** How many times `look` ran during a wait of `budgetMs` that never succeeds. */
async function looksDuring(budgetMs: number, look: () => void, closeLook?: Parameters<typeof waitUntil>[2]): Promise<number> {
  let looks = 0;
  const done = await waitUntil(() => {
    looks += 1;
    look();
    return false;
  }, budgetMs, closeLook);
  assert.equal(done, false);
  return looks;
}

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

test('close looks: many more looks while they are cheap, the usual few once a look is costly', async () => {
  const closeLook = { maxPauseMs: 4, forMs: 300, cheapMs: 1 };
  // The usual back-off: 2, 4, 8, 16, 32, then 50 ms: about 10 looks in 300 ms (fewer when timers
  // fire late). Close looks: about 75 quiet; on a machine whose timers fire 15 ms late, still
  // twice the usual count.
  const usual = await looksDuring(300, () => {}, undefined);
  const close = await looksDuring(300, () => {}, closeLook);
  // A look of 2 ms is costly (a /proc scan, say): it waits the usual pause.
  const costly = await looksDuring(300, () => busy(2), closeLook);
  // 11 on time. Up to a few more where timers fire early by the clock: libuv measures a timer
  // from its loop's cached time, which lags behind performance.now() after a long turn on a busy
  // machine (one CI run: 13). What this bounds is a back-off that does not grow (about 150).
  assert.ok(usual <= 16, `the usual back-off looked ${usual} times in 300 ms`);
  assert.ok(close >= usual * 1.5 + 2, `close looks: ${close}, the usual back-off: ${usual}`);
  assert.ok(costly <= usual + 2, `costly looks should back off as usual: ${costly} against ${usual}`);
});
