// The event-loop stall of a piece of work, as the benches measure it: the largest gap, beyond its
// 1 ms period, between two runs of a 1 ms interval timer (and up to the end of the work).
export async function timedWithStall(work: () => Promise<void> | void): Promise<{ totalMs: number; stallMs: number }> {
  let worst = 0;
  let last = performance.now();
  const note = () => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  };
  const timer = setInterval(note, 1);
  const began = performance.now();
  try {
    await work();
    note();
  } finally {
    clearInterval(timer);
  }
  return { totalMs: performance.now() - began, stallMs: Math.max(0, worst) };
}

/** Runs `work`, returning the longest event-loop stall it caused, in ms. */
export async function worstStall(work: () => Promise<void> | void): Promise<number> {
  return (await timedWithStall(work)).stallMs;
}
