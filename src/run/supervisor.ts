// The Linux tree supervisor behind `leash run`: a child subreaper that starts one command (the
// runner) in its own session, adopts and reaps every orphan of the runner's tree, and takes the
// whole tree down (the stop signal, then SIGKILL after a grace) when asked to stop, when the
// runner exits, or when its own parent dies.
//
// Reaping rule: libuv owns the runner's exit status and reaps it with waitpid(runner). Everything
// else that becomes our child is an adopted orphan, and we reap each one with waitpid(thatPid).
// waitpid(-1) is never called: it would steal the runner's status from libuv.
//
// Wake-ups: SIGCHLD (an adopted orphan or the runner changed state), the runner's exit event,
// control signals, the parent-death signal, and timers (grace, and a slow safety sweep). The
// tree's last process to die is always our direct child by then (every dead ancestor hands
// its orphans to us), so SIGCHLD alone tells us when the tree has emptied.
import { ChildProcess } from 'node:child_process';
import { spawn } from '../sys/child-process.js';
import { ownGroupIsOrphaned } from '../sys/job-control.js';
import { ownProcessGroupId, signalProcess } from '../sys/processes.js';
import { readChildren, readProcStat, isDeadState, isStoppedState, processIsEnding, type ProcStat } from '../sys/procfs.js';
import { walkDescendantsUntilNoNewcomer, walkOnce, type ProcessTree } from '../sys/tree.js';
import {
  getParentPid,
  loadNative,
  nativeLoaded,
  nativeLoadFailure,
  reapChild,
  setChildSubreaper,
  setParentDeathSignal,
} from '../sys/native.js';
import { signalGroupWithWitness, signalIfSame, signalNumber } from '../sys/verified-signal.js';
import type { TreeCgroup } from '../sys/cgroup.js';
import { CgroupContainment } from './containment/cgroup.js';
import { StatePublisher, type Phase, type RunState } from './state.js';
import { CgroupGuard } from './cgroup-guard.js';
import { RUN_TOKEN_VARIABLE, type RunGuard } from './guard.js';
import { watchClientInput } from './client-watch.js';
import { CommandCache, commandOf, EndedRecord, LINE_LIMIT, nameProcesses, RECORD_LIMIT } from './ended.js';
import type { WriterWatch } from '../sys/writer-watch.js';
import { ALL_STOP_SIGNALS, earlyStopRequest, FORWARDED_SIGNALS, PARENT_DEATH_PROMPT, stopSignals, SUSPEND_SIGNALS, treeSignalFor } from './signals.js';

/** Signals that stop the tree (see signals.ts for what every other signal does); stopSignals() drops SIGHUP under --ignore-hangup. */
export const CONTROL_SIGNALS = ALL_STOP_SIGNALS;
/** The parent-death signal we ask the kernel for; it only wakes us to check getppid(). */
const PARENT_DEATH_SIGNAL = PARENT_DEATH_PROMPT;
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
const PARENT_CHECK_MS = 1000;
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
/** Contained: the members a signal is about to reach, the first few read (pid, command line), the rest counted. */
interface ContainedNames {
  signal: NodeJS.Signals;
  read: Array<{ stat: ProcStat; command: string }>;
  unlisted: number;
}

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
}

/** The outcome of starting the runner: its child handle, or the exit code for why it failed. */
export type StartFailure = { code: 126 | 127; message: string };

/** Maps a spawn error to the shell's conventions: 127 not found, 126 found but not runnable. */
export function classifySpawnError(command: string, error: NodeJS.ErrnoException): StartFailure {
  if (error.code === 'ENOENT') return { code: 127, message: `${command}: command not found` };
  return { code: 126, message: `${command}: cannot execute (${error.code ?? error.message})` };
}

/** Starts the runner in its own session (or, keeping the terminal, in leash's); resolves once it runs, or with why it cannot. */
export function startRunner(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  keepTerminal = false,
): Promise<ChildProcess | StartFailure> {
  return new Promise((resolve) => {
    // detached-spawn: ok — the runner gets its own session under leash's subreaper, which owns the whole tree.
    const child = spawn(command, args, { stdio: 'inherit', detached: !keepTerminal, env });
    child.once('spawn', () => resolve(child));
    child.once('error', (error: NodeJS.ErrnoException) => resolve(classifySpawnError(command, error)));
  });
}

// A process that changes group after a signal is new again: the group signal may have missed it.
const key = (stat: { pid: number; startTime: number; pgid: number }) => `${stat.pid}:${stat.startTime}:${stat.pgid}`;

