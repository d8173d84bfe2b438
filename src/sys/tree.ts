// The descendants of one process, from procfs. The kernel's per-thread children lists make this
// cost per process in the tree rather than per process on the machine; where a kernel lacks them
// we scan all of /proc. Standard library only.
import {
  isDeadState,
  readChildren,
  readChildrenOfThreads,
  readChildrenOnceStopped,
  readProcStat,
  readProcStatWithThreads,
  scanAllStats,
  type ProcStat,
} from './procfs.js';
import { signalProcess, type ProcessMark } from './processes.js';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { pauseSync } from './wait.js';

/** Descendants of a process by pid, zombies included (their state says so). */
export type ProcessTree = Map<number, ProcStat>;

let childrenFilesMissing = false;

/** Whether the last walks had to scan all of /proc (no /proc/<pid>/task/<tid>/children). */
export function treeWalkUsesFullScan(): boolean {
  return childrenFilesMissing;
}

/** How a walk goes below what it finds. */
interface WalkOptions {
  /** Whether the walk goes below this process (default: always). */
  descend?: (stat: ProcStat) => boolean;
  /**
   * For a walk spread over turns of the event loop: the turn it is in. A parent found in an
   * earlier turn has its start time read again before its children list, and is not read if it
   * is no longer the process found (it exited, and a stranger whose children would be listed
   * may have its pid); one found in this turn is read as it is.
   */
  turn?: () => number;
}

/**
 * Each descendant of `root` once, a parent before its children, from the kernel's children
 * lists; returns false when this kernel has none (then nothing is yielded).
 */
function* descendantsByChildrenFiles(root: number, options: WalkOptions = {}): Generator<ProcStat, boolean> {
  const seen = new Set<number>();
  const pending: Array<{ pid: number; startTime?: number; turn?: number }> = [{ pid: root }];
  while (pending.length > 0) {
    const parent = pending.pop()!;
    if (parent.turn !== undefined && parent.turn !== options.turn?.() && readProcStat(parent.pid)?.startTime !== parent.startTime) continue;
    const children = readChildren(parent.pid);
    if (children === undefined) return false;
    for (const child of children) {
      if (seen.has(child) || child === root) continue;
      const stat = readProcStat(child);
      // Gone between the two reads, or already reparented elsewhere: not ours now.
      if (!stat || stat.ppid !== parent.pid) continue;
      seen.add(child);
      if (options.descend?.(stat) !== false) pending.push({ pid: child, startTime: stat.startTime, turn: options.turn?.() });
      yield stat;
    }
  }
  return true;
}

function walkByChildrenFiles(root: number): ProcessTree | undefined {
  const tree: ProcessTree = new Map();
  const walk = descendantsByChildrenFiles(root);
  for (let step = walk.next(); ; step = walk.next()) {
    if (step.done) return step.value ? tree : undefined;
    tree.set(step.value.pid, step.value);
  }
}

/** The processes of a snapshot, listed under their parent's pid. */
export function childrenByParent(stats: Iterable<ProcStat>): Map<number, ProcStat[]> {
  const byParent = new Map<number, ProcStat[]>();
  for (const stat of stats) {
    const siblings = byParent.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else byParent.set(stat.ppid, [stat]);
  }
  return byParent;
}

function walkByFullScan(root: number, descend?: (stat: ProcStat) => boolean): ProcessTree {
  const byParent = childrenByParent(scanAllStats());
  const tree: ProcessTree = new Map();
  const pending = [root];
  while (pending.length > 0) {
    const parent = pending.pop() as number;
    for (const stat of byParent.get(parent) ?? []) {
      if (tree.has(stat.pid) || stat.pid === root) continue;
      tree.set(stat.pid, stat);
      if (descend?.(stat) !== false) pending.push(stat.pid);
    }
  }
  return tree;
}

/** One pass over the tree below `root`. */
export function walkOnce(root: number): ProcessTree {
  if (!childrenFilesMissing) {
    const tree = walkByChildrenFiles(root);
    if (tree) return tree;
    childrenFilesMissing = true;
  }
  return walkByFullScan(root);
}

function samePids(a: ProcessTree, b: ProcessTree): boolean {
  if (a.size !== b.size) return false;
  for (const pid of a.keys()) if (!b.has(pid)) return false;
  return true;
}

/**
 * The tree below `root`, walked until two passes agree (a walk is a snapshot of a moving
 * target: a fork or a reparenting in mid-walk can hide a process from one pass).
 * Gives up agreeing after `maxPasses` and returns the union of the last two passes.
 */
