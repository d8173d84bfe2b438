// What `leash run` does with each signal it can catch. Like tini, leash must never die of a stray
// signal: its death would leave the tree to its guard (the death supervisor) instead of taking it
// down itself, and SIGUSR1 would even open Node's inspector to anyone on the machine.
//
// - stop:    sent as itself to the whole tree, then SIGKILL after the grace (like SIGTERM);
// - forward: passed on to the runner alone, nothing else happens;
// - ignore:  dropped.
// Not caught, on purpose: SIGKILL and SIGSTOP (cannot be), the fault signals SIGSEGV, SIGBUS,
// SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT (a real fault returns to the faulting instruction:
// catching it would spin forever), the job-control stops SIGTSTP and SIGCONT (they pause and
// resume leash, they do not end it), and real-time signals (Node cannot listen to them). Any of
// them that ends leash leaves the tree to the guard.

export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT'] as const;
export const FORWARDED_SIGNALS = ['SIGUSR1', 'SIGUSR2', 'SIGALRM', 'SIGWINCH'] as const;
export const IGNORED_SIGNALS = [
  'SIGPIPE',
  'SIGTTIN',
  'SIGTTOU',
  'SIGXCPU',
  'SIGXFSZ',
  'SIGVTALRM',
  'SIGPROF',
  'SIGIO',
  'SIGPWR',
  'SIGSTKFLT',
] as const;

export type StopSignal = (typeof STOP_SIGNALS)[number];
export type ForwardedSignal = (typeof FORWARDED_SIGNALS)[number];

const noop = () => {};

let firstStopRequest: StopSignal | undefined;

/**
 * The first stop signal received since the shield went up, or undefined. A request that lands
 * before the run's own handlers exist (while modules and koffi load) is kept here, not lost.
 */
export function earlyStopRequest(): StopSignal | undefined {
  return firstStopRequest;
}

/**
 * Puts a listener on every signal leash handles, for the life of the process. A listener
 * replaces the default action (death) and, for SIGUSR1, Node's inspector activation; the stop
 * signals' listeners record the first request (earlyStopRequest) from this instant on. These are
 * never removed: removing the last listener of a signal restores the default, which would
 * reopen the window for the instant between a run's end and the process's exit.
 * Signal listeners do not keep the event loop alive.
 */
export function installSignalShield(): void {
  for (const signal of [...STOP_SIGNALS, ...FORWARDED_SIGNALS, ...IGNORED_SIGNALS]) {
    // Some platforms lack some names (SIGSTKFLT, SIGPWR on macOS): skip those.
    try {
      const stop = (STOP_SIGNALS as readonly string[]).includes(signal);
      process.on(signal as NodeJS.Signals, stop ? () => (firstStopRequest ??= signal as StopSignal) : noop);
    } catch {
      // not a signal here
    }
  }
}