export class TreeSupervisor {
  phase: Phase = 'starting';
  private readonly self = process.pid;
  private readonly ownPgid = ownProcessGroupId();
  /** Read again while unknown (a /proc read failed at start, EMFILE say): see mayKillGroupOf. */
  private knownSid = readProcStat('self')?.sid;
  private runnerPid = 0;
  private runnerStart = 0;
  private runnerExitCode: number | null = null;
  private requestedSignal: NodeJS.Signals | undefined;
  private stopSignal: NodeJS.Signals = 'SIGTERM';
  private escalated = false;
  private tree: ProcessTree = new Map();
  /** Our direct children other than the runner, by pid, with their start times. */
  private adopted = new Map<number, number>();
  private orphanedTotal = 0;
  private reapedTotal = 0;
  private reapedOrphansTotal = 0;
  /** Processes (pid:start) already sent the current phase's signal. */
  private signalled = new Set<string>();
  private originalParent = 0;
  /**
   * Read before the command starts (process.ppid is getppid() at each read): contained, the
   * parent-death signal is armed only after, and a parent that died meanwhile must still show.
   */
  private readonly parentAtStart = process.ppid;
  private readonly state: StatePublisher;
  private readonly timers = new Set<NodeJS.Timeout>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private runningSweepMs = RUNNING_SWEEP_MS;
  /** How long the last walk took: it sets the quiet sweep's pace. */
  private lastWalkMs = 0;
  private checkQueued = false;
  private lastCheckAt = -Infinity;
  private reapQueued = false;
  private lastReapAt = -Infinity;
  private finish: ((code: number) => void) | undefined;
  private readonly listeners: Array<[string, (...args: unknown[]) => void]> = [];
  private clientWatch: WriterWatch | undefined;
  private resumedFromSuspend = false;
  private readonly cgroup: TreeCgroup | undefined;
  /** Contained: the run as the union of the cgroup and leash's descendants outside it. */
  private readonly contained: CgroupContainment | undefined;
  /** Contained: whether the descendants outside the cgroup were signalled once it emptied. */
  private outsidersSignalled = false;
  private cgroupGuard: CgroupGuard | undefined;
  /** The SIGCHLD listener, which a contained stop mutes while cgroup.events says the tree lives. */
  private readonly childListener = () => this.onChildEvent();
  private childrenMuted = false;
  private readonly ended: EndedRecord;
  private readonly commands = new CommandCache();
  /** signal:pid:start of the processes already named as sent that signal. */
  private readonly named = new Set<string>();
  /**
   * Contained: per signal, the pids already named or counted as sent it. By pid alone: most were
   * never read (see prepareNames); a pid reused inside the cgroup during the stop goes unnamed.
   */
  private readonly containedNamed = new Map<NodeJS.Signals, Set<number>>();

  constructor(private readonly options: TreeSupervisorOptions) {
    this.cgroup = options.cgroup;
    this.contained = options.cgroup && new CgroupContainment(options.cgroup, {
      self: this.self,
      isGuard: (pid) => this.isGuard(pid),
      liveChildren: () => this.reapAdopted(),
    });
    this.state = new StatePublisher(options.statePath, () => this.snapshot(), (message) =>
      options.log(`warning: ${message}`),
    undefined, options.containment === undefined ? undefined : { containment: options.containment, ...(options.containers && { containers: options.containers }) });
    this.ended = new EndedRecord(options.statePath, (message) => options.log(`warning: ${message}`));
  }

  /**
   * Names, on stderr and beside the state document, the live processes of the last walk just sent
   * `signal` (contained, prepareNames and logNames do it).
   */
  private nameEnded(signal: NodeJS.Signals): void {
    const candidates = this.tree.values();
    // The runner that exited by itself was not ended by leash (the last walk may predate its exit).
    const live = [...candidates].filter((stat) => !isDeadState(stat.state) &&
      !(stat.pid === this.runnerPid && this.runnerExitCode !== null && signal !== 'SIGKILL') &&
      !this.named.has(`${signal}:${stat.pid}:${stat.startTime}`));
    if (live.length === 0) return;
    for (const stat of live) this.named.add(`${signal}:${stat.pid}:${stat.startTime}`);
    const { named, total } = this.ended.add(live, signal, (stat) => this.commands.commandFor(stat));
    this.options.log(`${signal === 'SIGKILL' ? 'killed' : 'ending'} ${total} process${total === 1 ? '' : 'es'} with ${signal}: ${nameProcesses(named, total)}`);
  }