export function walkDescendants(root: number, maxPasses = 5): ProcessTree {
  let previous = walkOnce(root);
  for (let pass = 1; pass < maxPasses; pass += 1) {
    const current = walkOnce(root);
    if (samePids(previous, current)) return current;
    previous = current;
  }
  const last = walkOnce(root);
  for (const [pid, stat] of previous) if (!last.has(pid)) last.set(pid, stat);
  return last;
}

/**
 * Like walkDescendants, but a pass that finds no process the previous pass missed ends the walk:
 * a tree that only shrinks (a teardown, where most passes see deaths) settles in two passes.
 */
export function walkDescendantsUntilNoNewcomer(root: number, maxPasses = 5): ProcessTree {
  let previous = walkOnce(root);
  for (let pass = 1; pass < maxPasses; pass += 1) {
    const current = walkOnce(root);
    let newcomer = false;
    for (const pid of current.keys()) {
      if (!previous.has(pid)) {
        newcomer = true;
        break;
      }
    }
    if (!newcomer) return current;
    previous = current;
  }
  const last = walkOnce(root);
  for (const [pid, stat] of previous) if (!last.has(pid)) last.set(pid, stat);
  return last;
}

/** The bounds of an escapee walk: it runs before the first signal, so a tree forking faster than it is read must not hold that back. */
export const ESCAPEE_WALK_MAX_PROCESSES = 4096;
export const ESCAPEE_WALK_BUDGET_MS = 500;

/**
 * What descends from group `pgid`'s leader but has left the group (a child started with setsid
 * or `detached: true`, and what it started), for the owner to end with the group. Never this
 * process or what it started (an owner can guard a group it descends from), and nothing that
 * `spare` keeps nor anything below it (a group owned on its own, or released, has its own life).
 * One pass from the leader, without stopping anything, `perTurn` processes a turn of the event
 * loop for all walks together (a tree of 1,000 processes took 0.2-0.35 s to walk in one go on this
 * 2-core machine under load), cut at ESCAPEE_WALK_MAX_PROCESSES processes or ESCAPEE_WALK_BUDGET_MS: a process that
 * forks during the walk, or one whose parent in the group had already exited (it was
 * reparented), may be missed. A mark names a process by its start time, so what is found is
 * never mistaken for another later. Where the kernel has no children lists, one full scan.
 */
/**
 * What every escapee walk has read in this turn of the event loop, together: a thousand walks
 * begun at once (terminateOwned on a thousand groups) read no more per turn than one does.
 */
const walkPace = { turn: 0, read: 0, endQueued: false };

/** Counts one process read by an escapee walk; resolves on a later turn once this turn's share is read. */
async function paceEscapeeWalk(perTurn: number): Promise<void> {
  if (!walkPace.endQueued) {
    walkPace.endQueued = true;
    // Queued before any walk yields, so it runs first in the next check phase.
    setImmediate(() => {
      walkPace.turn += 1;
      walkPace.read = 0;
      walkPace.endQueued = false;
    });
  }
  walkPace.read += 1;
  if (walkPace.read >= perTurn) await yieldToLoop();
}

export async function escapeesOfGroupInSlices(pgid: number, spare: (stat: ProcStat) => boolean, perTurn = 64): Promise<EscapeeMark[]> {
  // Members of the group are walked whatever `spare` says (the group itself is owned).
  const keep = (stat: ProcStat) => stat.pid !== process.pid && (stat.pgid === pgid || !spare(stat));
  const escapee = (stat: ProcStat) => stat.pgid !== pgid && !isDeadState(stat.state) && keep(stat);
  // A parent is met before its children: each process's escaped groups extend its parent's.
  const groupsOf = new Map<number, readonly number[]>();
  const markOf = (stat: ProcStat): EscapeeMark | undefined => {
    const above = groupsOf.get(stat.ppid) ?? [];
    const groups = stat.pgid === pgid || above.includes(stat.pgid) ? above : [...above, stat.pgid];
    groupsOf.set(stat.pid, groups);
    return escapee(stat) ? { pid: stat.pid, startTime: stat.startTime, pgid: stat.pgid, groups } : undefined;
  };
  const found: EscapeeMark[] = [];
  if (!childrenFilesMissing) {
    const deadline = performance.now() + ESCAPEE_WALK_BUDGET_MS;
    const walk = descendantsByChildrenFiles(pgid, { descend: keep, turn: () => walkPace.turn });
    let walked = 0;
    for (let step = walk.next(); ; step = walk.next()) {
      if (step.done) {
        if (step.value) return found;
        childrenFilesMissing = true;
        break;
      }
      const mark = markOf(step.value);
      if (mark) found.push(mark);
      walked += 1;
      if (walked >= ESCAPEE_WALK_MAX_PROCESSES || performance.now() > deadline) return found;
      await paceEscapeeWalk(perTurn);
    }
  }
  groupsOf.clear();
  found.length = 0;
  for (const stat of walkByFullScan(pgid, keep).values()) {
    const mark = markOf(stat);
    if (mark) found.push(mark);
  }
  return found;
}

