// The process-tree containment of `leash run`: leash is a child subreaper from before the
// command's first fork, so every descendant is found by walking down from leash (the kernel's
// per-thread children lists), whatever session or group it made. Each process group of the tree
// is signalled whole (one killpg through a member that proves the group is still the one seen:
// a group number cannot be reused while a member lives); whatever no group signal reached gets
// its own signal, by identity. The guard (a death supervisor) learns the tree's groups from the
// walks, and each group's leader exit as it happens (guard.ts).
import { ownProcessGroupId } from '../../sys/processes.js';
import { MAX_WITNESSES, type Witness } from '../../sys/group-handle.js';
import { isDeadState, isStoppedState, readProcStat, type ProcStat } from '../../sys/procfs.js';
import { walkDescendantsUntilNoNewcomer, type ProcessTree } from '../../sys/tree.js';
import { signalGroupWithWitness, signalIfSame } from '../../sys/verified-signal.js';
import type { Adoptions } from '../adoption.js';
import type { RunGuard } from '../guard.js';
import type { StopNames } from '../stop-names.js';
import { signalThenContinue, type Containment, type Pass } from './seam.js';

// A process that changes group after a signal is new again: the group signal may have missed it.
const key = (stat: { pid: number; startTime: number; pgid: number }) => `${stat.pid}:${stat.startTime}:${stat.pgid}`;

export interface TreeContainmentHost {
  readonly self: number;
  readonly guard: RunGuard | undefined;
  readonly adoptions: Adoptions;
  readonly names: StopNames;
  /** The runner while libuv still owns it (not exited yet); 0 after. */
  liveRunner(): number;
}

export class TreeContainment implements Containment {
  readonly kind = 'tree';
  tree: ProcessTree = new Map();
  /** How long the last walk took: it sets the quiet sweep's pace. */
  lastWalkMs = 0;
  /** Processes (pid:start:pgid) already sent the current phase's signal. */
  private readonly signalled = new Set<string>();
  private readonly ownPgid = ownProcessGroupId();
  /** Read again while unknown (a /proc read failed at start, EMFILE say): see mayKillGroupOf. */
  private knownSid = readProcStat('self')?.sid;

  constructor(private readonly host: TreeContainmentHost) {}

  count(): number {
    let active = 0;
    for (const stat of this.tree.values()) if (!isDeadState(stat.state)) active += 1;
    return active;
  }

  /** Walks the tree again; refreshes the adoption record, the command lines, the guard's groups. Returns the previous walk. */
  refresh(): ProcessTree {
    const previous = this.tree;
    const walkStart = performance.now();
    this.tree = walkDescendantsUntilNoNewcomer(this.host.self);
    this.lastWalkMs = performance.now() - walkStart;
    // The guard is our child but not part of the tree, nor is its one child, the watchdog of its
    // teardown (src/supervisor/watchdog.ts).
    const guards = new Set<number>();
    for (const stat of this.tree.values()) if (this.host.guard?.isGuardProcess(stat)) guards.add(stat.pid);
    for (const stat of [...this.tree.values()]) if (guards.has(stat.pid) || guards.has(stat.ppid)) this.tree.delete(stat.pid);
    const runner = this.host.liveRunner();
    const direct = new Map<number, number>();
    for (const stat of this.tree.values()) if (stat.ppid === this.host.self && stat.pid !== runner) direct.set(stat.pid, stat.startTime);
    this.host.adoptions.record(direct);
    // Newcomers only (and last walk's once more): a process's command line is gone once it dies.
    this.host.names.commands.update(this.tree.values());
    this.guardGroups();
    return previous;
  }

  newPhase(): void {
    this.signalled.clear();
  }

  isEmpty(): boolean {
    return this.tree.size === 0;
  }

  /** Whether the last walk saw any live process besides the runner `runnerPid`. */
  holdsDescendants(runnerPid: number): boolean {
    for (const stat of this.tree.values()) if (stat.pid !== runnerPid && !isDeadState(stat.state)) return true;
    return false;
  }