  /**
   * Contained, before a signal: the members of `pids` not yet named for it, the first few read now
   * (a process has no command line once it dies), the others only counted. Only what is shown is
   * read: the stderr line's names, or with a state document the record's. Reading all of a
   * 200-process tree (stat and command line) before the signal delayed it by 20-45 ms at load 13.
   */
  private prepareNames(signal: NodeJS.Signals, pids: readonly number[]): ContainedNames {
    let done = this.containedNamed.get(signal);
    if (!done) this.containedNamed.set(signal, (done = new Set()));
    const limit = this.options.statePath === undefined ? LINE_LIMIT : RECORD_LIMIT;
    const read: ContainedNames['read'] = [];
    let unlisted = 0;
    for (const pid of pids) {
      if (done.has(pid)) continue;
      done.add(pid);
      // The runner that exited by itself was not ended by leash.
      if (pid === this.runnerPid && this.runnerExitCode !== null && signal !== 'SIGKILL') continue;
      if (read.length >= limit) {
        unlisted += 1;
        continue;
      }
      const stat = readProcStat(pid);
      if (!stat || isDeadState(stat.state)) continue;
      read.push({ stat, command: commandOf(pid) ?? '?' });
    }
    return { signal, read, unlisted };
  }

  /** Contained, after the signal: says what prepareNames found (stderr, and the record beside the state document). */
  private logNames({ signal, read, unlisted }: ContainedNames): void {
    if (read.length === 0 && unlisted === 0) return;
    const commands = new Map(read.map(({ stat, command }) => [stat.pid, command]));
    const { named, total } = this.ended.add(read.map(({ stat }) => stat), signal, (stat) => commands.get(stat.pid) ?? '?', unlisted);
    this.options.log(`${signal === 'SIGKILL' ? 'killed' : 'ending'} ${total} process${total === 1 ? '' : 'es'} with ${signal}: ${nameProcesses(named, total)}`);
  }

