// The owner's end of the death supervisor: starts it lazily, feeds it control lines, replaces
// it (replaying every registration) if it dies, and releases it when nothing is left to guard.
// Nothing here throws into the caller: a supervisor that cannot be had costs a warning.
import type { ChildProcess } from 'node:child_process';
import { spawn } from '../sys/child-process.js';
import { formatControlLine, type ControlCommand } from '../supervisor/protocol.js';
import { ownProcessGroupId } from '../sys/processes.js';
import { dropParentDeathLauncher, supervisorCommand, supervisorCommandOrWarn, supervisorEnvironment } from './supervisor-launch.js';

// How the supervisor is started (runtime, file, environment) is decided in supervisor-launch.ts.
export { supervisorCommand, supervisorEnvironment };

/**
 * Restarts allowed within RESTART_WINDOW_MS. Past that the link gives up for a while: it tries
 * again once the window has room (or at the next registration), later after each consecutive
 * give-up, so a steady tree is not left unguarded for good and a supervisor that cannot live
 * costs no busy loop.
 */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 10_000;
/** The longest pause between give-up and the next try. */
const MAX_RETRY_DELAY_MS = 5 * 60_000;

export interface LinkConfig {
  ownerToken: string;
  graceMs: number;
  /**
   * What to replay into a fresh supervisor, from the owner's record of truth. `inherit(fd)` hands
   * one of the owner's descriptors (a group's pidfd) to the supervisor at its spawn and returns
   * the number it has there, for a `handle` line.
   */
  replay: (inherit: (fd: number) => number) => ControlCommand[];
  /** Whether a supervisor is needed at all (something to guard): if not, a dead one is not replaced. */
  needed: () => boolean;
}

/**
 * A supervisor that could not be launched at all (no plan, a spawn refused with EMFILE or EAGAIN,
 * this process's group unreadable) is tried again after LAUNCH_RETRY_FIRST_MS, doubling up to
 * LAUNCH_RETRY_MAX_MS, for as long as something is to be guarded. Registrations meanwhile wait for
 * that try (it replays them all) rather than each spawning into the same failure.
 */
const LAUNCH_RETRY_FIRST_MS = 100;
const LAUNCH_RETRY_MAX_MS = 10_000;

/** Exits that no restart can cure: the supervisor refused its arguments or its process group. */
const PERMANENT_EXITS = new Set([2, 64]);

export class SupervisorLink {
  private child: ChildProcess | undefined;
  private restarts: number[] = [];
  /** When the running supervisor was started (a long life resets the back-off). */
  private startedAt = 0;
  /** Give-ups in a row without a supervisor that lived a whole window. */
  private giveUps = 0;
  /** The running supervisor is the one try after a give-up: dying young, it means another give-up. */
  private onProbation = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Launches failed in a row (reset by a supervisor that runs); a try is scheduled while > 0. */
  private launchFailures = 0;
  private releasing = new Set<Promise<void>>();
  /** The stdin of each supervisor told `release`, until it has exited: its last words must be out. */
  private readonly releasedInputs = new Set<NodeJS.WritableStream & { writableLength: number }>();
  /** Lines from notify() not yet written: flushed together, before any other write. */
  private pending = '';
  private flushScheduled = false;

  constructor(private readonly config: LinkConfig) {}

  /** The running supervisor's pid, if any (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Makes sure a supervisor runs, replaying the whole set into a new one. */
  ensure(): void {
    if (this.child) return;
    this.startUnlessRetrying();
  }

  /** Sends a command at once, starting a supervisor (which gets the whole replay) if none runs. */
  send(command: ControlCommand): void {
    if (!this.child) this.startUnlessRetrying();
    else this.write(this.child, this.takePending() + formatControlLine(command));
  }

  /** Sends several commands in one write, in order (a fresh supervisor learns them from the replay). */
  sendAll(commands: readonly ControlCommand[]): void {
    if (commands.length === 0) return;
    if (!this.child) this.startUnlessRetrying();
    else this.write(this.child, this.takePending() + commands.map(formatControlLine).join(''));
  }

  /** Starts a supervisor now, unless a failed launch has its next try scheduled (which replays everything). */
  private startUnlessRetrying(): void {
    if (this.launchFailures > 0 && this.retryTimer !== undefined) return;
    this.start();
  }