  /**
   * The stop's first pass: the groups of the last walk first (most of the tree has the signal
   * within a millisecond), named after; a walk now only when the last one knew nothing to stop.
   */
  async signalAll(signal: NodeJS.Signals): Promise<Pass> {
    // Names of the processes seen by one walk only, read before they die (usually none or few).
    this.host.names.commands.confirmYoung();
    let reached = this.signalTree(signal);
    if (reached === 0) {
      this.host.adoptions.reap();
      this.refresh();
      reached = this.signalTree(signal);
    }
    const tree = this.tree;
    return { reached, name: () => this.host.names.nameStats(tree.values(), signal) };
  }

  /** A later pass: a fresh walk, and the phase's signal to what the walk shows that has not had it. */
  signalNewcomers(signal: NodeJS.Signals): void {
    this.host.adoptions.reap();
    this.refresh();
    // The processes the stop had not reached yet, named too: before SIGKILL, after the stop signal.
    if (signal === 'SIGKILL') this.host.names.nameStats(this.tree.values(), signal);
    this.signalTree(signal);
    if (signal !== 'SIGKILL') this.host.names.nameStats(this.tree.values(), signal);
  }

  /** SIGKILL to the whole tree of the last walk (the caller's, just made), named first (a process has no command line once killed). */
  killAll(): void {
    this.newPhase();
    this.host.names.nameStats(this.tree.values(), 'SIGKILL');
    this.signalTree('SIGKILL');
  }

  /**
   * Job control: SIGSTOP to the tree of a fresh walk; the returned function continues what it
   * stopped. What someone else had stopped before (a debugger, a `kill -STOP`) is theirs to
   * continue, and what is in leash's own group was stopped by the terminal (--keep-terminal).
   */
  pause(): () => void {
    this.host.adoptions.reap();
    this.refresh();
    const stoppedBefore = new Set<string>();
    for (const stat of this.tree.values()) if (isStoppedState(stat.state) && stat.pgid !== this.ownPgid) stoppedBefore.add(key(stat));
    this.signalTree('SIGSTOP', new Set());
    return () => {
      // What was stopped above is continued, and the processes of leash's group too (a SIGCONT
      // sent to leash alone leaves the terminal's stop on them).
      this.refresh();
      this.signalTree('SIGCONT', new Set(), stoppedBefore);
    };
  }

  /**
   * Signals every process of the tree not yet in `signalled` (by default, those already sent this
   * phase's signal). Each process group in it that is the tree's own (mayKillGroupOf) gets one
   * killpg, through a member that proves the group is still the one we saw (a group number cannot
   * be reused while a member lives); its members seen in the walk then count as signalled.
   * Whatever no group signal reached gets its own, by identity.
   * Returns how many processes were reached.
   */
  signalTree(signal: NodeJS.Signals, signalled = this.signalled, spare?: ReadonlySet<string>): number {
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
        const outcome = signalThenContinue(signal, (each) => signalGroupWithWitness(pgid, witness, each));
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
      if (signalThenContinue(signal, (each) => signalIfSame(stat.pid, stat.startTime, each)) === 'sent') reached += 1;
      signalled.add(key(stat));
    }
    return reached;
  }

  /** Tells the guard the tree's process groups, each with its leader's start time when seen alive. */
  private guardGroups(): void {
    const guard = this.host.guard;
    if (!guard) return;
    const groups = new Map<number, number | undefined>();
    // A few live members of each group, seen now: the guard's witnesses for groups it holds without a pidfd.
    const members = new Map<number, Witness[]>();
    for (const stat of this.tree.values()) {
      if (!this.mayKillGroupOf(stat) || isDeadState(stat.state)) continue;
      const seen = members.get(stat.pgid) ?? [];
      if (seen.length < MAX_WITNESSES && stat.pid !== stat.pgid) seen.push({ pid: stat.pid, startTime: stat.startTime });
      members.set(stat.pgid, seen);
      if (groups.has(stat.pgid)) continue;
      // A leader that exited (a zombie its parent has not reaped yet) is gone: the group's proof is its members now.
      const leader = this.tree.get(stat.pgid);
      groups.set(stat.pgid, leader && !isDeadState(leader.state) ? leader.startTime : undefined);
    }
    guard.track(groups, members);
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
}