  snapshot(): Omit<RunState, 'updated_at'> {
    let active = 0;
    for (const stat of this.tree.values()) if (!isDeadState(stat.state)) active += 1;
    if (this.contained) active = this.contained.count();
    return {
      active_children: active,
      adopted_children: this.adopted.size,
      escalated: this.escalated,
      orphaned_children_total: this.orphanedTotal,
      phase: this.phase,
      reaped_children_total: this.reapedTotal,
      reaped_orphans_total: this.reapedOrphansTotal,
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
    // Contained, main.ts began loading koffi at leash's start, beside the cgroup's making.
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
    for (const signal of FORWARDED_SIGNALS) {
      // With --die-with-parent, this is the kernel's parent-death signal: only a prompt to look.
      if (signal === PARENT_DEATH_SIGNAL && this.options.dieWithParent) continue;
      this.on(signal, () => this.forwardToRunner(signal));
    }
    for (const signal of SUSPEND_SIGNALS) this.on(signal, () => this.suspend(signal));
    // A stop asked for before these handlers existed: the command is not started at all.
    const early = earlyStopRequest();
    if (early) {
      this.requestedSignal = early;
      this.options.log(`${early} before the command started; not starting it`);
      this.cleanUp();
      return 128 + signalNumber(early);
    }
    if (this.options.dieWithParent && !this.armParentDeath()) {
      this.options.log('parent already gone before the command started; not starting it');
      this.cleanUp();
      return 1;
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
    if (starting === undefined) {
      this.cleanUp();
      return 1;
    }
    const started = await starting;
    if (!(started instanceof ChildProcess)) {
      this.options.log(started.message);
      this.cleanUp();
      return started.code;
    }
    this.runnerPid = started.pid ?? 0;
    // The runner leads its own group (setsid): guard it before the first walk. Keeping the
    // terminal, it is in leash's group, which no one signals as a whole.
    const runnerStat = readProcStat(this.runnerPid);
    this.runnerStart = runnerStat?.startTime ?? 0;
    if (runnerStat && !this.options.keepTerminal) guard?.track(new Map([[this.runnerPid, runnerStat.startTime]]));
    started.once('exit', (code, signal) => {
      this.runnerExitCode = code ?? 128 + (signal ? signalNumber(signal) : 0);
      this.reapedTotal += 1;
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
    else if (this.options.dieWithParent && this.parentIsGone(false)) this.beginStop(this.options.parentDeathSignal ?? 'SIGTERM', 'parent died');
    // Contained, nothing is walked while the command runs: the sweep only refreshes the state
    // document's count (one read of cgroup.procs), and only when there is a document.
    if (!this.cgroup) this.armSweep(RUNNING_SWEEP_MS);
    else if (this.options.statePath !== undefined && this.phase === 'running') this.armSweep(RUNNING_SWEEP_MS);
    if (this.cgroup && !this.cgroup.watching) this.armSweep(STOPPING_SWEEP_MS);
    // The watch polls through koffi: without it (said by startNativeLate) the parent alone is watched.
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
    this.sweepTimer = this.after(ms, () => this.check(), true);
  }

  /**
   * Parent death, robustly: PR_SET_PDEATHSIG wakes us at once, but fires when the *thread* that
   * forked us exits (and again at each reparenting), so it only prompts a getppid() check; a
   * 1 s getppid() check covers a lost signal. Returns false when the parent is already gone
   * (it died before the signal was armed: the fork race).
   */
  private armParentDeath(): boolean {
    this.originalParent = this.parentAtStart;
    this.on(PARENT_DEATH_SIGNAL, () => this.checkParent(true));
    if (nativeLoaded()) setParentDeathSignal(signalNumber(PARENT_DEATH_SIGNAL));
    if (this.parentIsGone(false)) return false;
    this.after(PARENT_CHECK_MS, () => this.checkParent(false), true);
    return true;
  }

  private parentIsGone(signalled: boolean): boolean {
    const now = nativeLoaded() ? getParentPid() : process.ppid;
    // Outside our pid namespace the parent reads as 0: then only the kernel's signal can tell.
    if (this.originalParent === 0) return signalled;
    // Still our parent (getppid() says so: the pid names it) but ending as a whole: a SIGKILLed
    // client's main thread, which forked us, is gone and prompted the signal, while its other
    // threads take up to tens of ms more (measured on 2 busy cores) to let the reparenting come.
    // Read on the signal only: the once-a-second look stays one getppid().
    return now !== this.originalParent || (signalled && processIsEnding(this.originalParent));
  }

  private checkParent(signalled: boolean): void {
    if (this.phase !== 'running' || !this.parentIsGone(signalled)) return;
    this.beginStop(this.options.parentDeathSignal ?? 'SIGTERM', 'parent died');
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
      this.forgetSignalled();
      if (this.contained) {
        this.stopSignal = treeSignalFor(signal);
        void this.containedPass(this.contained, this.stopSignal);
        this.signalOutsiders(this.contained);
      } else {
        this.signalTree(treeSignalFor(signal));
      }
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
    if (this.cgroup) {
      // Job control's own signals, not the freezer: the tree sees SIGSTOP and SIGCONT as without
      // leash. Each member by identity; what someone else had stopped stays stopped.
      const stoppedBefore = new Set<number>();
      for (const pid of this.cgroup.members()) {
        const stat = readProcStat(pid);
        if (stat && isStoppedState(stat.state) && stat.pgid !== this.ownPgid) stoppedBefore.add(pid);
      }
      this.cgroup.signalMembers('SIGSTOP', new Set());
      this.options.log(`${signal}: the command's tree and leash stop until continued`);
      signalProcess(this.self, 'SIGSTOP');
      this.options.log('continued: the tree resumes');
      this.cgroup.signalMembers('SIGCONT', stoppedBefore);
      this.scheduleCheck();
      return;
    }
    this.reapAdopted();
    this.observe();
    // What someone else had stopped before (a debugger, a `kill -STOP`) is theirs to continue: it
    // stays stopped when the tree resumes. Not what is in leash's own group: the terminal's
    // SIGTSTP has just stopped that (--keep-terminal).
    const stoppedBefore = new Set<string>();
    for (const stat of this.tree.values()) if (isStoppedState(stat.state) && stat.pgid !== this.ownPgid) stoppedBefore.add(key(stat));
    this.signalTree('SIGSTOP', new Set());
    this.options.log(`${signal}: the command's tree and leash stop until continued`);
    signalProcess(this.self, 'SIGSTOP');
    // Continued. What was stopped above is continued, and the processes of leash's group too
    // (a SIGCONT sent to leash alone leaves the terminal's stop on them).
    this.options.log('continued: the tree resumes');
    this.observe();
    this.signalTree('SIGCONT', new Set(), stoppedBefore);
    // The SIGCONT that resumed leash is on its way to the listener: it is not the runner's.
    this.resumedFromSuspend = true;
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
        this.reapAdopted();
        // Contained there is no sweep to publish the counters: the reaps do (at most once a second).
        if (this.contained && this.options.statePath !== undefined) {
          this.contained.refresh();
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

  /** Whether `pid` is one of the guard's supervisor processes (libuv reaps those). */
  private isGuard(pid: number): boolean {
    if (this.cgroupGuard?.isGuardPid(pid)) return true;
    const guard = this.options.guard;
    if (!guard || !guard.mayBeGuard(pid)) return false;
    const stat = readProcStat(pid);
    return stat !== undefined && guard.isGuardProcess(stat);
  }

  /**
   * Reaps adopted orphans that have ended; returns how many of our children still live (the
   * guard aside, the runner included while libuv owns it). Never touches the runner then.
   */
  private reapAdopted(): number {
    let live = 0;
    const children = readChildren(this.self) ?? [...walkOnce(this.self).values()]
      .filter((stat) => stat.ppid === this.self)
      .map((stat) => stat.pid);
    for (const pid of children) {
      if (pid === this.runnerPid && this.runnerExitCode === null) {
        live += 1;
        continue;
      }
      if (this.isGuard(pid)) continue;
      const result = reapChild(pid);
      if (result.state === 'exited' || result.state === 'signaled') {
        this.reapedTotal += 1;
        this.reapedOrphansTotal += 1;
        if (!this.adopted.delete(pid)) this.orphanedTotal += 1;
      } else if (result.state === 'running') {
        live += 1;
      }
    }
    return live;
  }

  /**
   * A SIGCHLD while the tree is being taken down: reap, and end once none of our children lives.
   * That is exact for emptiness (we are the subreaper: the topmost live process of any branch is
   * our child) and costs one read of our children files, where a walk of a dying 200-process
   * tree costs milliseconds of the CPU the dying processes need (3-14 ms, measured, on 2 busy
   * cores). Newcomers are the walk's job (STOP_NEWCOMER_WALK_MS, the sweep, the kill repeat).
   */
  private settle(): void {
    if (this.phase !== 'stopping' && this.phase !== 'killing') {
      this.check();
      return;
    }
    // Contained and watched, "empty" is cgroup.events' word: nothing to do while it says populated.
    if (this.cgroup?.watching) {
      if (!this.cgroup.populated()) this.check();
      return;
    }
    // None of our children seems alive: confirm with a walk that reads until nothing new shows (a
    // children list read while they die can skip one), which ends leash only if the tree is empty.
    if (this.reapAdopted() === 0 && this.runnerExitCode !== null) this.check();
  }

  /** Re-walks the tree and refreshes the adoption record and counters. */
  private observe(): void {
    if (this.contained) {
      this.observeContained(this.contained);
      return;
    }
    const previous = this.tree;
    const walkStart = performance.now();
    this.tree = walkDescendantsUntilNoNewcomer(this.self);
    this.lastWalkMs = performance.now() - walkStart;
    // The guard is our child but not part of the tree, nor is its one child, the watchdog of its
    // teardown (src/supervisor/watchdog.ts).
    const guards = new Set<number>();
    for (const stat of this.tree.values()) if (this.options.guard?.isGuardProcess(stat)) guards.add(stat.pid);
    for (const stat of [...this.tree.values()]) if (guards.has(stat.pid) || guards.has(stat.ppid)) this.tree.delete(stat.pid);
    const direct = new Map<number, number>();
    for (const stat of this.tree.values()) {
      if (stat.ppid !== this.self) continue;
      if (stat.pid === this.runnerPid && this.runnerExitCode === null) continue;
      direct.set(stat.pid, stat.startTime);
      if (this.adopted.get(stat.pid) !== stat.startTime) this.orphanedTotal += 1;
    }
    this.adopted = direct;
    // Newcomers only (and last walk's once more): a process's command line is gone once it dies.
    this.commands.update(this.tree.values());
    this.guardGroups();
    if (this.phase === 'running') this.paceSweep(previous);
  }

  /**
   * Contained: no walk. The members are counted from the cgroup's own list; our children other
   * than the runner and the guard are the adopted orphans.
   */
  private observeContained(contained: CgroupContainment): void {
    contained.refresh();
    const direct = new Map<number, number>();
    for (const pid of readChildren(this.self) ?? []) {
      if ((pid === this.runnerPid && this.runnerExitCode === null) || this.isGuard(pid)) continue;
      const stat = readProcStat(pid);
      // A zombie is still an adopted orphan until it is reaped: dropped here, its reaping would
      // count it as adopted a second time.
      if (!stat) continue;
      direct.set(pid, stat.startTime);
      if (this.adopted.get(pid) !== stat.startTime) this.orphanedTotal += 1;
    }
    this.adopted = direct;
  }

  /** Whether the tree is empty: contained, the cgroup holds no live process; else the last walk saw none. */
  private treeIsEmpty(): boolean {
    // A member leaves the cgroup in exit(), before it is a zombie to reap: contained, the tree is
    // empty once the cgroup is and none of our children is still on its way out (each such one
    // sends a SIGCHLD when it gets there, which checks again).
    return this.contained ? this.contained.isEmpty() : this.tree.size === 0;
  }

  /**
   * Sweeps at 200 ms while the tree changes (slower if a walk is dear: CHANGING_WALK_SHARE),
   * backing off once it holds still to the quiet pace: 1 s for a small tree, slower for one whose
   * walk is dear (see RUNNING_SWEEP_MS).
   */
  private paceSweep(previous: ProcessTree): void {
    let changed = previous.size !== this.tree.size;
    if (!changed) for (const pid of this.tree.keys()) if (!previous.has(pid)) { changed = true; break; }
    // In 100 ms steps: a walk's cost jitters, the pace need not.
    const quiet = Math.min(RUNNING_SWEEP_MS, Math.max(RUNNING_SWEEP_QUIET_MIN_MS, Math.round((this.lastWalkMs * IDLE_WALK_SHARE) / 100) * 100));
    const busy = Math.min(RUNNING_SWEEP_MS, Math.max(RUNNING_SWEEP_MIN_MS, Math.round((this.lastWalkMs * CHANGING_WALK_SHARE) / 100) * 100));
    const next = changed ? busy : Math.min(this.runningSweepMs * 2, quiet);
    if (next === this.runningSweepMs) return;
    this.runningSweepMs = next;
    this.armSweep(next);
  }

  /** Tells the guard the tree's process groups, each with its leader's start time when seen. */
  private guardGroups(): void {
    const guard = this.options.guard;
    if (!guard) return;
    const groups = new Map<number, number | undefined>();
    for (const stat of this.tree.values()) {
      if (!this.mayKillGroupOf(stat) || isDeadState(stat.state)) continue;
      if (groups.has(stat.pgid)) continue;
      // A leader that exited (a zombie its parent has not reaped yet) is gone: the group's proof is its members now.
      const leader = this.tree.get(stat.pgid);
      groups.set(stat.pgid, leader && !isDeadState(leader.state) ? leader.startTime : undefined);
    }
    guard.track(groups);
  }

  /**
   * Whether the group of `stat` (a process of the tree) may be signalled as a whole, by leash or
   * its guard: never leash's own group, and, in leash's own session (--keep-terminal), only a
   * group the tree created, i.e. led by a process of the tree. Any process of a session may join
   * any group of that session: a tree process that joins the interactive shell's group (or that
   * of leash's parent) would otherwise have leash killpg the shell. Elsewhere a group is the
   * tree's: a session made by the tree holds only the tree (orphans come to the subreaper), and a
   * tree process cannot move another process into its group, nor get the pid of a live group.
   */
  private mayKillGroupOf(stat: ProcStat): boolean {
    if (stat.pgid <= 1 || stat.pgid === this.ownPgid) return false;
    this.knownSid ??= readProcStat('self')?.sid;
    // Our session unknown: every group is judged as if it were in it (a group led by a tree
    // process is still signalled whole, any other member by member), never the other way round.
    if (this.knownSid !== undefined && stat.sid !== this.knownSid) return true;
    return this.tree.get(stat.pgid)?.pgid === stat.pgid;
  }

  private check(): void {
    if (this.phase === 'exited' || this.phase === 'starting') return;
    if (this.runnerExitCode !== null && this.phase === 'running' && this.sawDescendants()) {
      // The runner is gone and left descendants: stop them first, from what the last walk saw;
      // beginStop walks right after for the newcomers.
      this.beginStop('SIGTERM', `runner exited with ${this.runnerExitCode}, descendants remain`);
      return;
    }
    if (this.contained && (this.phase === 'stopping' || this.phase === 'killing')) {
      this.checkContainedStop(this.contained);
      return;
    }
    this.reapAdopted();
    this.observe();
    if (this.phase === 'stopping' || this.phase === 'killing') {
      // The processes the stop had not reached yet (newcomers), named too: before SIGKILL, after the stop signal.
      if (this.phase === 'killing') this.nameEnded('SIGKILL');
      this.signalTree(this.phase === 'killing' ? 'SIGKILL' : this.stopSignal);
      if (this.phase === 'stopping') this.nameEnded(this.stopSignal);
    }
    const runnerDone = this.runnerExitCode !== null;
    if (runnerDone && this.treeIsEmpty()) {
      this.end();
      return;
    }
    if (runnerDone && this.phase === 'running') {
      this.beginStop('SIGTERM', `runner exited with ${this.runnerExitCode}, descendants remain`);
      return;
    }
    this.state.publish();
  }

  /** Whether the last walk saw any live process besides the runner. */
  private sawDescendants(): boolean {
    if (this.contained) return !this.contained.isEmpty();
    for (const stat of this.tree.values()) {
      if (stat.pid !== this.runnerPid && !isDeadState(stat.state)) return true;
    }
    return false;
  }

  /**
   * Contained, while the tree dies, on any wake-up (cgroup.events, a SIGCHLD once heard again, the
   * runner's exit): ends leash once the run is empty, the cgroup (one read of cgroup.events) and
   * leash's children (none still on its way out, none outside the cgroup). No reaping while the
   * cgroup lives (our zombies hold nothing but their pids), and no signal: a pass for newcomers
   * is the timers' (sweepContainedStop), so the freeze's own events never start another.
   */
  private checkContainedStop(containment: CgroupContainment): void {
    if (containment.cgroupEmpty()) {
      // Heard before reaping: a child that becomes a zombie after the reap below still wakes us.
      this.muteChildren(false);
      if (containment.isEmpty()) {
        if (this.runnerExitCode !== null) {
          this.end();
          return;
        }
      } else if (!this.outsidersSignalled) {
        // The cgroup is empty and descendants of leash live on: they left the cgroup.
        this.outsidersSignalled = true;
        this.signalOutsiders(containment);
      }
    }
    this.state.publish();
  }

  /**
   * Contained, from the timers while the tree dies (STOP_NEWCOMER_WALK_MS after the first signal,
   * then each sweep): the phase's signal to members that came after the last pass (a fork in the
   * middle of it), and a walk for the descendants of leash outside the cgroup.
   */
  private sweepContainedStop(containment: CgroupContainment): void {
    if (this.phase !== 'stopping' && this.phase !== 'killing') return;
    const signal = this.phase === 'killing' ? 'SIGKILL' : this.stopSignal;
    if (!containment.cgroupEmpty() && containment.hasNewcomers()) void this.containedPass(containment, signal);
    this.signalOutsiders(containment);
    this.checkContainedStop(containment);
  }

  /** Contained: one pass of the signal over the cgroup, frozen, the few names shown read meanwhile. */
  private async containedPass(containment: CgroupContainment, signal: NodeJS.Signals): Promise<number> {
    let names: ContainedNames | undefined;
    const reached = await containment.signalMembers(signal, (pids) => {
      names = this.prepareNames(signal, pids);
    });
    if (names) this.logNames(names);
    return reached;
  }

  /** Contained: the phase's signal to the descendants of leash outside the cgroup, by identity, named. */
  private signalOutsiders(containment: CgroupContainment): void {
    const signal = this.phase === 'killing' ? 'SIGKILL' : this.stopSignal;
    // Read before the signal: a process has no command line once it is gone.
    this.commands.update(containment.findOutsiders());
    const sent = containment.signalOutsiders(signal);
    if (sent.length === 0) return;
    const { named, total } = this.ended.add(sent, signal, (stat) => this.commands.commandFor(stat));
    this.options.log(`${signal === 'SIGKILL' ? 'killed' : 'ending'} ${total} process${total === 1 ? '' : 'es'} outside the cgroup with ${signal}: ${nameProcesses(named, total)}`);
  }

  private muteChildren(mute: boolean): void {
    if (mute === this.childrenMuted) return;
    this.childrenMuted = mute;
    if (mute) process.removeListener('SIGCHLD', this.childListener);
    else process.on('SIGCHLD', this.childListener);
  }

  /**
   * Contained: the stop signal first, to the whole tree at once: the cgroup frozen, every member
   * of one read signalled, thawed (the few names shown read while frozen). Then the phase line,
   * the grace, and the timers' passes for newcomers and for descendants outside the cgroup.
   */
  private beginContainedStop(containment: CgroupContainment, signal: NodeJS.Signals, reason: string): void {
    this.stopSignal = signal;
    // Set at once: no second stop begins while the freeze is awaited.
    this.phase = 'stopping';
    this.after(this.options.graceMs, () => this.escalate());
    // While cgroup.events says the tree lives, a SIGCHLD (up to one per dying member) has nothing
    // to tell: leash keeps off the CPU the dying tree needs. Heard again once it says empty.
    if (containment.cgroup.watching) this.muteChildren(true);
    void this.containedPass(containment, signal).then((reached) => {
      if (this.phase !== 'stopping') return;
      if (reached === 0 && this.runnerExitCode !== null && containment.isEmpty()) {
        this.end();
        return;
      }
      this.enterPhase('stopping', reason);
      this.armSweep(STOPPING_SWEEP_MS);
      this.after(STOP_NEWCOMER_WALK_MS, () => this.sweepContainedStop(containment));
      this.scheduleCheck();
    });
  }

  private beginStop(signal: NodeJS.Signals, reason: string): void {
    if (this.phase !== 'running') return;
    if (this.contained) {
      this.beginContainedStop(this.contained, signal, reason);
      return;
    }
    this.stopSignal = signal;
    // Names of the processes seen by one walk only, read before they die (usually none or few).
    this.commands.confirmYoung();
    // The groups of the last walk first: most of the tree has the signal within a millisecond.
    const reached = this.signalTree(signal);
    if (reached === 0) {
      // The last walk knew nothing to stop: walk now.
      this.reapAdopted();
      this.observe();
      if (this.runnerExitCode !== null && this.treeIsEmpty()) {
        this.end();
        return;
      }
      this.signalTree(signal);
    }
    this.enterPhase('stopping', reason);
    this.nameEnded(signal);
    this.armSweep(STOPPING_SWEEP_MS);
    this.after(this.options.graceMs, () => this.escalate());
    // Otherwise the walk for newcomers comes later, leaving the CPU to the processes that are
    // exiting meanwhile (on a busy machine a walk of a dying 200-process tree costs tens of ms);
    // until then SIGCHLDs only reap and count (settle).
    if (reached > 0) {
      this.lastCheckAt = performance.now();
      this.after(STOP_NEWCOMER_WALK_MS, () => this.check());
    }
    this.scheduleCheck();
  }

  private escalate(): void {
    if (this.phase !== 'stopping') return;
    const contained = this.contained;
    if (contained) {
      if (contained.isEmpty() && this.runnerExitCode !== null) {
        this.end();
        return;
      }
      this.escalated = true;
      this.enterPhase('killing', `grace of ${this.options.graceMs} ms over`);
      this.forgetSignalled();
      // cgroup.kill (the names read first) and SIGKILL to each outsider; again while anything is left.
      void this.containedPass(contained, 'SIGKILL');
      this.signalOutsiders(contained);
      this.after(KILL_REPEAT_MS, () => {
        contained.newPhase();
        this.sweepContainedStop(contained);
      }, true);
      return;
    }
    this.reapAdopted();
    this.observe();
    if (this.treeIsEmpty() && this.runnerExitCode !== null) {
      this.end();
      return;
    }
    this.escalated = true;
    this.enterPhase('killing', `grace of ${this.options.graceMs} ms over`);
    this.forgetSignalled();
    // Named first: a process has no command line left once killed.
    this.nameEnded('SIGKILL');
    this.signalTree('SIGKILL');
    // SIGKILL cannot be ignored, but a process forked in mid-signal can miss it: say it again.
    this.after(KILL_REPEAT_MS, () => {
      this.forgetSignalled();
      this.check();
    }, true);
  }

  /**
   * Signals every process of the tree not yet in `signalled` (by default, those already sent this
   * phase's signal). Each process group in it that is the tree's own (mayKillGroupOf) gets one
   * killpg, through a member that proves the group is still the one we saw (a group number cannot
   * be reused while a member lives); its members seen in the walk then count as signalled.
   * Whatever no group signal reached gets its own, by identity.
   * Returns how many processes were reached.
   */
  private signalTree(signal: NodeJS.Signals, signalled = this.signalled, spare?: ReadonlySet<string>): number {
    let reached = 0;
    const groups = new Map<number, ProcStat[]>();
    // A group holding a spared process is signalled member by member, without it.
    const partial = new Set<number>();
    for (const stat of this.tree.values()) {
      if (isDeadState(stat.state)) continue;
      if (spare?.has(key(stat))) {
        partial.add(stat.pgid);
        continue;
      }
      if (signalled.has(key(stat))) continue;
      // The others are signalled one by one below.
      if (!this.mayKillGroupOf(stat)) continue;
      const members = groups.get(stat.pgid);
      if (members) members.push(stat);
      else groups.set(stat.pgid, [stat]);
    }
    for (const [pgid, members] of groups) {
      if (partial.has(pgid)) continue;
      // The first member still itself and still in the group is the witness.
      for (const witness of members) {
        const outcome = signalGroupWithWitness(pgid, witness, signal);
        if (outcome === 'gone') continue;
        if (outcome === 'sent') {
          for (const member of members) signalled.add(key(member));
          reached += members.length;
        }
        break;
      }
    }
    for (const stat of this.tree.values()) {
      if (isDeadState(stat.state) || signalled.has(key(stat)) || spare?.has(key(stat))) continue;
      if (signalIfSame(stat.pid, stat.startTime, signal) === 'sent') reached += 1;
      signalled.add(key(stat));
    }
    return reached;
  }

  /** A new phase, or a repeated stop signal: everything is to be signalled again. */
  private forgetSignalled(): void {
    this.signalled.clear();
    this.contained?.newPhase();
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
    // document says what is left now (nothing: the cgroup is empty).
    if (this.contained) {
      this.contained.emptied();
      this.adopted = new Map();
    }
    this.enterPhase('exited');
    this.cleanUp();
    this.finish?.(this.runnerExitCode ?? 1);
  }

  private cleanUp(): void {
    this.clientWatch?.stop();
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
    // Killed, waited for on cgroup.events, removed deepest first; never while leash is in it.
    if (!removed) {
      removed = cgroup.destroy(1000);
      this.reapAdopted();
    }
    if (!removed) this.options.log(`warning: cannot remove ${cgroup.directory}`);
    this.cgroupGuard?.release();
  }
}
