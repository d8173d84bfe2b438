// Signals, liveness and identity of processes and process groups, zombie-aware where the
// platform lets us see zombies. Standard library only: the death supervisor imports this file.
import { environEntryState, hasProcfs, isDeadState, isLiveUserProcess, listPids, processUid, readProcStat, scanAllStats } from './procfs.js';
import { psProcessGroupOf } from './ps.js';

/** What became of a signal: delivered, no such target, or not ours to signal. */
export type SignalOutcome = 'sent' | 'gone' | 'denied';

function deliver(target: number, signal: NodeJS.Signals | 0): SignalOutcome {
  // Probes of gone groups are the common case in waits and teardowns: an error without a stack
  // trace costs half as much to build, and only its code is read.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(target, signal);
    return 'sent';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return 'gone';
    return 'denied';
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/** kill(pid, sig) for one process; pids <= 1 are never signalled. */
export function signalProcess(pid: number, signal: NodeJS.Signals | 0): SignalOutcome {
  if (!Number.isInteger(pid) || pid <= 1) return 'denied';
  return deliver(pid, signal);
}

/** killpg(pgid, sig); groups <= 1 are never signalled (0 would be our own, 1 is init's). */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): SignalOutcome {
  if (!Number.isInteger(pgid) || pgid <= 1) return 'denied';
  return deliver(-pgid, signal);
}

let cachedOwnPgid: number | undefined;

/**
 * The process group of this process. Node has no getpgid: procfs on Linux; elsewhere a group
 * named by our own pid means we lead it (a detached child, as the supervisor is: no ps needed),
 * else `ps` (asked once; a group never changes under us unless we call setpgid, which Node cannot).
 */
export function ownProcessGroupId(): number {
  if (cachedOwnPgid === undefined) {
    cachedOwnPgid = hasProcfs() ? readProcStat(process.pid)?.pgid : leadsOwnGroup() ? process.pid : psProcessGroupOf(process.pid);
  }
  if (cachedOwnPgid === undefined) throw new Error('cannot determine this process group');
  return cachedOwnPgid;
}

// While we live, no other group can be numbered with our pid (POSIX): if it answers, it is ours.
function leadsOwnGroup(): boolean {
  return deliver(-process.pid, 0) !== 'gone';
}

/** The process group of any process, or undefined when it is gone or unknowable. */
export function processGroupOf(pid: number): number | undefined {
  if (hasProcfs()) return readProcStat(pid)?.pgid;
  return psProcessGroupOf(pid);
}

/**
 * Start time recorded for a group whose leader was already gone when it was named: no real
 * process has it, so any process found later at pid == pgid is a stranger.
 */
export const LEADER_ALREADY_GONE = 0;

/**
 * The identity to record for a group: its leader's start time (Linux), LEADER_ALREADY_GONE when
 * the leader is gone, or undefined where it cannot be told (no procfs; a stat that could not be
 * read while the pid still answers, as with no descriptor left: recording "gone" then would make
 * the group's own leader a stranger).
 */
export function groupLeaderIdentity(pgid: number): number | undefined {
  if (!hasProcfs()) return undefined;
  const stat = readProcStat(pgid);
  if (stat) return stat.startTime;
  return signalProcess(pgid, 0) === 'gone' ? LEADER_ALREADY_GONE : undefined;
}

/**
 * Whether the process `pid` started at `startTime` still runs code: it exists, is the same
 * process, and is not a zombie. Where there is no procfs, existence is all we can tell.
 */
export function isProcessAlive(pid: number, startTime?: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false; // names no process
  if (hasProcfs()) {
    const stat = readProcStat(pid);
    // Unreadable while the pid answers (no descriptor left, say): not known to be dead, and
    // callers wait or check identity again before they act on it.
    if (!stat) return signalProcess(pid, 0) !== 'gone';
    if (isDeadState(stat.state)) return false;
    return startTime === undefined || stat.startTime === startTime;
  }
  return signalProcess(pid, 0) !== 'gone';
}

/**
 * How many members of each group still run code (zombies do not count). One signal-0 probe
 * per group, then at most one scan of /proc for the groups the probe could not settle.
 * Without procfs a group that answers the probe counts as one live member (zombies included).
 */
export function liveMemberCounts(pgids: Iterable<number>): Map<number, number> {
  const counts = new Map<number, number>();
  const unsettled = new Set<number>();
  for (const pgid of pgids) {
    const probe = signalGroup(pgid, 0);
    if (probe === 'gone') counts.set(pgid, 0);
    else if (hasProcfs()) unsettled.add(pgid);
    // macOS answers EPERM for a group of zombies only: nothing there can be signalled.
    else counts.set(pgid, probe === 'sent' ? 1 : 0);
  }
  if (unsettled.size > 0) {
    for (const pgid of unsettled) counts.set(pgid, 0);
    for (const stat of scanAllStats()) {
      if (unsettled.has(stat.pgid) && !isDeadState(stat.state)) {
        counts.set(stat.pgid, (counts.get(stat.pgid) ?? 0) + 1);
      }
    }
  }
  return counts;
}

