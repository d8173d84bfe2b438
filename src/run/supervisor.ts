// The Linux tree supervisor behind `leash run`: a child subreaper (from before the command's first
// fork) that starts one command (the runner) in its own session, adopts and reaps every orphan of
// the runner's tree, and takes the whole run down (the stop signal, then SIGKILL after a grace)
// when asked to stop, when the runner exits, or when its own parent or client is gone.
//
// What holds the run is one seam (containment/seam.ts): a cgroup with the descendants of leash
// that left it (containment/cgroup.ts), or the process tree (containment/tree.ts). The stop
// sequence below is written once over it: the signal to every member at once, the grace, SIGKILL,
// what was ended named (stop-names.ts), the state document. Adopted orphans: adoption.ts.
//
// Wake-ups: SIGCHLD (an adopted orphan or the runner changed state), the runner's exit event,
// control signals, the parent-death signal, cgroup.events (contained), and timers (grace, and a
// slow safety sweep). The tree's last process to die is always our direct child by then (every
// dead ancestor hands its orphans to us), so SIGCHLD alone tells us when the tree has emptied.
import { ChildProcess } from 'node:child_process';
import { ownGroupIsOrphaned } from '../sys/job-control.js';
import { signalProcess } from '../sys/processes.js';
import { readProcStat } from '../sys/procfs.js';
import { loadNative, nativeLoaded, nativeLoadFailure, setChildSubreaper } from '../sys/native.js';
import { signalIfSame, signalNumber } from '../sys/verified-signal.js';
import type { TreeCgroup } from '../sys/cgroup.js';
import type { WriterWatch } from '../sys/writer-watch.js';
import { Adoptions } from './adoption.js';
import { CgroupGuard } from './cgroup-guard.js';
import { watchClientInput } from './client-watch.js';
import { CgroupContainment } from './containment/cgroup.js';
import type { Containment } from './containment/seam.js';
import { TreeContainment } from './containment/tree.js';
import { RUN_TOKEN_VARIABLE, type RunGuard } from './guard.js';
import { ParentWatch } from './parent-watch.js';
import { runnerEnd, startRunner, type StartFailure } from './runner.js';
import { StatePublisher, type Phase, type RunState } from './state.js';
import { StopNames } from './stop-names.js';
import { ALL_STOP_SIGNALS, earlyStopRequest, forwardedSignals, PARENT_DEATH_PROMPT, stopSignals, SUSPEND_SIGNALS, treeSignalFor } from './signals.js';

export { classifySpawnError, startRunner, type StartFailure } from './runner.js';

/** Signals that stop the tree (see signals.ts for what every other signal does); stopSignals() drops SIGHUP under --ignore-hangup. */
export const CONTROL_SIGNALS = ALL_STOP_SIGNALS;
/**
 * The quiet tree's sweep: it is also how the guard learns a group that appeared without a SIGCHLD
 * to leash (a setsid escapee forked below the runner). At most every second, but never more than
 * 1/IDLE_WALK_SHARE of leash's time in walks (a 200-process tree, ~20 ms a walk: every 4 s);
 * never rarer than every 5 s.
 */
const RUNNING_SWEEP_MS = 5000;
const RUNNING_SWEEP_QUIET_MIN_MS = 1000;
const IDLE_WALK_SHARE = 200;
/** While the tree keeps changing the sweep comes back sooner, so a stop starts from a fresh picture. */
const RUNNING_SWEEP_MIN_MS = 200;
/**
 * ...but never more than 1/CHANGING_WALK_SHARE of leash's time in walks: a big tree that churns
 * (a fork storm beside 200 processes) walked every 200 ms kept leash at ~20% of a core.
 */
const CHANGING_WALK_SHARE = 10;
const STOPPING_SWEEP_MS = 250;
const KILL_REPEAT_MS = 1000;
const STOP_CHECK_GAP_MS = 15;
/**
 * While running, a SIGCHLD only reaps, at most once per this many ms: a storm of short-lived
 * orphans (one SIGCHLD each) then costs leash one pass over its children per gap, not a tree walk
 * per death, and no zombie waits longer than the gap (plus a busy CPU's delay).
 */
