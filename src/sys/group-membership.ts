// Proof before a signal: when a process group may be signalled by its number, and when only its
// members, one by one, each by identity. A group number is recycled once the group empties: a
// stranger's group (a double-fork daemon whose setsid'd middle exits) may then hold it with no
// leader, and "the number answers a probe" proves nothing. The rule:
// - while the group's leader is the recorded process (pid + start time; zombie or not), its pid,
//   hence the group number, cannot be reused: the group is signalled by number (one stat read);
// - once the leader is gone, only members proven ours are signalled, each by identity: a process
//   recorded earlier with its start time, one carrying the owner's token in its environment, or
//   one that descends (parent chain, each link alive with its start time) from a proven one;
// - a group with no proven member is dropped and reported, never signalled.
// Where there is no procfs (macOS) start times and environments cannot be read cheaply: a group is
// taken by its number there, as before (docs/supervisor.md says what that leaves open).
// Standard library only: the death supervisor imports this file.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { environHasEntry, hasProcfs, isDeadState, listPids, readProcStat, scanAllStats, type ProcStat } from './procfs.js';
import type { ProcessMark, SignalOutcome } from './processes.js';
import { childrenByParent } from './tree.js';

/** One process by identity: its pid and its start time. */
export interface ProcessIdentityMark {
  pid: number;
  startTime: number;
}

/**
 * What may be signalled of a group:
 * - 'leader'     its leader is the recorded process: by number;
 * - 'number'     no identity can be proven here (no procfs, or none recorded): by number, as before;
 * - 'stale'      a process other than the recorded leader has the leader's pid: never;
 * - 'leaderless' the leader is gone: only members proven ours (proveMembers);
 * - 'gone'       nothing of the group is left.
 */
export type LeaderProof = 'leader' | 'number' | 'stale' | 'leaderless' | 'gone';

/** One stat read for the common case (the leader lives); a probe only when it is gone. */
export function proveLeader(pgid: number, leaderStartTime: number | undefined, probe: (pgid: number) => 'sent' | 'gone' | 'denied'): LeaderProof {
  if (!hasProcfs() || leaderStartTime === undefined) return probe(pgid) === 'gone' ? 'gone' : 'number';
  const leader = readProcStat(pgid);
  if (leader) return leader.startTime === leaderStartTime ? 'leader' : 'stale';
  return probe(pgid) === 'gone' ? 'gone' : 'leaderless';
}

/** The live members of each group, by identity, from one scan of /proc (for the record kept at registration). */
export function recordGroupMembers(pgids: ReadonlySet<number>, stats: readonly ProcStat[] = scanAllStats()): Map<number, ProcessIdentityMark[]> {
  const members = new Map<number, ProcessIdentityMark[]>();
  if (!hasProcfs()) return members;
  for (const stat of stats) {
    if (!pgids.has(stat.pgid) || isDeadState(stat.state)) continue;
    const list = members.get(stat.pgid);
    const mark = { pid: stat.pid, startTime: stat.startTime };
    if (list) list.push(mark);
    else members.set(stat.pgid, [mark]);
  }
  return members;
}

/** What counts as proof of membership. */
export interface MembershipEvidence {
  /** Processes recorded earlier as the group's, each with its start time. */
  recorded?: (pgid: number) => Iterable<ProcessIdentityMark> | undefined;
  /** An environment entry (`LEASH_OWNER_TOKEN=...`) that marks the owner's processes. */
  tokenEntry?: string;
  /** Processes never taken, nor anything below them (this process, a group let go on purpose). */
  spare?: (stat: ProcStat) => boolean;
}

/** What the proof found for one leaderless group. */
export interface MembershipProof {
  /** Live processes proven ours: members, and what descends from them outside the group. */
  proven: ProcessMark[];
  /** Live members of the group that nothing proves ours: left alone. */
  unproven: number;
}

/**
 * Proves the members of leaderless groups from one snapshot of /proc: roots are the recorded
 * processes still alive with their recorded start times and the token carriers among the
 * members; then everything whose parent chain leads to a root (a child's parent is alive, with
 * the start time seen, so it is that process's child). Environments are read only for members
 * that are neither recorded nor below a root.
 */
