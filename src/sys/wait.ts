// Waiting on process state that gives no event (a group emptying, a non-child exiting):
// check, then back off from 2 ms to 50 ms (or a closer bound), always against a deadline. Every deadline here, and in
// the other waits of leash, is on the monotonic clock (performance.now), never the wall clock: a
// clock stepped back during a grace must not stretch it (a supervisor waiting an hour before its
// SIGKILL), nor one stepped forward cut it short.

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Resolves true once `done()` holds, or false when `budgetMs` runs out first. A budget that is
 * not a finite number (NaN, Infinity) is none: one look, as waitForGroupEmpty does. `closeLook`
 * keeps the pauses at most `maxPauseMs` for the first `forMs`, while a look costs less than
 * `cheapMs` (a look that had to scan /proc waits the usual pause): for an end that someone waits
 * on and that usually comes within that time. After it, the pauses are those of the usual
 * back-off at that point (50 ms by then).
 */
export async function waitUntil(
  done: () => boolean,
  budgetMs: number,
  closeLook?: { maxPauseMs: number; forMs: number; cheapMs: number },
): Promise<boolean> {
  const start = performance.now();
  const deadline = start + (Number.isFinite(budgetMs) ? Math.max(0, budgetMs) : 0);
  let pause = 2;
  for (;;) {
    const looked = performance.now();
    if (done()) return true;
    const now = performance.now();
    const left = deadline - now;
    if (left <= 0) return false;
    const close = closeLook !== undefined && now - start < closeLook.forMs && now - looked < closeLook.cheapMs;
    await sleep(Math.min(close ? Math.min(pause, closeLook.maxPauseMs) : pause, left));
    pause = Math.min(pause * 2, 50);
  }
}

const pauseCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * Blocks this thread for `ms` without spinning: the back-off of a synchronous read or write that
 * met EAGAIN on a descriptor someone made non-blocking.
 */
export function pauseSync(ms: number): void {
  Atomics.wait(pauseCell, 0, 0, ms);
}

/**
 * Runs one synchronous read or write of a descriptor until it stops failing transiently: EINTR is
 * retried at once, EAGAIN (a description someone made non-blocking) after a short pause for the
 * other end. Any other error is thrown to the caller.
 */
export function retryTransient<T>(io: () => T): T {
  for (;;) {
    try {
      return io();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') pauseSync(5);
      else if (code !== 'EINTR') throw error;
    }
  }
}