const RUNNING_REAP_GAP_MS = 50;
/**
 * While the tree dies, a SIGCHLD only reaps and counts our children (see settle); the walk for
 * processes the group signals missed (forked in mid-signal into a new group) comes this long
 * after the stop began, when a tree that honours the signal is gone, then with each sweep.
 */
const STOP_NEWCOMER_WALK_MS = 50;

export interface TreeSupervisorOptions {
  command: string;
  args: string[];
  graceMs: number;
  statePath?: string;
  dieWithParent: boolean;
  /** With dieWithParent: also end the tree once stdin has no writer left (client-watch.ts); default true. */
  watchStdin?: boolean;
  /** What the tree gets when the parent (or the client) is gone; default SIGTERM, then SIGKILL after the grace. */
  parentDeathSignal?: NodeJS.Signals;
  /** --keep-terminal: the runner stays in leash's session and process group (see docs/run.md). */
  keepTerminal?: boolean;
  log: (line: string) => void;
  /** Takes the tree down if leash itself dies; none in tests of the supervisor alone. */
  guard?: RunGuard;
  /**
   * Contained: the tree lives in this cgroup (the runner enters it at its fork). Its members are
   * the kernel's record, no /proc walk is made, the tree is ended with cgroup.kill, and a shell
   * (CgroupGuard) ends it if leash dies. `guard` is then not used.
   */
  cgroup?: TreeCgroup;
  /** The containment line for the writer record (`leash status`). */
  containment?: string;
  /** The native calls' loading, begun by the caller at leash's start; loadNative() when absent. */
  native?: Promise<boolean>;
  /** Called once when the tree's stop begins, for any reason (the run's containers: containers.ts). */
  onStop?: () => void;
  /** The containers line for the writer record (`leash status`). */
  containers?: string;
  /**
   * Room for what the run holds beyond its processes (containers, src/run/containers.ts): called
   * once as a stop begins, with the stop signal and the grace, before the tree's first pass.
   */
  beforeStop?: (signal: NodeJS.Signals, graceMs: number) => void;
  /** Called once the tree is empty, before the guard is let go and leash exits; awaited. */
  afterStop?: () => Promise<void> | void;
}

export class TreeSupervisor {
  phase: Phase = 'starting';
  private readonly self = process.pid;
  private runnerPid = 0;
  private runnerStart = 0;
  private runnerExitCode: number | null = null;
  private requestedSignal: NodeJS.Signals | undefined;
  private stopSignal: NodeJS.Signals = 'SIGTERM';
  private escalated = false;
  private readonly adoptions: Adoptions;
  private readonly names: StopNames;
  /** What holds the run: exactly one of the two is set, and `containment` is it. */
  private readonly containment: Containment;
  private readonly tree: TreeContainment | undefined;
  private readonly contained: CgroupContainment | undefined;
  private readonly cgroup: TreeCgroup | undefined;
  private cgroupGuard: CgroupGuard | undefined;
  private readonly parent: ParentWatch;
  private readonly state: StatePublisher;
  private readonly timers = new Set<NodeJS.Timeout>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private runningSweepMs = RUNNING_SWEEP_MS;
  private checkQueued = false;
  private lastCheckAt = -Infinity;
  private reapQueued = false;
  private lastReapAt = -Infinity;
  private finish: ((code: number) => void) | undefined;
  private readonly listeners: Array<[string, (...args: unknown[]) => void]> = [];
  private clientWatch: WriterWatch | undefined;
  private resumedFromSuspend = false;
  /** The SIGCHLD listener, which a contained stop mutes while cgroup.events says the tree lives. */
  private readonly childListener = () => this.onChildEvent();
  private childrenMuted = false;
  /** Contained: whether the descendants outside the cgroup were signalled once it emptied. */
  private outsidersSignalled = false;

