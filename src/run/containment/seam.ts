// The one seam between `leash run`'s stop sequence and what holds the run: a cgroup (plus the
// descendants of leash that left it) or the process tree below leash, a child subreaper. Each
// answers the same few questions; the stop (signal, grace, kill, the leftovers named, the state
// document) is written once over them in ../supervisor.ts.

/** What a pass reached: how many, and the call that names them. */
export interface Pass {
  reached: number;
  name: () => void;
}

export interface Containment {
  readonly kind: 'cgroup' | 'tree';
  /** How many live processes the run holds, at the last look. */
  count(): number;
  /** Looks again (a walk, or one read of the cgroup's list), and records leash's adopted children. */
  refresh(): void;
  /** A new phase of the stop (a new signal): every member is to be signalled again. */
  newPhase(): void;
  /**
   * The stop's first pass: every member, at once where the kernel allows it. Resolves with how
   * many were reached, and `name`, which says which (once the phase line is out).
   */
  signalAll(signal: NodeJS.Signals): Promise<Pass>;
  /** A later pass, from the timers while the tree dies: what came after the last pass (and, contained, what left the cgroup). */
  signalNewcomers(signal: NodeJS.Signals): void;
  /** SIGKILL to everything, named first. */
  killAll(): void;
  /** Whether the run holds no live process (leash's children reaped on the way). */
  isEmpty(): boolean;
  /** Whether anything besides the runner `runnerPid` is left, at the last look. */
  holdsDescendants(runnerPid: number): boolean;
  /** Job control: stops the tree; the returned function continues what it stopped. */
  pause(): () => void;
}

/**
 * Sends a pass's signal through `send`, then, where it was sent, SIGCONT the same way: a stopped
 * process (kill -STOP, a debugger, SIGTTIN) acts on SIGTERM only once it runs again, so a
 * graceful stop would wait out the whole grace and end it with SIGKILL. systemd sends SIGCONT
 * after the stop signal for the same reason. Not after SIGKILL (it needs no run), nor after the
 * job-control signals themselves. `send` proves identity each time (a pidfd, a witness, the
 * freeze), so the SIGCONT reaches only what the signal did.
 */
export function signalThenContinue<T>(signal: NodeJS.Signals, send: (signal: NodeJS.Signals) => T): T {
  const outcome = send(signal);
  if (outcome === 'sent' && !NOT_CONTINUED.has(signal)) send('SIGCONT');
  return outcome;
}

const NOT_CONTINUED: ReadonlySet<NodeJS.Signals> = new Set(['SIGKILL', 'SIGCONT', 'SIGSTOP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU']);
