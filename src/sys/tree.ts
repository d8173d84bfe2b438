// The descendants of one process, from procfs. The kernel's per-thread children lists make this
// cost per process in the tree rather than per process on the machine; where a kernel lacks them
// we scan all of /proc. Standard library only.
import {
  isDeadState,
  readChildren,
  readChildrenOfThreads,
  readProcStat,
  readProcStatWithThreads,
  scanAllStats,
  type ProcStat,
  type ProcStatWithThreads,
} from './procfs.js';

/** Descendants of a process by pid, zombies included (their state says so). */
export type ProcessTree = Map<number, ProcStat>;

let childrenFilesMissing = false;

/** Whether the last walks had to scan all of /proc (no /proc/<pid>/task/<tid>/children). */
export function treeWalkUsesFullScan(): boolean {
  return childrenFilesMissing;
}

function walkByChildrenFiles(root: number): ProcessTree | undefined {
  const tree: ProcessTree = new Map();
  const pending = [root];
  while (pending.length > 0) {
    const parent = pending.pop() as number;
    const children = readChildren(parent);
    if (children === undefined) return undefined;
    for (const child of children) {
      if (tree.has(child) || child === root) continue;
      const stat = readProcStat(child);
      // Gone between the two reads, or already reparented elsewhere: not ours now.
      if (!stat || stat.ppid !== parent) continue;
      tree.set(child, stat);
      pending.push(child);
    }
  }
  return tree;
}

function walkByFullScan(root: number): ProcessTree {
  const byParent = new Map<number, ProcStat[]>();
  for (const stat of scanAllStats()) {
    const siblings = byParent.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else byParent.set(stat.ppid, [stat]);
  }
  const tree: ProcessTree = new Map();
  const pending = [root];
  while (pending.length > 0) {
    const parent = pending.pop() as number;
    for (const stat of byParent.get(parent) ?? []) {
      if (tree.has(stat.pid) || stat.pid === root) continue;
      tree.set(stat.pid, stat);
      pending.push(stat.pid);
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

/**
 * Hands every descendant of `root` to `visit`, through the children files, reading a process's
 * task list only when it has more than one thread (the processes are stopped: none can start a
 * thread or a child meanwhile). False where the kernel has no children files: the caller then
 * scans /proc.
 */
function walkStoppedTree(root: ProcStatWithThreads, visit: (stat: ProcStat) => void): boolean {
  if (childrenFilesMissing) return false;
  const seen = new Set<number>([root.pid]);
  const pending: ProcStatWithThreads[] = [root];
  while (pending.length > 0) {
    const parent = pending.pop() as ProcStatWithThreads;
    const children = readChildrenOfThreads(parent.pid, parent.threads);
    if (children === undefined) {
      childrenFilesMissing = true;
      return false;
    }
    for (const pid of children) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      const stat = readProcStatWithThreads(pid);
      // Gone between the two reads, or already reparented elsewhere: not ours now.
      if (!stat || stat.ppid !== parent.pid) continue;
      visit(stat);
      pending.push(stat);
    }
  }
  return true;
}

/**
 * Live processes outside the groups `pgids` whose parent chain leads into a member of one of
 * them (a descendant that left with setsid or setpgid, whatever its environment). A group whose
 * leader runs is walked from its leader through the children files, at a cost per process in its
 * tree; the groups whose leader is gone need one scan of /proc for all of them. Meant for groups
 * that cannot change meanwhile (stopped). Not seen: a process whose parent chain is broken (its
 * parent exited and it was reparented to init or a subreaper), and, in a group whose leader
 * runs, what descends from a member that is not the leader's descendant.
 */
export function descendantsOutsideGroups(pgids: ReadonlySet<number>): ProcStat[] {
  const found = new Map<number, ProcStat>();
  const keep = (stat: ProcStat) => {
    if (!pgids.has(stat.pgid) && !isDeadState(stat.state)) found.set(stat.pid, stat);
  };
  const leaderless = new Set<number>();
  for (const pgid of pgids) {
    const leader = readProcStatWithThreads(pgid);
    if (!leader || leader.pgid !== pgid || isDeadState(leader.state)) leaderless.add(pgid);
    else if (!walkStoppedTree(leader, keep)) leaderless.add(pgid);
  }
  if (leaderless.size === 0) return [...found.values()];

  const byParent = new Map<number, ProcStat[]>();
  const pending: number[] = [];
  for (const stat of scanAllStats()) {
    const siblings = byParent.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else byParent.set(stat.ppid, [stat]);
    if (leaderless.has(stat.pgid)) pending.push(stat.pid);
  }
  const seen = new Set(pending);
  while (pending.length > 0) {
    for (const child of byParent.get(pending.pop() as number) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      pending.push(child.pid);
      keep(child);
    }
  }
  return [...found.values()];
}
