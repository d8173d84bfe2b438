// The /proc/*/environ scan of processes.ts, done in slices so that an owner's event loop is never
// held for long (reading 1,000 environments takes ~100 ms). Linux only; elsewhere: empty.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { hasProcfs, listPids } from './procfs.js';
import { environmentCarrier, type ProcessMark } from './processes.js';

/** Processes looked at per slice before the event loop gets a turn. */
const SLICE = 32;

/**
 * Live processes of this uid (other than this one) whose initial environment holds the entry
 * `NAME=value`: findEnvironmentCarriers, a slice at a time.
 */
export async function findEnvironmentCarriersInSlices(entry: string): Promise<ProcessMark[]> {
  if (!hasProcfs()) return [];
  const uid = process.getuid?.();
  const found: ProcessMark[] = [];
  const pids = listPids();
  for (let start = 0; start < pids.length; start += SLICE) {
    if (start > 0) await yieldToLoop();
    const end = Math.min(pids.length, start + SLICE);
    for (let i = start; i < end; i += 1) {
      const mark = environmentCarrier(pids[i]!, entry, uid);
      if (mark) found.push(mark);
    }
  }
  return found;
}
