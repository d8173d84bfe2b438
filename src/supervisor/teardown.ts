// What the death supervisor does once its owner is gone: TERM every registered group that is
// provably still the one registered, and every process carrying the owner's token; wait for
// them to empty (zombies count as empty); KILL what is left after the grace.
import { hasProcfs, isDeadState, listPids, processUid, readProcStat, environHasEntry } from '../sys/procfs.js';
import {
  checkGroupIdentity,
  isProcessAlive,
  liveMemberCounts,
  signalGroup,
  signalProcess,
} from '../sys/processes.js';
import { waitUntil } from '../sys/wait.js';
import { OWNER_TOKEN_VARIABLE } from './protocol.js';

export interface TeardownPlan {
  /** pgid -> leader start time recorded at registration (undefined where none was given). */
  groups: ReadonlyMap<number, number | undefined>;
  graceMs: number;
  /** Sweep processes whose environment carries this token (Linux only). */
  ownerToken?: string;
  /** Groups whose members the sweep leaves alone: the owner let them go on purpose. */
  spareGroups?: ReadonlySet<number>;
}

export interface TeardownReport {
  /** Groups that received SIGTERM. */
  termedGroups: number[];
  /** Registered groups left alone because their number now names another group. */
  staleGroups: number[];
  /** Token-carrying processes outside those groups that received SIGTERM. */
  strays: number[];
  /** Groups or processes that were still alive after the grace and got SIGKILL. */
  killed: number;
}

/** Processes of our uid whose environment holds the owner token, with their start times. */
export function findTokenCarriers(token: string, exclude: ReadonlySet<number>): Map<number, ProcessMark> {
  const found = new Map<number, ProcessMark>();
  if (!hasProcfs()) return found;
  const entry = `${OWNER_TOKEN_VARIABLE}=${token}`;
  const uid = process.getuid?.();
  for (const pid of listPids()) {
    if (pid === process.pid || exclude.has(pid)) continue;
    if (uid !== undefined && processUid(pid) !== uid) continue;
    if (!environHasEntry(pid, entry)) continue;
    const stat = readProcStat(pid);
    if (stat && !isDeadState(stat.state)) found.set(pid, { startTime: stat.startTime, pgid: stat.pgid });
  }
  return found;
}

export interface ProcessMark {
  startTime: number;
  pgid: number;
}

export async function tearDown(plan: TeardownPlan): Promise<TeardownReport> {
  const report: TeardownReport = { termedGroups: [], staleGroups: [], strays: [], killed: 0 };

  // Registered groups first: they are the common case and must not wait on the sweep.
  for (const [pgid, startTime] of plan.groups) {
    const identity = checkGroupIdentity(pgid, startTime);
    if (identity === 'stale') report.staleGroups.push(pgid);
    if (identity !== 'ours') continue;
    if (signalGroup(pgid, 'SIGTERM') === 'sent') report.termedGroups.push(pgid);
  }
  const groups = new Set(report.termedGroups);

  // Then whatever carries the token outside those groups: the spawn gap and setsid escapees.
  const strays = new Map<number, ProcessMark>();
  const sweep = () => {
    if (!plan.ownerToken) return [];
    const fresh: number[] = [];
    for (const [pid, mark] of findTokenCarriers(plan.ownerToken, new Set(strays.keys()))) {
      if (groups.has(mark.pgid) || plan.spareGroups?.has(mark.pgid)) continue;
      strays.set(pid, mark);
      fresh.push(pid);
    }
    return fresh;
  };
  for (const pid of sweep()) {
    signalProcess(pid, 'SIGTERM');
    report.strays.push(pid);
  }

  const remaining = () => {
    const counts = liveMemberCounts(groups);
    for (const [pgid, live] of counts) if (live === 0) groups.delete(pgid);
    for (const [pid, mark] of strays) if (!isProcessAlive(pid, mark.startTime)) strays.delete(pid);
    return groups.size + strays.size;
  };

  if (await waitUntil(() => remaining() === 0, plan.graceMs)) return report;

  // Escalate. Catch token carriers forked during the grace, and re-prove every identity.
  for (const pid of sweep()) report.strays.push(pid);
  for (const pgid of groups) {
    if (checkGroupIdentity(pgid, plan.groups.get(pgid)) !== 'ours') continue;
    if (signalGroup(pgid, 'SIGKILL') === 'sent') report.killed += 1;
  }
  for (const [pid, mark] of strays) {
    if (!isProcessAlive(pid, mark.startTime)) continue;
    if (signalProcess(pid, 'SIGKILL') === 'sent') report.killed += 1;
  }
  // SIGKILL cannot be refused; wait briefly so our exit means "done".
  await waitUntil(() => remaining() === 0, 2000);
  return report;
}