  /**
   * Sends a command only to a running supervisor (a fresh one learns it from the replay).
   * `unregister` is batched with the others of this turn of the event loop: a hundred groups
   * ending together cost one write, not a hundred, and a late one is harmless (the supervisor
   * checks every identity). Anything else is written at once, after the batch, so order holds.
   */
  notify(command: ControlCommand): void {
    if (!this.child) return;
    if (command.verb !== 'unregister') {
      this.write(this.child, this.takePending() + formatControlLine(command));
      return;
    }
    this.pending += formatControlLine(command);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      if (this.child && this.pending) this.write(this.child, this.takePending());
    });
  }

  private takePending(): string {
    const lines = this.pending;
    this.pending = '';
    return lines;
  }

  /**
   * Whether every line written to a supervisor, the running one and any told `release`, is in
   * the kernel's pipe, none left queued in Node: a process that ends at once loses nothing then.
   */
  allWritten(): boolean {
    const running = this.child?.stdin;
    if (running && running.writableLength > 0) return false;
    for (const input of this.releasedInputs) if (input.writableLength > 0) return false;
    return this.pending.length === 0;
  }

  /**
   * Ends the supervisor without a teardown: says `release`, closes its stdin, and resolves once
   * it has exited. Any later registration starts a fresh one.
   */
  release(): Promise<void> {
    this.cancelRetry();
    this.launchFailures = 0;
    const child = this.child;
    if (!child) return Promise.all(this.releasing).then(() => undefined);
    this.child = undefined;
    const pending = this.takePending();
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    this.write(child, pending + formatControlLine({ verb: 'release' }));
    child.stdin?.end();
    const input = child.stdin;
    if (input) this.releasedInputs.add(input);
    const tracked = exited.finally(() => {
      this.releasing.delete(tracked);
      if (input) this.releasedInputs.delete(input);
    });
    this.releasing.add(tracked);
    return tracked;
  }

  private start(): void {
    this.cancelRetry();
    this.onProbation = false;
    // A fresh supervisor gets the whole replay, which already says what the batch would.
    this.pending = '';
    let parentPgid: number;
    try {
      parentPgid = ownProcessGroupId();
    } catch (error) {
      this.launchFailed(`cannot start the death supervisor: ${(error as Error).message}`);
      return;
    }
    const launch = supervisorCommandOrWarn();
    if (!launch) {
      // Warned by supervisorCommandOrWarn, once per problem.
      this.launchFailed(undefined);
      return;
    }
    // The replay is made before the spawn: the pidfds it hands over are extra stdio slots (3, 4, ...).
    const inherited: number[] = [];
    const lines = this.config
      .replay((fd) => {
        inherited.push(fd);
        return 2 + inherited.length;
      })
      .map(formatControlLine);
    // First, which descriptors are handles: the supervisor may then close one that no group takes
    // (a line, not a flag: a supervisor file older than this library ignores it with a notice).
    if (inherited.length > 0) lines.unshift(formatControlLine({ verb: 'handles', count: inherited.length }));
    const replay = lines.join('');
    const [command, ...args] = launch;
    args.push(
      '--parent-pgid',
      String(parentPgid),
      '--grace-ms',
      String(this.config.graceMs),
      '--owner-token',
      this.config.ownerToken,
    );
    let child: ChildProcess;
    try {
      child = spawn(command!, args, {
        // Its own session: a signal to the owner's group must not reach it.
        detached: true,
        // stdin is the control pipe; Node opens it close-on-exec, so no other child inherits it.
        // The groups' pidfds follow, each in the slot its `handle` line names.
        stdio: ['pipe', 'ignore', 'inherit', ...inherited],
        env: supervisorEnvironment(),
      });
    } catch (error) {
      this.launchFailed(`cannot start the death supervisor: ${(error as Error).message}`);
      return;
    }
    this.child = child;
    this.startedAt = performance.now();
    child.unref();
    const stdin = child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null;
    stdin?.unref?.();
    stdin?.on('error', () => this.lost(child));
    child.once('spawn', () => {
      this.launchFailures = 0;
    });
    child.on('error', (error) => {
      if (child.pid === undefined) {
        // The spawn itself failed (EMFILE, EAGAIN...): nothing ran, so no restart is used up.
        if (this.child !== child) return;
        this.child = undefined;
        this.launchFailed(`cannot start the death supervisor: ${error.message}`);
        return;
      }
      this.warn(`death supervisor failed: ${error.message}`);
      this.lost(child);
    });
    // A spawn that failed is the error handler's (no restart is used up for it).
    child.on('exit', (code) => {
      if (child.pid !== undefined) this.lost(child, code);
    });

    if (replay) this.write(child, replay);
  }

  private write(child: ChildProcess, text: string): void {
    try {
      // libuv writes to an idle pipe synchronously, so the line is in the kernel on return.
      child.stdin?.write(text);
    } catch {
      this.lost(child);
    }
  }

  /** The supervisor died or its pipe broke: replace it if there is anything to guard. */
  private lost(child: ChildProcess, code?: number | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    child.stdin?.destroy();
    // A broken pipe may be noticed before the exit event: the exit code may already be known.
    code ??= child.exitCode;
    if (code !== null && PERMANENT_EXITS.has(code)) {
      this.warn(`the death supervisor refused to run (exit ${code}); owned groups are unguarded`);
      return;
    }
    if (!this.config.needed()) return;
    const now = performance.now();
    // setpriv (the parent-death launcher) could not run it: the supervisor goes without the
    // early death signal from now on, and only hears of the owner's death at EOF.
    if ((code === 126 || code === 127) && now - this.startedAt < RESTART_WINDOW_MS && dropParentDeathLauncher()) {
      this.warn(`the death supervisor's launcher failed (exit ${code}); starting it without the parent-death signal`);
      this.start();
      return;
    }
    const livedLong = now - this.startedAt >= RESTART_WINDOW_MS;
    if (livedLong) this.giveUps = 0;
    this.restarts = this.restarts.filter((at) => now - at < RESTART_WINDOW_MS);
    if (this.restarts.length >= MAX_RESTARTS || (this.onProbation && !livedLong)) {
      this.giveUp(now);
      return;
    }
    this.restarts.push(now);
    this.start();
  }

  /**
   * Too many deaths in the window: one warning, then one try once the window has room, pushed
   * further out (10, 30, 70 s ... more, capped) by each give-up in a row. That try is on
   * probation: if it dies young too, that is the next give-up, not a new burst of restarts.
   */
  private giveUp(now: number): void {
    const windowFrees = this.restarts.length > 0 ? RESTART_WINDOW_MS - (now - this.restarts[0]!) : 0;
    const delay = Math.min(Math.max(windowFrees, 0) + RESTART_WINDOW_MS * (2 ** this.giveUps - 1), MAX_RETRY_DELAY_MS);
    this.giveUps += 1;
    this.warn(`the death supervisor keeps dying; owned groups are unguarded for ${Math.ceil(delay / 1000)} s, until it is started again`);
    this.cancelRetry();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.child || !this.config.needed()) return;
      this.restarts.push(performance.now());
      this.start();
      this.onProbation = this.child !== undefined;
    }, delay);
    // The retry must not keep the owner alive.
    this.retryTimer.unref();
  }

  /**
   * No supervisor could be launched: try again after a back-off (doubling, capped) while anything
   * is to be guarded. Warns at the first failure of a run (`message` undefined: already warned).
   */
  private launchFailed(message: string | undefined): void {
    if (message !== undefined && this.launchFailures === 0) this.warn(`${message}; owned groups are unguarded until it starts (retrying)`);
    const delay = Math.min(LAUNCH_RETRY_FIRST_MS * 2 ** this.launchFailures, LAUNCH_RETRY_MAX_MS);
    this.launchFailures += 1;
    this.cancelRetry();
    if (!this.config.needed()) {
      this.launchFailures = 0;
      return;
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.child || !this.config.needed()) {
        this.launchFailures = 0;
        return;
      }
      this.start();
    }, delay);
    // The retry must not keep the owner alive.
    this.retryTimer.unref();
  }

  private cancelRetry(): void {
    if (this.retryTimer === undefined) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private warn(message: string): void {
    process.emitWarning(message, { code: 'LEASH_SUPERVISOR' });
  }
}