/**
 * The groups, among `pgids`, with at least one member that runs code (zombies do not count).
 * Cheaper than liveMemberCounts while the groups' leaders live: a group whose leader runs is
 * settled by a probe and one stat read; only groups whose leader is gone or a zombie need the
 * scan of /proc, one for all of them. A waiting loop that scanned /proc on every check would take
 * the CPU from the very processes it waits for.
 */
export function liveGroups(pgids: Iterable<number>): Set<number> {
  const live = new Set<number>();
  const unsettled: number[] = [];
  for (const pgid of pgids) {
    if (!hasProcfs()) {
      if (signalGroup(pgid, 0) === 'sent') live.add(pgid);
      continue;
    }
    const leader = readProcStat(pgid);
    if (leader && leader.pgid === pgid && !isDeadState(leader.state)) live.add(pgid);
    else if (signalGroup(pgid, 0) !== 'gone') unsettled.push(pgid);
  }
  if (unsettled.length > 0) {
    for (const [pgid, count] of liveMemberCounts(unsettled)) if (count > 0) live.add(pgid);
  }
  return live;
}

/**
 * Whether `pgid` is still the group that was registered with leader start time `startTime`:
 * - 'ours'  the leader is the recorded process (zombie or not), or the leader is gone and
 *           members remain (a group number is not reused while any member lives);
 * - 'stale' the leader's pid now names another process: the number was recycled (with
 *           LEADER_ALREADY_GONE recorded, any process at that pid is another one);
 * - 'gone'  nothing is left of the group.
 * Without procfs or a recorded start time, a group that answers a probe is taken as ours.
 */
export type GroupIdentity = 'ours' | 'stale' | 'gone';

export function checkGroupIdentity(pgid: number, startTime?: number): GroupIdentity {
  if (hasProcfs() && startTime !== undefined) {
    const leader = readProcStat(pgid);
    if (leader) return leader.startTime === startTime ? 'ours' : 'stale';
  }
  return signalGroup(pgid, 0) === 'gone' ? 'gone' : 'ours';
}

/** A live process as found by a scan: enough to signal it later only if it is still itself. */
export interface ProcessMark {
  pid: number;
  startTime: number;
  pgid: number;
}

/**
 * Live processes of this uid (other than this one) whose initial environment holds the entry
 * `NAME=value`. Linux only: elsewhere environments cannot be read, and the answer is empty.
 * Reads every process's environ: about 10 ms with ~600 processes, so keep it off hot paths.
 */
export function findEnvironmentCarriers(entry: string): ProcessMark[] {
  if (!hasProcfs()) return [];
  const uid = process.getuid?.();
  const found: ProcessMark[] = [];
  for (const pid of listPids()) {
    const mark = environmentCarrier(pid, entry, uid);
    if (mark) found.push(mark);
  }
  return found;
}

/**
 * One process of a carrier scan: its mark when it is live, not this process, of `uid` (when
 * given) and its initial environment holds `entry`; else undefined.
 */
export function environmentCarrier(pid: number, entry: string, uid: number | undefined): ProcessMark | undefined {
  const found = environmentCarrierOrEmpty(pid, entry, uid);
  return found === 'empty' ? undefined : found;
}

/**
 * environmentCarrier, or 'empty' for a user process of `uid` whose environment reads as nothing
 * (environEntryState): in the middle of an execve, or started with none. Kernel threads are
 * never 'empty': they have no environment to come.
 */
export function environmentCarrierOrEmpty(pid: number, entry: string, uid: number | undefined): ProcessMark | 'empty' | undefined {
  if (pid === process.pid) return undefined;
  if (uid !== undefined && processUid(pid) !== uid) return undefined;
  const state = environEntryState(pid, entry);
  // A zombie and a kernel thread read empty too, with no environment to come.
  if (state === 'empty') return isLiveUserProcess(pid) ? 'empty' : undefined;
  if (state !== 'present') return undefined;
  const stat = readProcStat(pid);
  return stat && !isDeadState(stat.state) ? { pid, startTime: stat.startTime, pgid: stat.pgid } : undefined;
}

/**
 * Whether a token carrier in group `pgid` belongs to a group the owner let go (`disowned`: pgid ->
 * its leader's start time), and that group is still the one it let go.
 */
export function isSpared(pgid: number, disowned: ReadonlyMap<number, number | undefined> | undefined): boolean {
  return disowned !== undefined && disowned.has(pgid) && checkGroupIdentity(pgid, disowned.get(pgid)) === 'ours';
}
