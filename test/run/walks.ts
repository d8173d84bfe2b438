// When `leash run` (the process tree) walks /proc: its read syscalls move only while it walks, so
// a test can wait for the next walk, or for the sweep to settle into its quiet pace.
import { readFileSync } from 'node:fs';
import { waitUntil } from '../../src/sys/wait.js';

/** leash run's read syscalls so far: every walk reads procfs, and an idle leash reads nothing else. */
export function readCalls(pid: number): number {
  return Number(/syscr:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
}

/** One walk: when its reads began, and how many it made. */
export interface Walk {
  began: number;
  reads: number;
}

/**
 * Waits for leash's next walk: the read count moves (it began), then holds still for 100 ms (it
 * ended). Resolves with the walk, or undefined when none came within the budget.
 */
export async function nextWalk(pid: number, budgetMs: number): Promise<Walk | undefined> {
  const start = readCalls(pid);
  if (!(await waitUntil(() => readCalls(pid) !== start, budgetMs))) return undefined;
  const began = performance.now();
  let last = readCalls(pid);
  let stillSince = performance.now();
  const ended = await waitUntil(() => {
    const now = readCalls(pid);
    if (now !== last) {
      last = now;
      stillSince = performance.now();
    }
    return performance.now() - stillSince >= 100;
  }, 5000);
  return ended ? { began, reads: last - start } : undefined;
}

/**
 * Waits until the sweep keeps one pace (two equal gaps of a second or more), and resolves at the
 * last walk's end with the reads of the smallest walk seen: fewer reads than that are not a walk
 * (the leader watch reads its wake pipe and one stat file).
 */
export async function settledPace(pid: number): Promise<number> {
  let last = await nextWalk(pid, 10_000);
  let gap = 0;
  let fewest = last?.reads ?? Infinity;
  const deadline = Date.now() + 40_000;
  while (last !== undefined && Date.now() < deadline) {
    const next = await nextWalk(pid, 10_000);
    if (next === undefined) break;
    const previous = gap;
    gap = next.began - last.began;
    last = next;
    fewest = Math.min(fewest, next.reads);
    if (gap >= 900 && Math.abs(gap - previous) < gap * 0.25) return fewest;
  }
  throw new Error('leash run never settled into a quiet pace');
}

