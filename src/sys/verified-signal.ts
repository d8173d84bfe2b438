// Signals that reach only the process we mean. A pid seen in a walk may be reused by the time we
// signal it; we pin the process with a pidfd, then confirm its start time, then signal through
// the descriptor. Without pidfds the start time is checked right before kill(2), which leaves
// only a window of microseconds.
import { constants } from 'node:os';
import { closeFd, openPidfd, signalPidfd } from './native.js';
import { readProcStat } from './procfs.js';
import { signalGroup, signalProcess, type SignalOutcome } from './processes.js';

export function signalNumber(name: NodeJS.Signals): number {
  return constants.signals[name];
}

export function signalName(number: number): NodeJS.Signals | undefined {
  for (const [name, value] of Object.entries(constants.signals)) {
    if (value === number) return name as NodeJS.Signals;
  }
  return undefined;
}

/** Signals `pid` only if it is still the process that started at `startTime`. */
export function signalIfSame(pid: number, startTime: number, signal: NodeJS.Signals): SignalOutcome {
  if (pid <= 1) return 'denied';
  let fd: number | undefined;
  try {
    fd = openPidfd(pid);
  } catch {
    return 'gone'; // ESRCH: nothing left to signal
  }
  try {
    const stat = readProcStat(pid);
    if (!stat || stat.startTime !== startTime) return 'gone';
    if (fd === undefined) return signalProcess(pid, signal);
    return signalPidfd(fd, signalNumber(signal));
  } finally {
    if (fd !== undefined) closeFd(fd);
  }
}

/**
 * Signals process group `pgid` only while `witness` (a member we saw, with its start time)
 * is still that process and still in the group: a group number cannot be reused while any
 * member lives, so the witness proves the group is the one we saw.
 */
export function signalGroupWithWitness(
  pgid: number,
  witness: { pid: number; startTime: number },
  signal: NodeJS.Signals,
): SignalOutcome {
  const stat = readProcStat(witness.pid);
  if (!stat || stat.startTime !== witness.startTime || stat.pgid !== pgid) return 'gone';
  return signalGroup(pgid, signal);
}
