// What `leash run` does with each signal it can catch. Like tini, leash must never die of a stray
// signal: its death would leave the tree to its guard (the death supervisor, with no forwarding
// and its own grace) instead of taking it down itself, and SIGUSR1 would even open Node's
// inspector to anyone on the machine. Like dumb-init, every signal leash has no use for goes on to
// the command. The table, with the reasons, is in docs/run.md.
//
// - stop:          sent as itself to the whole tree, then SIGKILL after the grace (like SIGTERM);
// - stop as TERM:  the same graceful stop, but the tree gets SIGTERM: these are the "something is
//                  wrong" signals (abort, trap, bad system call, CPU limit), whose default in the
//                  tree would be a core dump in every process, not a request to finish;
// - forward:       passed on to the runner alone, nothing else happens;
// - suspend:       job control: the tree and leash stop together, and resume together;
// - leash's own:   SIGPIPE and SIGXFSZ, which the kernel sends leash for its own writes (a closed
//                  stderr, a state file over the size limit): held and dropped, never forwarded,
//                  as Node cannot tell them from a kill(2).
// Not caught: SIGKILL and SIGSTOP (cannot be); SIGSEGV, SIGBUS, SIGFPE, SIGILL (a real fault
// returns to the faulting instruction: a handler would spin forever); SIGCHLD (libuv's, and
// leash's wake-up); real-time signals (Node cannot listen to them). SIGCONT resumes leash as
// always, and is forwarded too unless it ends leash's own suspension. A real abort (Node's own,
// a failed assertion) still ends leash: abort() restores the default action and raises SIGABRT again.
import { holdCatchableSignals, sigprofIsProfilers } from '../sys/stray-signals.js';

export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT'] as const;
export const STOP_AS_TERM_SIGNALS = ['SIGABRT', 'SIGTRAP', 'SIGSYS', 'SIGXCPU'] as const;
export const FORWARDED_SIGNALS = [
  'SIGUSR1', 'SIGUSR2', 'SIGALRM', 'SIGWINCH', 'SIGVTALRM', 'SIGPROF', 'SIGIO', 'SIGPWR', 'SIGURG', 'SIGSTKFLT', 'SIGCONT',
] as const;
export const SUSPEND_SIGNALS = ['SIGTSTP', 'SIGTTIN', 'SIGTTOU'] as const;
/** Sent by the kernel to leash for its own writes; held (never fatal) and never forwarded. */
export const OWN_SIGNALS = ['SIGPIPE', 'SIGXFSZ'] as const;
/**
 * The kernel's parent-death signal for --die-with-parent (it only prompts a getppid() check): one
 * that nothing sends (the kernel never raises SIGSTKFLT on Linux), so USR1/USR2 stay the command's.
 */
export const PARENT_DEATH_PROMPT = 'SIGSTKFLT';

export type StopSignal = (typeof STOP_SIGNALS)[number] | (typeof STOP_AS_TERM_SIGNALS)[number];
export type ForwardedSignal = (typeof FORWARDED_SIGNALS)[number];

/** The signals passed on to the runner in this process: not SIGPROF while leash itself is being profiled (its ticks are the profiler's). */
export function forwardedSignals(): readonly ForwardedSignal[] {
  return sigprofIsProfilers() ? FORWARDED_SIGNALS.filter((signal) => signal !== 'SIGPROF') : FORWARDED_SIGNALS;
}

/** Every signal that makes leash stop the tree gracefully. */
export const ALL_STOP_SIGNALS: readonly StopSignal[] = [...STOP_SIGNALS, ...STOP_AS_TERM_SIGNALS];

/** The signal the tree gets when leash is asked to stop by `received`. */
export function treeSignalFor(received: NodeJS.Signals): NodeJS.Signals {
  return (STOP_SIGNALS as readonly string[]).includes(received) ? received : 'SIGTERM';
}

/** Stop signals received since the shield went up, in order, each once. */
const earlyRequests: StopSignal[] = [];
let hangupIgnored = false;

/**
 * --ignore-hangup: SIGHUP is no longer a stop signal (it stays held: it neither ends leash nor
 * reaches the tree). Called once the arguments are read, before the run's handlers exist.
 */
export function ignoreHangup(): void {
  hangupIgnored = true;
}

/** The signals that stop the tree in this run. */
export function stopSignals(): readonly StopSignal[] {
  return hangupIgnored ? ALL_STOP_SIGNALS.filter((signal) => signal !== 'SIGHUP') : ALL_STOP_SIGNALS;
}

/**
 * The first stop signal received since the shield went up, or undefined. A request that lands
 * before the run's own handlers exist (while modules and koffi load) is kept here, not lost.
 */
export function earlyStopRequest(): StopSignal | undefined {
  return earlyRequests.find((signal) => stopSignals().includes(signal));
}

/**
 * Holds every catchable signal for the life of the process (holdCatchableSignals: a listener
 * replaces the default action, death or a stop, and, for SIGUSR1, Node's inspector activation),
 * and makes the stop signals' listeners record the first request (earlyStopRequest) from this
 * instant on. None is ever removed: removing the last listener of a signal restores the default,
 * which would reopen the window between a run's end and the process's exit. Signal listeners do
 * not keep the event loop alive.
 */
export function installSignalShield(): void {
  holdCatchableSignals();
  for (const signal of ALL_STOP_SIGNALS) {
    // Some platforms lack some names: skip those.
    try {
      process.on(signal, () => {
        if (!earlyRequests.includes(signal)) earlyRequests.push(signal);
      });
    } catch {
      // not a signal here
    }
  }
}