  constructor(private readonly options: TreeSupervisorOptions) {
    this.cgroup = options.cgroup;
    const liveRunner = () => (this.runnerExitCode === null ? this.runnerPid : 0);
    this.adoptions = new Adoptions({ self: this.self, liveRunner, isGuard: (pid) => this.isGuard(pid) });
    // The runner that exited by itself was not ended by leash (the last look may predate its exit).
    this.names = new StopNames(options.statePath, options.log, (pid, signal) =>
      pid === this.runnerPid && this.runnerExitCode !== null && signal !== 'SIGKILL');
    if (options.cgroup) {
      this.contained = new CgroupContainment(options.cgroup, {
        self: this.self,
        adoptions: this.adoptions,
        names: this.names,
        isGuard: (pid) => this.isGuard(pid),
      });
      this.containment = this.contained;
    } else {
      this.tree = new TreeContainment({ self: this.self, guard: options.guard, adoptions: this.adoptions, names: this.names, liveRunner });
      this.containment = this.tree;
    }
    this.parent = new ParentWatch(() => {
      if (this.phase === 'running') this.beginStop(options.parentDeathSignal ?? 'SIGTERM', 'parent died');
    });
    this.state = new StatePublisher(options.statePath, () => this.snapshot(), (message) =>
      options.log(`warning: ${message}`),
    undefined, options.containment === undefined ? undefined : { containment: options.containment, ...(options.containers && { containers: options.containers }) });
  }

  snapshot(): Omit<RunState, 'updated_at'> {
    return {
      active_children: this.containment.count(),
      adopted_children: this.adoptions.adopted.size,
      escalated: this.escalated,
      orphaned_children_total: this.adoptions.orphanedTotal,
      phase: this.phase,
      reaped_children_total: this.adoptions.reapedTotal,
      reaped_orphans_total: this.adoptions.reapedOrphansTotal,
      runner_exit_code: this.runnerExitCode,
      termination_signal: this.requestedSignal ? signalNumber(this.requestedSignal) : null,
    };
  }

  /** Whether every word for the guards is in their pipes: after run(), leash may end at once. */
  allWritten(): boolean {
    return (this.cgroupGuard?.allWritten() ?? true) && (this.options.guard?.allWritten() ?? true);
  }

