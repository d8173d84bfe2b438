// The /proc/*/environ scan of processes.ts, done in slices so that an owner's event loop is never
// held for long (reading 1,000 environments takes ~100 ms). Linux only; elsewhere: empty.
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { hasProcfs, listPids } from './procfs.js';
import { environmentCarrierOrEmpty, type ProcessMark } from './processes.js';

/** Processes looked at per slice before the event loop gets a turn. */
const SLICE = 32;

/**
 * The pauses before each new look at a process whose environment read empty (1 + 2 + ... + 64 =
 * 127 ms in all): an execve's window is microseconds to a few ms, even on a loaded machine. A
 * process still empty after the last one was started with no environment, and carries nothing.
 */
export const EMPTY_ENVIRON_RECHECK_MS: readonly number[] = [1, 2, 4, 8, 16, 32, 64];

/**
 * Live processes of this uid (other than this one) whose initial environment holds the entry
 * `NAME=value`: findEnvironmentCarriers, a slice at a time. A process caught in the middle of an
 * execve (its environment reads empty for that instant) is looked at again, so that a carrier
 * is never missed for having been read at the wrong moment.
 */
export async function findEnvironmentCarriersInSlices(
  entry: string,
  pausesMs: readonly number[] = EMPTY_ENVIRON_RECHECK_MS,
): Promise<ProcessMark[]> {
  if (!hasProcfs()) return [];
  const uid = process.getuid?.();
  const found: ProcessMark[] = [];
  const empty: number[] = [];
  const pids = listPids();
  for (let start = 0; start < pids.length; start += SLICE) {
    if (start > 0) await yieldToLoop();
    const end = Math.min(pids.length, start + SLICE);
    for (let i = start; i < end; i += 1) {
      const mark = environmentCarrierOrEmpty(pids[i]!, entry, uid);
      if (mark === 'empty') empty.push(pids[i]!);
      else if (mark) found.push(mark);
    }
  }
  if (empty.length > 0) found.push(...(await recheckEmptyEnvirons(empty, entry, uid, pausesMs)));
  return found;
}

/**
 * The carriers among processes whose environment read empty, each looked at again after each
 * pause until it reads otherwise or the pauses run out. In slices too: thousands of processes
 * started with no environment (anyone of the same user can make them) must not hold the loop.
 */
export async function recheckEmptyEnvirons(
  pids: readonly number[],
  entry: string,
  uid: number | undefined,
  pausesMs: readonly number[] = EMPTY_ENVIRON_RECHECK_MS,
): Promise<ProcessMark[]> {
  const found: ProcessMark[] = [];
  let waiting = [...pids];
  for (const pause of pausesMs) {
    if (waiting.length === 0) break;
    await sleep(pause);
    const still: number[] = [];
    for (const [i, pid] of waiting.entries()) {
      if (i > 0 && i % SLICE === 0) await yieldToLoop();
      const mark = environmentCarrierOrEmpty(pid, entry, uid);
      if (mark === 'empty') still.push(pid);
      else if (mark) found.push(mark);
    }
    waiting = still;
  }
  return found;
}
