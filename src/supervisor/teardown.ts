// What the death supervisor does once its owner is gone: TERM every registered group that is
// provably still the one registered, every process that left one of them but still descends from
// it, and every process carrying the owner's token; wait for them to empty (zombies count as
// empty); KILL what is left after the grace.
import { hasProcfs, readChildrenOfThreads } from '../sys/procfs.js';
import { descendantsOutsideGroups } from '../sys/tree.js';
import {
  checkGroupIdentity,
  findEnvironmentCarriers,
  isProcessAlive,
  isSpared,
  liveGroups,
  signalGroup,
  signalProcess,
  type ProcessMark,
} from '../sys/processes.js';
import { waitUntil } from '../sys/wait.js';
import { OWNER_TOKEN_VARIABLE } from './protocol.js';

/** pgid -> leader start time recorded when the group was named (undefined where none was given). */
export type GroupRecord = ReadonlyMap<number, number | undefined>;

export interface TeardownPlan {
  groups: GroupRecord;
  graceMs: number;
  /** Sweep processes whose environment carries this token (Linux only). */
  ownerToken?: string;
  /** Groups the owner let go on purpose: the sweep spares their members while each group is provably still that one. */
  disowned?: GroupRecord;
}

export interface TeardownReport {
  /** Groups that received SIGTERM. */
  termedGroups: number[];
  /** Registered groups left alone because their number now names another group. */
  staleGroups: number[];
  /** Processes outside those groups that were signalled: descendants that left them, token carriers. */
  strays: number[];
  /** Groups or processes that were still alive after the grace and got SIGKILL. */
  killed: number;
}

/**
 * Runs the teardown's code once on harmless input (this process's own group, an empty plan), so
 * that V8 has compiled it before EOF: compiled lazily at EOF it would cost milliseconds between
 * the owner's death and the first SIGTERM.
 */
export async function warmUpTeardown(ownPgid: number): Promise<void> {
  checkGroupIdentity(ownPgid, undefined);
  isProcessAlive(process.pid);
  liveGroups([ownPgid]);
  if (hasProcfs()) {
    descendantsOutsideGroups(new Set([ownPgid]));
    readChildrenOfThreads(process.pid, 1);
  }
  await tearDown({ groups: new Map(), graceMs: 0 });
}

export async function tearDown(plan: TeardownPlan): Promise<TeardownReport> {
  const report: TeardownReport = { termedGroups: [], staleGroups: [], strays: [], killed: 0 };

  // Registered groups first: they are the common case and must not wait on the sweep. Where
  // /proc can show their descendants, they are frozen (SIGSTOP) rather than ended: a member that
  // exits hands its children to init, and a process that left the group with setsid and a
  // scrubbed environment is then found by nothing. Frozen, no member exits or forks while the
  // walk finds who still descends from them; then they get SIGTERM and SIGCONT.
  // Every identity is proven before the first signal, and the signals go out in tight loops: each
  // signalled member wakes (all its threads, for SIGSTOP and SIGCONT) and competes for the CPU.
  const freeze = hasProcfs() && plan.groups.size > 0;
  const proven: number[] = [];
  for (const [pgid, startTime] of plan.groups) {
    const identity = checkGroupIdentity(pgid, startTime);
    if (identity === 'stale') report.staleGroups.push(pgid);
    else if (identity === 'ours') proven.push(pgid);
  }
  const ours: number[] = [];
  for (const pgid of proven) if (signalGroup(pgid, freeze ? 'SIGSTOP' : 'SIGTERM') === 'sent') ours.push(pgid);
  const groups = new Set(ours);

  const strays = new Map<number, ProcessMark>();
  const signalStray = (mark: ProcessMark, signal: NodeJS.Signals) => {
    strays.set(mark.pid, mark);
    signalProcess(mark.pid, signal);
    report.strays.push(mark.pid);
  };
  if (freeze) {
    let escapees: ProcessMark[] = [];
    try {
      escapees = descendantsOutsideGroups(groups).filter((stat) => stat.pid !== process.pid && !isSpared(stat.pgid, plan.disowned));
    } finally {
      // Whatever the search met, no group is left frozen. A member stopped with a TERM handler
      // would hold the signal until SIGKILL: SIGCONT thaws it (and one stopped before us).
      for (const pgid of groups) signalGroup(pgid, 'SIGTERM');
      for (const pgid of groups) signalGroup(pgid, 'SIGCONT');
    }
    for (const mark of escapees) signalStray(mark, 'SIGTERM');
  }
  report.termedGroups.push(...ours);

  // Then whatever carries the token outside those groups: the spawn gap, and escapees whose
  // parent chain no longer leads into a group. Returns how many newcomers it found (and signalled).
  const sweep = (signal: NodeJS.Signals): number => {
    if (!plan.ownerToken) return 0;
    let newcomers = 0;
    for (const mark of findEnvironmentCarriers(`${OWNER_TOKEN_VARIABLE}=${plan.ownerToken}`)) {
      if (strays.has(mark.pid) || groups.has(mark.pgid) || isSpared(mark.pgid, plan.disowned)) continue;
      signalStray(mark, signal);
      newcomers += 1;
    }
    return newcomers;
  };
  sweep('SIGTERM');

  const remaining = () => {
    const live = liveGroups(groups);
    for (const pgid of groups) if (!live.has(pgid)) groups.delete(pgid);
    for (const [pid, mark] of strays) if (!isProcessAlive(pid, mark.startTime)) strays.delete(pid);
    return groups.size + strays.size;
  };
  // Done only when nothing is left and one more sweep finds no newcomer: a process may have
  // called setsid (from a TERM handler, say) after the first sweep.
  const settled = (signal: NodeJS.Signals) => remaining() === 0 && sweep(signal) === 0;

  if (await waitUntil(() => settled('SIGTERM'), plan.graceMs)) return report;

  // Escalate, re-proving every identity first.
  sweep('SIGKILL');
  for (const pgid of groups) {
    if (checkGroupIdentity(pgid, plan.groups.get(pgid)) !== 'ours') continue;
    if (signalGroup(pgid, 'SIGKILL') === 'sent') report.killed += 1;
  }
  for (const [pid, mark] of strays) {
    if (!isProcessAlive(pid, mark.startTime)) continue;
    if (signalProcess(pid, 'SIGKILL') === 'sent') report.killed += 1;
  }
  // SIGKILL cannot be refused; wait briefly so our exit means "done".
  await waitUntil(() => settled('SIGKILL'), 2000);
  return report;
}