  /** Runs the command to the end of its whole tree; resolves with leash's exit code. */
  async run(): Promise<number> {
    // Orphans must come to us, not to init, from the runner's very first fork, in every mode: the
    // seed sets the bit before anything else, and `adopted` counts from the first orphan on.
    // main.ts loaded koffi at leash's start (beside the kernel's first-migration wait: primeMigrations).
    const native = await (this.options.native ?? loadNative());
    if (native) setChildSubreaper();
    else if (this.cgroup) {
      this.options.log(
        `warning: native calls unavailable (${nativeLoadFailure()}): orphans go to init (still in the cgroup, ended with the tree)` +
          (this.options.dieWithParent ? "; the parent is looked at once a second, stdin's writers not at all" : ''),
      );
    }
    this.on('SIGCHLD', this.childListener);
    for (const signal of stopSignals()) this.on(signal, () => this.onControlSignal(signal));
    for (const signal of forwardedSignals()) {
      // With --die-with-parent, this is the kernel's parent-death signal: only a prompt to look.
      if (signal === PARENT_DEATH_PROMPT && this.options.dieWithParent) continue;
      this.on(signal, () => this.forwardToRunner(signal));
    }
    for (const signal of SUSPEND_SIGNALS) this.on(signal, () => this.suspend(signal));
    // A stop asked for before these handlers existed: the command is not started at all.
    const early = earlyStopRequest();
    if (early) {
      this.requestedSignal = early;
      this.options.log(`${early} before the command started; not starting it`);
      return this.endBeforeStart(128 + signalNumber(early));
    }
    if (this.options.dieWithParent && !this.parent.arm()) {
      this.options.log('parent already gone before the command started; not starting it');
      return this.endBeforeStart(1);
    }

    const guard = this.cgroup ? undefined : this.options.guard;
    // Started before the runner: from its first instruction the tree has someone to take it down.
    guard?.start();
    if (this.cgroup) {
      this.cgroupGuard = new CgroupGuard(this.cgroup, this.options.graceMs, (message) => this.options.log(`warning: ${message}`));
      if (!this.cgroupGuard.start()) this.options.log('warning: the tree is not guarded against the death of leash itself');
    }
    const env = guard ? { ...process.env, [RUN_TOKEN_VARIABLE]: guard.token } : process.env;
    const starting = this.startRunnerContained(env);
    if (starting === undefined) return this.endBeforeStart(1);
    const started = await starting;
    if (!(started instanceof ChildProcess)) {
      this.options.log(started.message);
      return this.endBeforeStart(started.code);
    }
    this.runnerPid = started.pid ?? 0;
    // The runner leads its own group (setsid): guard it before the first walk. Keeping the
    // terminal, it is in leash's group, which no one signals as a whole.
    const runnerStat = readProcStat(this.runnerPid);
    this.runnerStart = runnerStat?.startTime ?? 0;
    if (runnerStat && !this.options.keepTerminal) guard?.track(new Map([[this.runnerPid, runnerStat.startTime]]));
    started.once('exit', (code, signal) => {
      this.runnerExitCode = runnerEnd(started, code, signal);
      this.adoptions.reapedTotal += 1;
      this.scheduleCheck();
    });

    const done = new Promise<number>((resolve) => {
      this.finish = resolve;
    });
    // Contained, "the tree is empty" is the kernel's word (cgroup.events), watched, not polled.
    this.cgroup?.watch(() => this.scheduleCheck());
    this.observe();
    this.enterPhase('running');
    // A control signal may have arrived while the runner was starting.
    if (this.requestedSignal) this.beginStop(treeSignalFor(this.requestedSignal), `signal ${this.requestedSignal}`);
    // The parent may have died while the runner started: its prompt came before the phase ran.
    else if (this.options.dieWithParent && this.parent.isGone(false)) this.beginStop(this.options.parentDeathSignal ?? 'SIGTERM', 'parent died');
    // Contained, nothing is walked while the command runs: the sweep only refreshes the state
    // document's count (one read of cgroup.procs), and only when there is a document.
    if (!this.cgroup) this.armSweep(RUNNING_SWEEP_MS);
    else if (this.options.statePath !== undefined && this.phase === 'running') this.armSweep(RUNNING_SWEEP_MS);
    if (this.cgroup && !this.cgroup.watching) this.armSweep(STOPPING_SWEEP_MS);
    // The watch polls through koffi: without it the parent alone is watched.
    if (this.options.dieWithParent && this.options.watchStdin !== false && nativeLoaded()) {
      this.clientWatch = watchClientInput(this.options.log, () => this.onClientGone());
    }
    this.scheduleCheck();
    return done;
  }

  /**
   * Starts the runner; contained, inside the cgroup from its fork on: leash enters the cgroup,
   * forks the runner (spawn() forks synchronously, so the child is born there), and leaves at
   * once. No instruction of the command runs outside it. Undefined when leash could not leave
   * (the runner is then killed).
   */
  private startRunnerContained(env: NodeJS.ProcessEnv): Promise<ChildProcess | StartFailure> | undefined {
    const cgroup = this.cgroup;
    if (!cgroup) return startRunner(this.options.command, this.options.args, env, this.options.keepTerminal);
    try {
      cgroup.enter();
    } catch (error) {
      this.options.log(`cannot enter ${cgroup.directory}: ${(error as Error).message}; set LEASH_CONTAINMENT=tree to run without a cgroup`);
      return undefined;
    }
    const starting = startRunner(this.options.command, this.options.args, env, this.options.keepTerminal);
    try {
      cgroup.leave();
    } catch (error) {
      // leash would end itself with the tree: end the runner, which cannot have run much yet.
      this.options.log(`cannot leave ${cgroup.directory}: ${(error as Error).message}; set LEASH_CONTAINMENT=tree to run without a cgroup`);
      void starting.then((child) => {
        if (child instanceof ChildProcess) child.kill('SIGKILL');
      });
      return undefined;
    }
    return starting;
  }

  private on(event: string, listener: (...args: unknown[]) => void): void {
    process.on(event as NodeJS.Signals, listener);
    this.listeners.push([event, listener]);
  }

