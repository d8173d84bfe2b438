// Signals that reach only the process we mean. A pid seen in a walk may be reused by the time we
// signal it; we pin the process with a pidfd, then confirm its start time, then signal through
// the descriptor. Without pidfds the start time is checked right before kill(2), which leaves
// only a window of microseconds.
import { constants } from 'node:os';
import { closeFd, NativeError, openPidfd, signalPidfd } from './native.js';
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

/**
 * Signals `pid` only if it is still the process that started at `startTime`. 'gone' only when it
 * is known to be gone (or another process has the pid now); 'denied' when it could not be reached
 * or not be identified.
 */
export function signalIfSame(pid: number, startTime: number, signal: NodeJS.Signals): SignalOutcome {
  return signalPinned(pid, signal, () => {
    const stat = readProcStat(pid);
    // Unreadable while the pid still answers (no descriptor left for the read, say): its identity
    // cannot be proved, so it is neither signalled nor reported gone.
    if (!stat) return signalProcess(pid, 0) === 'gone' ? 'gone' : 'denied';
    return stat.startTime === startTime ? 'same' : 'gone';
  });
}

/**
 * Signals `pid` only if `identify` (run once the process is pinned by a pidfd) says it is still
 * the process meant: its start time, its cgroup. Through the descriptor where there is one, so a
 * pid reused after the check is never hit; by pid right after the check where there is none.
 */
export function signalPinned(pid: number, signal: NodeJS.Signals, identify: () => 'same' | 'gone' | 'denied'): SignalOutcome {
  if (pid <= 1) return 'denied';
  let fd: number | undefined;
  try {
    fd = openPidfd(pid);
  } catch (error) {
    if (error instanceof NativeError && error.code === 'ESRCH') return 'gone';
    // No descriptor to spare (EMFILE, ENFILE, ENOMEM) says nothing about the process: check its
    // identity and signal by pid, as where the kernel has no pidfds.
    fd = undefined;
  }
  try {
    const identity = identify();
    if (identity !== 'same') return identity;
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