/**
 * An escapee as found: its process, and every group other than the walked one that it is in or
 * below (its own and its escaped ancestors'), so that one taken or let go by the owner later
 * spares what lies below it too.
 */
export interface EscapeeMark extends ProcessMark {
  groups: readonly number[];
}

/** How a walk of frozen groups treats what it finds outside them. */
export interface FrozenWalkOptions {
  /**
   * SIGSTOP every live process found outside the groups (unless spared), as it is found: a
   * process that is not stopped can fork, and start threads that fork, while the walk goes on.
   * Its children are then read once all its threads are stopped. Without it, such a process's
   * children are read at once, every thread's list.
   */
  stopEscapees?: boolean;
  /** A process found outside the groups that is to be neither stopped nor reported (still walked below). */
  spare?: (stat: ProcStat) => boolean;
  /**
   * Called with the escapees among one parent's children just before they are stopped (to record
   * them first, say). Returning false leaves them running: they are walked as running processes.
   */
  beforeStop?: (stats: ProcStat[]) => boolean;
  /**
   * Told of each member of the groups met below a leader or in the scan (not the leaders
   * themselves); `leaderGone` when its group's leader was gone when the walk began.
   */
  onMember?: (stat: ProcStat, leaderGone: boolean) => void;
  /** Processes read at most (members and escapees): the walk is cut there. Default 4096. */
  maxProcesses?: number;
  /** Time the walk may take at most, in milliseconds: it is cut there. Default 200. */
  budgetMs?: number;
}

export interface FrozenWalk {
  /** Live processes outside the groups whose parent chain leads into a member, in the order found. */
  escapees: ProcStat[];
  /** Set when the walk stopped short: at maxProcesses ('count') or at budgetMs ('time'). */
  cut?: 'count' | 'time';
  /** Processes read. */
  visited: number;
}

/** Defaults of FrozenWalkOptions: a few milliseconds of walk for any real tree, bounded for a fork bomb. */
export const FROZEN_WALK_MAX_PROCESSES = 4096;
export const FROZEN_WALK_BUDGET_MS = 200;

/**
 * The processes outside the groups `pgids` whose parent chain leads into a member of one of them
 * (a descendant that left with setsid or setpgid, whatever its environment). Meant for groups
 * frozen by the caller (SIGSTOP to each group): a group whose leader lives is walked from its
 * leader through the children files, at a cost per process in its tree; the groups whose leader
 * is gone need one scan of /proc for all of them.
 *
 * Only a process known to be stopped may have its children read from its thread count alone (a
 * member of a frozen group: killpg's SIGSTOP reaches even a child forked in the middle of it). Any
 * other process may start a thread, and fork from it, at any moment: every thread's list is read,
 * and with stopEscapees only once all its threads are stopped. The walk is bounded by count and
 * time; where it is cut, what it found so far is returned.
 *
 * Not seen: a process whose parent chain is broken (its parent exited and it was reparented to
 * init or a subreaper), and, in a group whose leader runs, what descends from a member that is not
 * the leader's descendant.
 */
