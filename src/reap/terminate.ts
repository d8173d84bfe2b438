// Ending leaked trees: SIGTERM to every process of every tree, the grace, then SIGKILL to what is
// left. Every signal goes through signalIfSame, which pins the process and checks its start
// time first, so a pid recycled since the scan is never hit. Processes are signalled one by
// one, never by group: a leaked server often still shares a group with unrelated processes.
import { isTerminalTarget, readFdTarget } from '../sys/fds.js';
import { isProcessAlive } from '../sys/processes.js';
import { scanAllStats, type ProcStat } from '../sys/procfs.js';
import { walkDescendants } from '../sys/tree.js';
import { signalIfSame } from '../sys/verified-signal.js';
import { waitUntil } from '../sys/wait.js';
import { currentCaller, isProtected, type Caller, type LeakedTree } from './scan.js';

export interface TreeOutcome {
  pid: number;
  /** 'ended': nothing of it runs; 'survived': some member outlived SIGKILL; 'denied': not ours to signal. */
  result: 'ended' | 'survived' | 'denied';
  /** How many processes were signalled at least once. */
  signalled: number;
  killed: number;
}

interface Target {
  pid: number;
  startTime: number;
}

const KILL_WAIT_MS = 5000;

/**
 * Adds processes forked below known members since the scan (they inherit the leak), under the
 * scan's own rules: a newcomer that is protected (the caller's session, another user's) or
 * reads a terminal is never added, nor is anything below it.
 */
function addNewDescendants(targets: Map<number, Target>, caller: Caller): void {
  const refused = new Set<number>();
  for (const target of [...targets.values()]) {
    if (!isProcessAlive(target.pid, target.startTime)) continue;
    const tree = walkDescendants(target.pid);
    const isRefused = (stat: ProcStat): boolean => {
      if (refused.has(stat.pid)) return true;
      if (isProtected(stat, caller) || isTerminalTarget(readFdTarget(stat.pid, 0))) {
        refused.add(stat.pid);
        return true;
      }
      return false;
    };
    for (const [pid, stat] of tree) {
      if (targets.has(pid)) continue;
      // The newcomer and every newcomer between it and the known member must pass.
      let refuse = false;
      for (let at: ProcStat | undefined = stat, hops = 0; at && !targets.has(at.pid) && hops < 4096; at = tree.get(at.ppid), hops += 1) {
        if (isRefused(at)) {
          refuse = true;
          break;
        }
      }
      if (!refuse) targets.set(pid, { pid, startTime: stat.startTime });
    }
  }
}

/** This process as a caller, now; `sparesOwnSession` false with --include-own-session. */
export function callerNow(sparesOwnSession = true): Caller {
  const stats = new Map<number, ProcStat>();
  for (const stat of scanAllStats()) stats.set(stat.pid, stat);
  return currentCaller(stats, sparesOwnSession);
}

/** `caller`: whose processes are never signalled (by default this process, as the scan judged it). */
export async function endTrees(trees: readonly LeakedTree[], graceMs: number, caller: Caller = callerNow()): Promise<TreeOutcome[]> {
  const plans = trees.map((tree) => {
    const targets = new Map<number, Target>();
    // Every member the scan saw, each to be proven by its own start time before any signal: the
    // top may have exited since (a wrapper that left) while what it started runs on.
    for (const member of tree.members) targets.set(member.pid, { pid: member.pid, startTime: member.startTime });
    addNewDescendants(targets, caller);
    return { tree, targets, signalled: new Set<number>(), denied: false, killed: 0 };
  });

  const alive = (target: Target) => isProcessAlive(target.pid, target.startTime);
  for (const plan of plans) {
    for (const target of plan.targets.values()) {
      const outcome = signalIfSame(target.pid, target.startTime, 'SIGTERM');
      if (outcome === 'sent') plan.signalled.add(target.pid);
      if (outcome === 'denied') plan.denied = true;
    }
  }
  const everyTarget = () => plans.flatMap((plan) => [...plan.targets.values()]);
  await waitUntil(() => everyTarget().every((target) => !alive(target)), graceMs);

  for (const plan of plans) {
    addNewDescendants(plan.targets, caller);
    for (const target of plan.targets.values()) {
      if (!alive(target)) continue;
      const outcome = signalIfSame(target.pid, target.startTime, 'SIGKILL');
      if (outcome === 'sent') {
        plan.signalled.add(target.pid);
        plan.killed += 1;
      }
      if (outcome === 'denied') plan.denied = true;
    }
  }
  await waitUntil(() => everyTarget().every((target) => !alive(target)), KILL_WAIT_MS);

  return plans.map((plan) => {
    const survivors = [...plan.targets.values()].filter(alive).length;
    return {
      pid: plan.tree.pid,
      result: survivors === 0 ? 'ended' : plan.denied ? 'denied' : 'survived',
      signalled: plan.signalled.size,
      killed: plan.killed,
    };
  });
}
