// Keeping a process alive through every signal that can be caught. Standard library only: the
// death supervisor imports this file.
import { constants } from 'node:os';
import { nodeFlagNames } from './node-flags.js';
import { catchesSignals, hasProcfs } from './procfs.js';

/**
 * Signals left at their default action:
 * - SIGKILL and SIGSTOP cannot be caught;
 * - SIGSEGV, SIGBUS, SIGFPE and SIGILL raised by a real fault would re-run the faulting
 *   instruction forever behind a handler that returns (a crash must stay a crash);
 * - SIGCHLD, SIGCONT, SIGURG and SIGWINCH are ignored or harmless by default, and libuv uses SIGCHLD.
 * SIGPROF too, while a profiler uses it (sigprofIsProfilers).
 */
const LEFT_ALONE = new Set([
  'SIGKILL', 'SIGSTOP', 'SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL',
  'SIGCHLD', 'SIGCLD', 'SIGCONT', 'SIGURG', 'SIGWINCH',
]);

const ignore = (): void => {};

/** Node flags that start V8's sampling profiler, which ticks with SIGPROF. */
const SAMPLING_FLAGS = new Set(['--cpu-prof', '--prof', '--prof-cpp']);

/** Whether these flags start V8's sampling profiler (`--cpu-prof`, `--prof`, `--prof-cpp`, in either spelling). */
export function profilerFlagged(execArgv: readonly string[] = process.execArgv): boolean {
  return nodeFlagNames(execArgv).some((name) => SAMPLING_FLAGS.has(name));
}

/** Flags through which code runs before ours (a preload, a loader) or an inspector attaches: only these can have started a profiler by then. */
const EARLY_CODE_FLAGS = new Set(['--require', '--import', '--loader', '--experimental-loader', '--inspect', '--inspect-brk', '--inspect-wait']);

/** Whether code other than ours may have run in this process before it (`-r`, `--import`, an inspector), on the command line or in NODE_OPTIONS. */
function earlyCodeMayRun(): boolean {
  const words = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return words.includes('-r') || nodeFlagNames(words).some((name) => EARLY_CODE_FLAGS.has(name));
}

let sigprofIsTheProfilers: boolean | undefined;

/**
 * Whether SIGPROF belongs to a profiler in this process, decided once, at the first call (before
 * holdCatchableSignals installs anything): a profiling flag, or, where /proc shows it, a SIGPROF
 * handler already installed (a profiler a preload or the inspector started). The kernel's mask is
 * read only where such code can have run (earlyCodeMayRun): the read costs 0.4-0.6 ms of every
 * start, and the supervisor (scrubbed environment, fixed flags) never has any. The profiler ticks
 * with SIGPROF: a listener for it makes Node die of it at exit (Node 20: status 155, the profile
 * lost), and its ticks are nobody else's business. SIGPROF keeps its handler then.
 */
export function sigprofIsProfilers(): boolean {
  // Windows has no SIGPROF (its number is undefined there), and its /proc under Wine is no Linux one.
  const sigprof = (constants.signals as Record<string, number | undefined>).SIGPROF;
  sigprofIsTheProfilers ??= profilerFlagged() || (process.platform === 'linux' && sigprof !== undefined && earlyCodeMayRun() && hasProcfs() && catchesSignals(process.pid, [sigprof]));
  return sigprofIsTheProfilers;
}

/**
 * Installs a do-nothing listener for every other signal Node can name (SIGTERM, SIGINT, SIGHUP,
 * SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGTSTP, ...), so that none of them ends, stops or
 * opens a debugger in this process: a listener on SIGUSR1 replaces Node's own handler, which
 * would start the inspector on 127.0.0.1:9229. Returns the signals now held.
 * Real-time signals (SIGRTMIN..SIGRTMAX) have no name in Node and keep their default action.
 */
export function holdCatchableSignals(): NodeJS.Signals[] {
  const held: NodeJS.Signals[] = [];
  const profiled = sigprofIsProfilers();
  for (const name of Object.keys(constants.signals) as NodeJS.Signals[]) {
    if (LEFT_ALONE.has(name) || (profiled && name === 'SIGPROF')) continue;
    try {
      process.on(name, ignore);
      held.push(name);
    } catch {
      // Not catchable on this platform: it keeps its default action.
    }
  }
  return held;
}