export function proveMembers(
  pgids: ReadonlySet<number>,
  evidence: MembershipEvidence,
  stats: readonly ProcStat[] = pgids.size > 0 ? scanAllStats() : [],
): Map<number, MembershipProof> {
  const proofs = new Map<number, MembershipProof>();
  for (const pgid of pgids) proofs.set(pgid, { proven: [], unproven: 0 });
  if (pgids.size === 0 || !hasProcfs()) return proofs;
  const byPid = new Map(stats.map((stat) => [stat.pid, stat]));
  const byParent = childrenByParent(stats);
  const usable = (stat: ProcStat | undefined): stat is ProcStat =>
    stat !== undefined && stat.pid !== process.pid && !isDeadState(stat.state) && evidence.spare?.(stat) !== true;
  // pid -> the group whose proof it belongs to.
  const owner = new Map<number, number>();
  const pending: ProcStat[] = [];
  const take = (stat: ProcStat, pgid: number) => {
    if (owner.has(stat.pid)) return;
    owner.set(stat.pid, pgid);
    pending.push(stat);
  };
  for (const pgid of pgids) {
    for (const mark of evidence.recorded?.(pgid) ?? []) {
      const stat = byPid.get(mark.pid);
      if (usable(stat) && stat.startTime === mark.startTime) take(stat, pgid);
    }
  }
  const descend = () => {
    while (pending.length > 0) {
      const parent = pending.pop()!;
      const pgid = owner.get(parent.pid)!;
      for (const child of byParent.get(parent.pid) ?? []) {
        // A child cannot have started before its parent: anything else is a stale reading.
        if (usable(child) && child.startTime >= parent.startTime) take(child, pgid);
      }
    }
  };
  descend();
  if (evidence.tokenEntry !== undefined) {
    for (const stat of stats) {
      if (!pgids.has(stat.pgid) || owner.has(stat.pid) || !usable(stat)) continue;
      if (environHasEntry(stat.pid, evidence.tokenEntry)) {
        take(stat, stat.pgid);
        descend();
      }
    }
  }
  for (const stat of stats) {
    if (isDeadState(stat.state)) continue;
    const pgid = owner.get(stat.pid);
    if (pgid !== undefined) proofs.get(pgid)!.proven.push({ pid: stat.pid, startTime: stat.startTime, pgid: stat.pgid });
    else if (pgids.has(stat.pgid)) proofs.get(stat.pgid)!.unproven += 1;
  }
  return proofs;
}

/** scanAllStats a slice at a time, for an owner whose event loop must not be held (~10 ms for 600 processes). */
export async function scanAllStatsInSlices(perSlice = 64): Promise<ProcStat[]> {
  const stats: ProcStat[] = [];
  const pids = listPids();
  for (let start = 0; start < pids.length; start += perSlice) {
    if (start > 0) await yieldToLoop();
    for (let i = start; i < Math.min(pids.length, start + perSlice); i += 1) {
      const stat = readProcStat(pids[i]!);
      if (stat) stats.push(stat);
    }
  }
  return stats;
}

/** proveMembers from a snapshot read in slices. */
export async function proveMembersSoon(pgids: ReadonlySet<number>, evidence: MembershipEvidence): Promise<Map<number, MembershipProof>> {
  return proveMembers(pgids, evidence, pgids.size > 0 && hasProcfs() ? await scanAllStatsInSlices() : []);
}

/** Signals one process only if it is still the one that started at `startTime`. */
export type IdentitySignal = (pid: number, startTime: number, signal: NodeJS.Signals) => SignalOutcome;

/**
 * Signals each proven process by identity; returns those reached. `send` is verified-signal.ts's
 * signalIfSame (a pidfd) in the owner library and leash run; the supervisor, which loads no
 * native code, checks the start time right before kill(2) instead.
 */
export function signalProven<T extends ProcessIdentityMark>(marks: readonly T[], signal: NodeJS.Signals, send: IdentitySignal): T[] {
  const reached: T[] = [];
  for (const mark of marks) if (send(mark.pid, mark.startTime, signal) === 'sent') reached.push(mark);
  return reached;
}

/** The notice for a group dropped because nothing in it could be proven ours. */
export function unprovenGroupNotice(pgid: number, unproven: number): string {
  return (
    `process group ${pgid} lost its leader and none of its ${unproven} live member(s) is provably ours ` +
    '(not recorded, no owner token, no descent from a proven member): its number may belong to another ' +
    'program now, so it is dropped and not signalled'
  );
}