export function walkFrozenGroups(pgids: ReadonlySet<number>, options: FrozenWalkOptions = {}): FrozenWalk {
  const maxProcesses = options.maxProcesses ?? FROZEN_WALK_MAX_PROCESSES;
  const deadline = performance.now() + (options.budgetMs ?? FROZEN_WALK_BUDGET_MS);
  const walk: FrozenWalk = { escapees: [], visited: 0 };
  const seen = new Set<number>([process.pid]);
  // Members (stopped with their group), read by thread count; running processes, read whole;
  // escapees we stopped, read once every thread has stopped.
  const members: { pid: number; threads: number }[] = [];
  const running: number[] = [];
  const stopping: number[] = [];

  /** One process found below `parent`; false once the walk is cut. */
  const meet = (stat: ProcStat & { threads?: number }): boolean => {
    walk.visited += 1;
    if (walk.visited > maxProcesses) {
      walk.cut = 'count';
      return false;
    }
    if (isDeadState(stat.state)) return true; // a zombie has handed its children on already
    if (pgids.has(stat.pgid)) {
      members.push({ pid: stat.pid, threads: stat.threads ?? 0 });
      options.onMember?.(stat, leaderless.has(stat.pgid));
      return true;
    }
    if (options.spare?.(stat)) {
      running.push(stat.pid);
      return true;
    }
    walk.escapees.push(stat);
    if (options.stopEscapees) toStop.push(stat);
    else running.push(stat.pid);
    return true;
  };

  /** Stops the escapees met among one parent's children, announced in one call. */
  const toStop: ProcStat[] = [];
  const stopMet = () => {
    if (toStop.length === 0) return;
    if (options.beforeStop?.(toStop.slice()) === false) {
      for (const stat of toStop) running.push(stat.pid);
      toStop.length = 0;
      return;
    }
    // Their parent is stopped (a frozen member or an escapee we stopped), so none can have been
    // reaped, and its pid reused, since its stat was read a moment ago.
    for (const stat of toStop) {
      if (signalProcess(stat.pid, 'SIGSTOP') === 'sent') stopping.push(stat.pid);
      else running.push(stat.pid);
    }
    toStop.length = 0;
  };

  /** Each child of `parent` not met before; false once the walk is cut. */
  const meetChildren = (parent: number, children: number[]): boolean => {
    for (const pid of children) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      const stat = readProcStatWithThreads(pid);
      // Gone between the two reads, or already reparented elsewhere: not ours now.
      if (!stat || stat.ppid !== parent) continue;
      if (!meet(stat)) {
        stopMet();
        return false;
      }
    }
    stopMet();
    return true;
  };

  const leaderless = new Set<number>();
  for (const pgid of pgids) {
    const leader = readProcStatWithThreads(pgid);
    if (!leader || leader.pgid !== pgid || isDeadState(leader.state) || childrenFilesMissing) leaderless.add(pgid);
    else {
      seen.add(pgid);
      members.push({ pid: pgid, threads: leader.threads });
    }
  }

  walking: while (members.length + running.length + stopping.length > 0) {
    if (performance.now() > deadline) {
      walk.cut = 'time';
      break;
    }
    let parent: number;
    let children: number[] | 'running' | undefined;
    if (members.length > 0) {
      const member = members.pop()!;
      parent = member.pid;
      children = readChildrenOfThreads(parent, member.threads);
    } else if (running.length > 0) {
      parent = running.pop()!;
      children = readChildren(parent);
    } else {
      // Every escapee we stopped, until each has stopped whole; those still running wait a turn.
      let progressed = false;
      for (let i = stopping.length - 1; i >= 0; i -= 1) {
        const pid = stopping[i]!;
        const list = readChildrenOnceStopped(pid);
        if (list === 'running') continue;
        stopping.splice(i, 1);
        progressed = true;
        if (list === undefined) {
          childrenFilesMissing = true;
          break walking;
        }
        if (!meetChildren(pid, list)) break walking;
      }
      if (!progressed) pauseSync(0.2); // let them reach the stop
      continue;
    }
    if (children === undefined) {
      childrenFilesMissing = true;
      break;
    }
    if (!meetChildren(parent, children)) break;
  }

  if (childrenFilesMissing && walk.cut === undefined) {
    // No children files: every group is walked from one scan of /proc.
    for (const pgid of pgids) leaderless.add(pgid);
  }
  if (leaderless.size === 0 || walk.cut !== undefined) return walk;

  // From one snapshot of /proc: what an escapee forks after it is not seen (stopping it ends that).
  const byParent = new Map<number, ProcStat[]>();
  const pending: number[] = [];
  for (const stat of scanAllStats()) {
    const siblings = byParent.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else byParent.set(stat.ppid, [stat]);
    if (leaderless.has(stat.pgid) && stat.pid !== process.pid) {
      pending.push(stat.pid);
      if (!isDeadState(stat.state)) options.onMember?.(stat, true);
    }
  }
  const expanded = new Set(pending);
  while (pending.length > 0) {
    if (performance.now() > deadline) {
      walk.cut = 'time';
      break;
    }
    for (const child of byParent.get(pending.pop() as number) ?? []) {
      if (expanded.has(child.pid) || child.pid === process.pid) continue;
      expanded.add(child.pid);
      pending.push(child.pid);
      if (seen.has(child.pid)) continue; // met before the children files turned out missing
      seen.add(child.pid);
      if (!meet(child)) {
        stopMet();
        return walk;
      }
    }
    stopMet();
  }
  return walk;
}

/**
 * The live processes outside the groups `pgids` that descend from a member, found without
 * signalling anything: walkFrozenGroups with the default bounds. Meant for frozen groups.
 */
export function descendantsOutsideGroups(pgids: ReadonlySet<number>): ProcStat[] {
  return walkFrozenGroups(pgids).escapees;
}