  private after(ms: number, action: () => void, repeat = false): NodeJS.Timeout {
    const timer = repeat ? setInterval(action, ms) : setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private armSweep(ms: number): void {
    if (this.sweepTimer) {
      clearInterval(this.sweepTimer);
      this.timers.delete(this.sweepTimer);
    }
    // Ref'd on purpose: once the runner is gone, this keeps the loop alive while the tree lives.
    this.sweepTimer = this.after(ms, () => this.onSweep(), true);
  }

  /** stdin has no writer left: as the MCP stdio shutdown, the command may first exit by itself on EOF. */
  private onClientGone(): void {
    if (this.phase !== 'running') return;
    this.options.log(`stdin has no writer left (client gone or closed it): the command has ${this.options.graceMs} ms to exit on its own`);
    this.after(this.options.graceMs, () => this.beginStop(this.options.parentDeathSignal ?? 'SIGTERM', 'client gone: no writer left on stdin'));
  }

  private onControlSignal(signal: NodeJS.Signals): void {
    if (this.phase === 'starting' || this.phase === 'running') {
      this.requestedSignal ??= signal;
      if (this.phase === 'running') this.beginStop(treeSignalFor(signal), `signal ${signal}`);
    } else if (this.phase === 'stopping') {
      // A repeated request is passed on too; the grace keeps running.
      this.containment.newPhase();
      void this.containment.signalAll(treeSignalFor(signal)).then(({ name }) => name());
    }
  }

  /**
   * Job control (Ctrl-Z, `kill -TSTP`): the tree and leash stop together, and resume together.
   * Only while running: a stop in progress is not paused (its grace would freeze with leash).
   * Never in an orphaned process group: nothing would ever continue leash (nor tell it that its
   * parent died), and the tree would stay stopped.
   * With --keep-terminal the terminal's SIGTSTP has already stopped the processes of leash's
   * group; the others get SIGSTOP here. leash then stops itself; when it is continued (the
   * shell's `fg` or `bg`, or any SIGCONT) the kill() below returns and the tree is continued.
   */
  private suspend(signal: NodeJS.Signals): void {
    if (this.phase !== 'running') return;
    // As the kernel does for a stop signal left at its default: nobody could continue us.
    if (ownGroupIsOrphaned()) {
      this.options.log(`${signal} ignored: leash's process group is orphaned, no shell could continue it`);
      return;
    }
    const resume = this.containment.pause();
    this.options.log(`${signal}: the command's tree and leash stop until continued`);
    signalProcess(this.self, 'SIGSTOP');
    this.options.log('continued: the tree resumes');
    resume();
    // The SIGCONT that resumed leash is on its way to the listener: it is not the runner's.
    if (this.tree) this.resumedFromSuspend = true;
    this.scheduleCheck();
  }

  /** A signal meant for the command: to the runner alone, while it is still itself. */
  private forwardToRunner(signal: NodeJS.Signals): void {
    if (signal === 'SIGCONT' && this.resumedFromSuspend) {
      this.resumedFromSuspend = false;
      return;
    }
    if (this.runnerPid === 0 || this.runnerExitCode !== null) return;
    signalIfSame(this.runnerPid, this.runnerStart, signal);
  }

  /**
   * A SIGCHLD: one of leash's children changed state. While running that needs reaping only: the
   * runner's exit comes as its own event (libuv's), and the walks are the sweep's (every 200 ms
   * while the tree changes). Otherwise, the check of the phase.
   */
  private onChildEvent(): void {
    if (this.phase !== 'running') {
      this.scheduleCheck();
      return;
    }
    if (this.reapQueued) return;
    this.reapQueued = true;
    const run = () => {
      this.reapQueued = false;
      this.lastReapAt = performance.now();
      // The runner gone, the check that may begin the stop comes first: reaping waits for it.
      if (this.phase !== 'running' || this.runnerExitCode !== null) this.scheduleCheck();
      else {
        this.adoptions.reap();
        // Contained there is no sweep to publish the counters: the reaps do (at most once a second).
        if (this.contained && this.options.statePath !== undefined) {
          this.contained.refreshCount();
          this.state.publish();
        }
      }
    };
    const wait = this.lastReapAt + RUNNING_REAP_GAP_MS - performance.now();
    if (wait > 0) setTimeout(run, wait);
    else setImmediate(run);
  }

  private scheduleCheck(): void {
    if (this.checkQueued) return;
    this.checkQueued = true;
    const run = () => {
      this.checkQueued = false;
      this.lastCheckAt = performance.now();
      if (this.phase === 'stopping' || this.phase === 'killing') this.settle();
      else this.check();
    };
    // While the tree is being taken down, a storm of SIGCHLDs would have us reap and count on the
    // CPU the dying processes need: one settle per STOP_CHECK_GAP_MS then. Contained and watched,
    // SIGCHLD is not heard during the stop: what wakes us is the runner's exit and cgroup.events,
    // a few events in all, and the one that says "empty" must end leash at once.
    const paced = (this.phase === 'stopping' || this.phase === 'killing') && !this.cgroup?.watching;
    const wait = paced ? this.lastCheckAt + STOP_CHECK_GAP_MS - performance.now() : 0;
    if (wait > 0) setTimeout(run, wait);
    else setImmediate(run);
  }

  /** Whether `pid` is one of the guard's processes (libuv reaps those). */
  private isGuard(pid: number): boolean {
    if (this.cgroupGuard?.isGuardPid(pid)) return true;
    const guard = this.options.guard;
    if (!guard || !guard.mayBeGuard(pid)) return false;
    const stat = readProcStat(pid);
    return stat !== undefined && guard.isGuardProcess(stat);
  }

  /**
   * A wake-up while the tree is being taken down. Contained: the cgroup's word (cgroup.events)
   * and leash's children (checkContainedStop). The tree: reap, and end once none of our children
   * lives. That is exact for emptiness (we are the subreaper: the topmost live process of any
   * branch is our child) and costs one read of our children files, where a walk of a dying
   * 200-process tree costs milliseconds of the CPU the dying processes need (3-14 ms, measured,
   * on 2 busy cores). Newcomers are the timers' (STOP_NEWCOMER_WALK_MS, the sweep, the kill repeat).
   */
  private settle(): void {
    if (this.phase !== 'stopping' && this.phase !== 'killing') {
      this.check();
      return;
    }
    if (this.contained) {
      this.checkContainedStop(this.contained);
      return;
    }
    // None of our children seems alive: confirm with a walk that reads until nothing new shows (a
    // children list read while they die can skip one), which ends leash only if the tree is empty.
    if (this.adoptions.reap() === 0 && this.runnerExitCode !== null) this.check();
  }

  /**
   * Contained, while the tree dies, on any wake-up (cgroup.events, a SIGCHLD once heard again, the
   * runner's exit): ends leash once the run is empty, the cgroup (one read of cgroup.events) and
   * leash's children (none still on its way out, none outside the cgroup). No reaping while the
   * cgroup lives (our zombies hold nothing but their pids), and no signal: the passes are the
   * timers' (onSweep), so the freeze's own events never start another.
   */
  private checkContainedStop(contained: CgroupContainment): void {
    if (contained.cgroupEmpty()) {
      // Heard before reaping: a child that becomes a zombie after the reap below still wakes us.
      this.muteChildren(false);
      if (contained.isEmpty()) {
        if (this.runnerExitCode !== null) {
          this.end();
          return;
        }
      } else if (!this.outsidersSignalled) {
        // The cgroup is empty and descendants of leash live on: they left the cgroup.
        this.outsidersSignalled = true;
        contained.signalNewcomers(this.phaseSignal());
      }
    }
    this.state.publish();
  }

  private muteChildren(mute: boolean): void {
    if (mute === this.childrenMuted) return;
    this.childrenMuted = mute;
    if (mute) process.removeListener('SIGCHLD', this.childListener);
    else process.on('SIGCHLD', this.childListener);
  }

  /** Looks again: the process tree is walked; contained, the cgroup's list and leash's children are read. */
  private observe(): void {
    if (!this.tree) {
      this.containment.refresh();
      return;
    }
    const previous = this.tree.refresh();
    if (this.phase === 'running') this.paceSweep(previous);
  }

  /**
   * Sweeps at 200 ms while the tree changes (slower if a walk is dear: CHANGING_WALK_SHARE),
   * backing off once it holds still to the quiet pace: 1 s for a small tree, slower for one whose
   * walk is dear (see RUNNING_SWEEP_MS).
   */
  private paceSweep(previous: ReadonlyMap<number, unknown>): void {
    const tree = this.tree as TreeContainment;
    let changed = previous.size !== tree.tree.size;
    if (!changed) for (const pid of tree.tree.keys()) if (!previous.has(pid)) { changed = true; break; }
    // In 100 ms steps: a walk's cost jitters, the pace need not.
    const quiet = Math.min(RUNNING_SWEEP_MS, Math.max(RUNNING_SWEEP_QUIET_MIN_MS, Math.round((tree.lastWalkMs * IDLE_WALK_SHARE) / 100) * 100));
    const busy = Math.min(RUNNING_SWEEP_MS, Math.max(RUNNING_SWEEP_MIN_MS, Math.round((tree.lastWalkMs * CHANGING_WALK_SHARE) / 100) * 100));
    const next = changed ? busy : Math.min(this.runningSweepMs * 2, quiet);
    if (next === this.runningSweepMs) return;
    this.runningSweepMs = next;
    this.armSweep(next);
  }

  private phaseSignal(): NodeJS.Signals {
    return this.phase === 'killing' ? 'SIGKILL' : this.stopSignal;
  }

  /** The sweep's timer: while the tree dies, a pass for what the stop has not reached; otherwise the check. */
  private onSweep(): void {
    if (this.phase === 'stopping' || this.phase === 'killing') this.passForNewcomers();
    else this.check();
  }

  /** While the tree dies (timers only): the phase's signal to what came after the last pass, then the check. */
  private passForNewcomers(): void {
    if (this.phase !== 'stopping' && this.phase !== 'killing') return;
    this.containment.signalNewcomers(this.phaseSignal());
    if (this.contained) this.checkContainedStop(this.contained);
    else this.endIfEmpty();
  }

  /** Ends leash when the runner is gone and the last look found the run empty. */
  private endIfEmpty(): boolean {
    if (this.runnerExitCode === null || !this.containment.isEmpty()) return false;
    this.end();
    return true;
  }

  private check(): void {
    if (this.phase === 'exited' || this.phase === 'starting') return;
    if (this.runnerExitCode !== null && this.phase === 'running' && this.containment.holdsDescendants(this.runnerPid)) {
      // The runner is gone and left descendants: stop them first, from what the last look saw;
      // the stop's timers look again for the newcomers.
      this.beginStop('SIGTERM', `runner exited with ${this.runnerExitCode}, descendants remain`);
      return;
    }
    if (this.phase === 'stopping' || this.phase === 'killing') {
      if (this.contained) this.checkContainedStop(this.contained);
      else this.passForNewcomers();
      if ((this.phase as Phase) === 'exited') return;
      this.state.publish();
      return;
    }
    this.adoptions.reap();
    this.observe();
    if (this.runnerExitCode !== null && this.endIfEmpty()) return;
    if (this.runnerExitCode !== null && this.phase === 'running') {
      this.beginStop('SIGTERM', `runner exited with ${this.runnerExitCode}, descendants remain`);
      return;
    }
    this.state.publish();
  }

  /**
   * The stop, whatever holds the run: the signal to every member at once (the containment's first
   * pass, named), the phase line, the grace, and the timers' passes for what came after (the
   * first once a tree that honours the signal has had time to go, STOP_NEWCOMER_WALK_MS; then
   * each sweep). Until then a wake-up only looks whether the run is empty (settle).
   */
  private beginStop(signal: NodeJS.Signals, reason: string): void {
    if (this.phase !== 'running') return;
    this.stopSignal = signal;
    // Set at once: no second stop begins while the first pass runs (contained, a freeze is awaited).
    this.phase = 'stopping';
    this.options.beforeStop?.(signal, this.options.graceMs);
    this.after(this.options.graceMs, () => this.escalate());
    // Contained and watched: while cgroup.events says the tree lives, a SIGCHLD (up to one per
    // dying member) has nothing to tell; leash keeps off the CPU the dying tree needs.
    if (this.cgroup?.watching) this.muteChildren(true);
    void this.containment.signalAll(signal).then(({ reached, name }) => {
      if (this.phase !== 'stopping') return;
      if (reached === 0 && this.endIfEmpty()) return;
      this.enterPhase('stopping', reason);
      name();
      this.armSweep(STOPPING_SWEEP_MS);
      this.lastCheckAt = performance.now();
      this.after(STOP_NEWCOMER_WALK_MS, () => this.passForNewcomers());
      this.scheduleCheck();
    });
  }

  /** The grace is over: SIGKILL to everything left (named first), again while anything is left. */
  private escalate(): void {
    if (this.phase !== 'stopping') return;
    // The process tree looks again first (the kill goes to the last walk); contained, the kill
    // reads the cgroup itself, and the zombies left by the dying tree are reaped after it.
    if (this.tree) {
      this.adoptions.reap();
      this.observe();
    }
    if (this.endIfEmpty()) return;
    this.escalated = true;
    this.enterPhase('killing', `grace of ${this.options.graceMs} ms over`);
    this.containment.killAll();
    // SIGKILL cannot be ignored, but a process forked in mid-signal can miss it: say it again.
    this.after(KILL_REPEAT_MS, () => {
      this.containment.newPhase();
      this.passForNewcomers();
    }, true);
  }

  private enterPhase(phase: Phase, reason?: string): void {
    this.phase = phase;
    if (phase === 'stopping') this.options.onStop?.();
    const s = this.snapshot();
    this.options.log(
      `phase=${phase} active=${s.active_children} adopted=${s.adopted_children} ` +
        `orphaned_total=${s.orphaned_children_total} reaped_total=${s.reaped_children_total} ` +
        `reaped_orphans_total=${s.reaped_orphans_total} escalated=${s.escalated}` +
        (s.runner_exit_code === null ? '' : ` runner_exit_code=${s.runner_exit_code}`) +
        (reason ? ` reason="${reason}"` : ''),
    );
    this.state.publish(true);
  }

  private end(): void {
    // Contained, the counts come from the last look, which may predate the last exits: the final
    // document says what is left now (nothing: the run is empty).
    if (this.contained) {
      this.contained.emptied();
      this.adoptions.adopted = new Map();
    }
    this.enterPhase('exited');
    const done = () => {
      this.cleanUp();
      this.finish?.(this.runnerExitCode ?? 1);
    };
    const after = this.options.afterStop;
    if (!after) return done();
    // The guard stays until then: what the hook ends is still guarded.
    void Promise.resolve()
      .then(after)
      .catch((error: unknown) => this.options.log(`warning: after the stop: ${error instanceof Error ? error.message : String(error)}`))
      .then(done);
  }

  /**
   * The command never ran (not found, not executable, a stop or the parent's death first): the
   * state document still says so, with the code leash exits with, so that `leash status` never
   * shows an earlier run's end for this one.
   */
  private endBeforeStart(code: number): number {
    this.runnerExitCode = code;
    this.phase = 'exited';
    this.state.publish(true);
    this.cleanUp();
    return code;
  }

  private cleanUp(): void {
    this.clientWatch?.stop();
    this.parent.stop();
    this.removeCgroup();
    this.options.guard?.release();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.state.close();
    for (const [event, listener] of this.listeners) process.removeListener(event, listener);
    this.listeners.length = 0;
  }

  /**
   * Removes the run's cgroup, then lets its guard go. A cgroup that still holds a process (a
   * runner that failed to start, still exiting) is killed and waited for, briefly.
   */
  private removeCgroup(): void {
    const cgroup = this.cgroup;
    if (!cgroup) return;
    let removed = cgroup.remove();
    // Killed, waited for on cgroup.events, removed deepest first; never while leash is in it (it
    // could not leave: cgroup.kill would end leash too).
    if (!removed && !cgroup.holds(this.self)) {
      removed = cgroup.destroy(1000);
      this.adoptions.reap();
    }
    if (!removed) this.options.log(`warning: cannot remove ${cgroup.directory}`);
    this.cgroupGuard?.release();
  }
}
