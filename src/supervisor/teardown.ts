// What the death supervisor does once its owner is gone: TERM every registered group that is
// provably still the one registered, every process that left one of them but still descends from
// it, and every process carrying the owner's token; wait for them to empty (zombies count as
// empty); KILL what is left after the grace.
import { writeSync } from 'node:fs';
import { hasProcfs, readChildrenOfThreads, readChildrenOnceStopped, readProcStat } from '../sys/procfs.js';
import { FROZEN_WALK_BUDGET_MS, walkFrozenGroups, type FrozenWalk } from '../sys/tree.js';
import { proveLeader, proveMembers, signalProven, unprovenGroupNotice, type ProcessIdentityMark } from '../sys/group-membership.js';
import {
  findEnvironmentCarriers,
  isProcessAlive,
  isSpared,
  liveGroups,
  signalGroup,
  signalProcess,
  type ProcessMark,
} from '../sys/processes.js';
import { pauseSync, waitUntil } from '../sys/wait.js';
import { GroupHandle, groupHandlesAvailable, provesGroup } from '../sys/group-handle.js';
import { loadNativeSync, nativeLoaded } from '../sys/native.js';
import { OWNER_TOKEN_VARIABLE } from './protocol.js';
import type { Watchdog } from './watchdog.js';

/** pgid -> leader start time recorded when the group was named (undefined where none was given). */
export type GroupRecord = ReadonlyMap<number, number | undefined>;

export interface TeardownPlan {
  groups: GroupRecord;
  /** What holds each group by identity (its leader's pidfd, its witnesses): by number only where none is. */
  handles?: ReadonlyMap<number, GroupHandle>;
  graceMs: number;
  /** Sweep processes whose environment carries this token (Linux only). */
  ownerToken?: string;
  /** Members recorded for groups registered without their leader (registry.ts): proof once the leader is gone. */
  members?: ReadonlyMap<number, readonly ProcessIdentityMark[]>;
  /** Groups the owner let go on purpose: the sweep spares their members while each group is provably still that one. */
  disowned?: GroupRecord;
  /** Holds the list of what is stopped during the freeze, and SIGKILLs it if this process dies meanwhile. */
  watchdog?: Watchdog;
  /** Where a line for the user goes (the supervisor's rate-limited stderr). */
  notify?: (message: string) => void;
}

/**
 * Test hooks, read from the environment when the supervisor starts and inert when unset (the owner library
 * starts the supervisor with a scrubbed environment, which never holds them):
 * - LEASH_TEST_SUPERVISOR_PAUSE=escapee:MS blocks MS milliseconds when the walk meets its first
 *   escapee, before it stops it; =frozen:MS blocks after the walk, with everything still stopped.
 *   A test can then act on a frozen teardown, or SIGKILL the supervisor in the middle of it.
 * - LEASH_TEST_SUPERVISOR_WALK_MAX=N cuts the walk at N processes (the default cut is 4096).
 */
function readTestHooks(): { pauseAt?: string; pauseMs: number; walkMax?: number } {
  const pause = /^(escapee|frozen):([0-9]{1,5})$/.exec(process.env.LEASH_TEST_SUPERVISOR_PAUSE ?? '');
  const max = Number(process.env.LEASH_TEST_SUPERVISOR_WALK_MAX);
  return {
    pauseAt: pause?.[1],
    pauseMs: Number(pause?.[2] ?? 0),
    walkMax: Number.isInteger(max) && max > 0 ? max : undefined,
  };
}
/** Read once, at load: nothing on the path from EOF to the first signal. */
const hooks = readTestHooks();

export interface TeardownReport {
  /** Groups that received SIGTERM. */
  termedGroups: number[];
  /** Registered groups left alone because their number now names another group. */
  staleGroups: number[];
  /** Leaderless groups left alone because none of their members is provably ours (see group-membership.ts). */
  unprovenGroups: number[];
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
  proveLeader(ownPgid, undefined, probeGroup);
  proveMembers(new Set(), {});
  isProcessAlive(process.pid);
  liveGroups([ownPgid]);
  if (hasProcfs()) {
    // Spares whatever it meets: nothing is signalled.
    walkFrozenGroups(new Set([ownPgid]), { stopEscapees: true, spare: () => true });
    readChildrenOfThreads(process.pid, 1);
    readChildrenOnceStopped(process.pid);
  }
  await tearDown({ groups: new Map(), graceMs: 0 });
}

/** Once the native calls are loaded: compiles the handle's path (a pidfd of our own group, probed with signal 0). */
export function warmUpHandles(ownPgid: number): void {
  const own = GroupHandle.take(ownPgid, readProcStat(ownPgid)?.startTime);
  try {
    own.prove();
    own.signal(0);
  } finally {
    own.close();
  }
}

const probeGroup = (pgid: number) => signalGroup(pgid, 0);
/** No pidfd here (no native code): the start time is checked right before kill(2). */
const signalIfAlive = (pid: number, startTime: number, signal: NodeJS.Signals) =>
  isProcessAlive(pid, startTime) ? signalProcess(pid, signal) : 'gone';

/**
 * Pauses of 2, then at most 4 ms for the first 250 ms of the grace, while a look is a probe per
 * group (under 1 ms); a look that had to scan /proc (a leader gone, members left) waits the usual
 * pause, so that a large machine's scans do not take the CPU the dying tree needs. Then 50 ms.
 */
const TERM_CLOSE_LOOK = { maxPauseMs: 4, forMs: 250, cheapMs: 1 };

export async function tearDown(plan: TeardownPlan): Promise<TeardownReport> {
  const report: TeardownReport = { termedGroups: [], staleGroups: [], unprovenGroups: [], strays: [], killed: 0 };

  // Registered groups first: they are the common case and must not wait on the sweep. Where
  // /proc can show their descendants, they are frozen (SIGSTOP) rather than ended: a member that
  // exits hands its children to init, and a process that left the group with setsid and a
  // scrubbed environment is then found by nothing. Frozen, no member exits or forks while the
  // walk finds who still descends from them; then they get SIGTERM and SIGCONT.
  // Every identity is proven before the first signal, and the signals go out in tight loops: each
  // signalled member wakes (all its threads, for SIGSTOP and SIGCONT) and competes for the CPU.
  let freeze = hasProcfs() && plan.groups.size > 0;
  // Started at the first registration. Not started here: its spawn would cost milliseconds before
  // the first signal. (An EOF that comes first finds none, and its freeze is uncovered.)
  const watchdog = freeze && plan.watchdog?.pid !== undefined ? plan.watchdog : undefined;
  // By number only while the leader is the recorded one (one stat read each); a group whose leader
  // is gone is ended member by member, each proven ours, after the others have their signals.
  // A group held by a handle or witnesses (group-handle.ts) is proven by them, leader or not;
  // one with a working pidfd is signalled through it, so a number reused meanwhile is never hit.
  // Handles inherited at a restart need the native calls: loaded here if that has not happened yet.
  if (!nativeLoaded() && [...(plan.handles?.values() ?? [])].some((handle) => handle.descriptor !== undefined)) loadNativeSync();
  const handleOf = (pgid: number) => plan.handles?.get(pgid);
  const viaHandle = new Map<number, GroupHandle>();
  // Proven groups whose leader is gone are frozen and walked too (their escapees are found the same
  // way); the watchdog holds those by a witness (`w` lines), known ones before the SIGSTOP, else
  // the first member the walk meets (docs/supervisor.md names the window left).
  const leaderGone = new Set<number>();
  const proven: number[] = [];
  const leaderless = new Set<number>();
  // Groups held by a working pidfd need no proof before their first signal: the signal through
  // the pidfd is the proof (it reaches that group or nothing). No /proc read stands before it:
  // each path read there costs tens of microseconds the first time after a pause.
  const throughPidfd: number[] = [];
  const pidfdsWork = groupHandlesAvailable();
  for (const [pgid, startTime] of plan.groups) {
    if (pgid === watchdog?.pid) continue; // its own group, never a target
    const handle = handleOf(pgid);
    if (!handle) {
      const identity = proveLeader(pgid, startTime, probeGroup);
      if (identity === 'stale') report.staleGroups.push(pgid);
      else if (identity === 'leader' || identity === 'number') proven.push(pgid);
      else if (identity === 'leaderless') leaderless.add(pgid);
      continue;
    }
    if (pidfdsWork && handle.descriptor !== undefined) {
      throughPidfd.push(pgid);
      continue;
    }
    const proof = handle.prove();
    if (provesGroup(proof)) {
      proven.push(pgid);
      // 'handle' here: a pidfd that works though the one-time probe failed (no descriptor to spare then).
      if (proof === 'handle') viaHandle.set(pgid, handle);
      if (proof === 'witness' || (proof === 'handle' && readProcStat(pgid)?.startTime !== startTime)) leaderGone.add(pgid);
    } else if (proof === 'unproven') leaderless.add(pgid);
    else if (startTime !== undefined && readProcStat(pgid) !== undefined) report.staleGroups.push(pgid);
  }
  /** A proven group's signal: through its pidfd where it has one, else by its number. */
  const signalOurs = (pgid: number, signal: NodeJS.Signals): 'sent' | 'gone' | 'denied' => {
    const handle = viaHandle.get(pgid);
    if (!handle) return signalGroup(pgid, signal);
    const outcome = handle.signal(signal);
    return outcome === 'unproven' ? 'gone' : outcome;
  };
  // The watchdog learns what is about to be stopped before it is (one write for every group).
  // A list the pipe could not take whole (tens of thousands of groups) covers no freeze: the
  // groups are then ended without one (TERM at once, no walk for escapees).
  // A group held by a pidfd may have lost its leader: its witnesses (where any are known) go on
  // the list too, unread.
  const held = [...proven, ...throughPidfd];
  const heldWitnesses = [...leaderGone, ...throughPidfd].flatMap((pgid) => (handleOf(pgid)?.witnesses ?? []).map((witness) => ({ pgid, ...witness })));
  if (watchdog && (!watchdog.holdGroups(held.map((pgid) => [pgid, plan.groups.get(pgid)])) || !watchdog.holdGroupsByWitness(heldWitnesses))) {
    freeze = false;
    plan.notify?.(`the watchdog could not take the list of ${held.length} groups: they are ended without the freeze (escapees that left them are not looked for)`);
  }
  // However the teardown ends (an exception included), the watchdog is retired: left with its
  // list, a supervisor's normal exit would have it SIGKILL them all without a grace.
  try {
    const ours: number[] = [];
    const goneThroughPidfd: number[] = [];
    const refusedThroughPidfd: number[] = [];
    for (const pgid of throughPidfd) {
      const handle = handleOf(pgid)!;
      const outcome = handle.signalThroughPidfd(freeze ? 'SIGSTOP' : 'SIGTERM');
      if (outcome === 'sent') {
        viaHandle.set(pgid, handle);
        ours.push(pgid);
      } else if (outcome === 'gone') goneThroughPidfd.push(pgid);
      else if (outcome === 'denied') {
        refusedThroughPidfd.push(pgid);
        plan.notify?.(`process group ${pgid} refused the signal (EPERM): not ours to end`);
      } else if (outcome === 'none') {
        // The flag was refused since (a kernel that turned it down once): proven another way.
        const proof = handle.prove();
        if (proof === 'unproven') leaderless.add(pgid);
        else if (provesGroup(proof) && signalGroup(pgid, freeze ? 'SIGSTOP' : 'SIGTERM') === 'sent') ours.push(pgid);
      }
    }
    for (const pgid of proven) if (signalOurs(pgid, freeze ? 'SIGSTOP' : 'SIGTERM') === 'sent') ours.push(pgid);
    const groups = new Set(ours);

    const strays = new Map<number, ProcessMark>();
    const signalStray = (mark: ProcessMark, signal: NodeJS.Signals) => {
      strays.set(mark.pid, mark);
      signalProcess(mark.pid, signal);
      report.strays.push(mark.pid);
    };
    // Members of frozen groups, by identity: proof for a group whose leader exits during the grace.
    const frozenMembers = new Map<number, ProcessIdentityMark[]>();
    const spare = (stat: { pid: number; pgid: number }) => stat.pid === watchdog?.pid || isSpared(stat.pgid, plan.disowned);
    const tokenEntry = plan.ownerToken ? `${OWNER_TOKEN_VARIABLE}=${plan.ownerToken}` : undefined;
    /** Ends the proven members of leaderless groups, one by one by identity; drops (and reports) a group with none. */
    const endLeaderless = (pgids: ReadonlySet<number>, signal: NodeJS.Signals): number => {
      if (pgids.size === 0) return 0;
      const recorded = (pgid: number) => [...(plan.members?.get(pgid) ?? []), ...(frozenMembers.get(pgid) ?? []), ...strays.values()];
      let reached = 0;
      for (const [pgid, proof] of proveMembers(pgids, { recorded, tokenEntry, spare })) {
        if (proof.proven.length === 0) {
          if (proof.unproven > 0) {
            report.unprovenGroups.push(pgid);
            plan.notify?.(unprovenGroupNotice(pgid, proof.unproven));
          }
          continue;
        }
        for (const mark of signalProven(proof.proven.filter((mark) => !strays.has(mark.pid)), signal, signalIfAlive)) {
          strays.set(mark.pid, mark);
          report.strays.push(mark.pid);
          reached += 1;
        }
      }
      return reached;
    };
    if (freeze) {
      // Escapees are stopped as they are found (a running one could fork faster than the walk),
      // put on the watchdog's list first (one write for the escapees among one parent's children).
      const stopped: ProcessMark[] = [];
      let walk: FrozenWalk | undefined;
      try {
        walk = walkFrozenGroups(groups, {
          stopEscapees: true,
          spare,
          onMember: (stat, leaderGone) => {
            const list = frozenMembers.get(stat.pgid);
            if (list) list.push(stat);
            else {
              frozenMembers.set(stat.pgid, [stat]);
              // A group whose leader is gone is held on the watchdog's list by its first member met
              // (no `g` line can hold it): a supervisor killed during the walk leaves none of it stopped.
              if (leaderGone) watchdog?.holdGroupsByWitness([{ pgid: stat.pgid, pid: stat.pid, startTime: stat.startTime }]);
            }
          },
          beforeStop: (stats) => {
            if (hooks.pauseAt === 'escapee' && stopped.length === 0) pauseSync(hooks.pauseMs);
            // Not on the watchdog's list (its pipe is full): left running, ended with the others
            // after the walk, never stopped where this process's death would leave them stopped.
            if (watchdog && !watchdog.holdProcesses(stats)) return false;
            stopped.push(...stats);
            return true;
          },
          maxProcesses: hooks.walkMax,
          // The test pause is not the walk's time.
          budgetMs: FROZEN_WALK_BUDGET_MS + (hooks.pauseAt === 'escapee' ? hooks.pauseMs : 0),
        });
        if (hooks.pauseAt === 'frozen') {
          // Said first, at once: a test acts on the frozen teardown once the walk is over.
          writeSync(2, 'leash supervise: test pause: frozen\n');
          pauseSync(hooks.pauseMs);
        }
      } finally {
        // Whatever the walk met, nothing is left stopped. A member stopped with a TERM handler
        // would hold the signal until SIGKILL: SIGCONT thaws it (and one stopped before us).
        for (const pgid of groups) signalOurs(pgid, 'SIGTERM');
        for (const pgid of groups) signalOurs(pgid, 'SIGCONT');
        // Each still the process found (its start time), then TERM and CONT.
        const thaw = stopped.filter((mark) => isProcessAlive(mark.pid, mark.startTime));
        for (const mark of thaw) signalStray(mark, 'SIGTERM');
        for (const mark of thaw) signalProcess(mark.pid, 'SIGCONT');
        // The watchdog's list stays until the teardown is over: a supervisor killed during the
        // grace has its SIGKILL done by the watchdog, and no write competes with the thaw.
      }
      // Off the path to the first signals: the frozen members go on the watchdog's list by
      // identity, each a witness of its group, so that a supervisor killed during the grace has
      // them and their groups KILLed even where the leader exited on the TERM (a `g` line holds a
      // group only with its leader).
      if (watchdog && frozenMembers.size > 0) {
        watchdog.holdGroupsByWitness([...frozenMembers].flatMap(([pgid, members]) => members.map((member) => ({ pgid, pid: member.pid, startTime: member.startTime }))));
      }
      // Seen in their groups while those were proven: witnesses, should a leader exit on the TERM.
      for (const [pgid, members] of frozenMembers) handleOf(pgid)?.addWitnesses(members);
      const signalled = new Set(stopped.map((mark) => mark.pid));
      for (const stat of walk.escapees) {
        if (!signalled.has(stat.pid) && isProcessAlive(stat.pid, stat.startTime)) signalStray(stat, 'SIGTERM');
      }
      if (walk.cut) {
        plan.notify?.(
          `the walk for escapees was cut at ${walk.cut === 'count' ? `${walk.visited - 1} processes` : `${FROZEN_WALK_BUDGET_MS} ms`} ` +
            `(${walk.escapees.length} escapee(s) found and signalled; what lies below the cut is not)`,
        );
      }
    }
    report.termedGroups.push(...ours);
    // Emptied groups whose number a process holds now: reported as taken by another. Off the
    // watchdog's list: their numbers are free for reuse.
    for (const pgid of goneThroughPidfd) if (plan.groups.get(pgid) !== undefined && readProcStat(pgid) !== undefined) report.staleGroups.push(pgid);
    const offTheList = [...goneThroughPidfd, ...refusedThroughPidfd];
    if (watchdog && offTheList.length > 0 && !watchdog.forget(offTheList, [])) watchdog.retire();
    endLeaderless(leaderless, 'SIGTERM');

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

    // What is gone leaves the watchdog's list at once: its number may be reused, and the watchdog
    // (acting if this process dies during the grace) must never signal the new holder. A list that
    // cannot be kept true is worse than none: then the watchdog is retired.
    const forget = (pgids: number[], pids: number[]) => {
      if (watchdog && !watchdog.forget(pgids, pids)) watchdog.retire();
    };
    const remaining = () => {
      const emptied: number[] = [];
      // A group whose pidfd says it emptied is done, whoever has taken its number since.
      for (const [pgid, handle] of viaHandle) {
        if (!groups.has(pgid) || handle.prove() !== 'gone') continue;
        groups.delete(pgid);
        emptied.push(pgid);
      }
      const live = liveGroups(groups);
      const exited: number[] = [];
      for (const pgid of groups) {
        if (live.has(pgid)) continue;
        groups.delete(pgid);
        emptied.push(pgid);
      }
      for (const [pid, mark] of strays) {
        if (isProcessAlive(pid, mark.startTime)) continue;
        strays.delete(pid);
        exited.push(pid);
      }
      forget(emptied, exited);
      return groups.size + strays.size;
    };
    // Done only when nothing is left and one more sweep finds no newcomer: a process may have
    // called setsid (from a TERM handler, say) after the first sweep.
    const settled = (signal: NodeJS.Signals) => remaining() === 0 && sweep(signal) === 0;

    // Looked at every few ms at first: a tree that honours SIGTERM is gone within tens of ms, and
    // the back-off to 50 ms kept this process up to 30 ms past that (its exit is what the owner's
    // parent, or a bench, sees as "done").
    if (await waitUntil(() => settled('SIGTERM'), plan.graceMs, TERM_CLOSE_LOOK)) return report;

    // Escalate, re-proving every identity first: a group whose leader exited meanwhile (a wrapper
    // that ended on SIGTERM) is ended member by member, each proven (frozen with it, recorded,
    // carrying the token, or below one of those); one with no proven member is dropped.
    sweep('SIGKILL');
    const lostLeaders = new Set(leaderless);
    for (const pgid of groups) {
      const handle = handleOf(pgid);
      const proof = handle ? handle.prove() : proveLeader(pgid, plan.groups.get(pgid), probeGroup);
      if (proof === 'leaderless' || proof === 'unproven') lostLeaders.add(pgid);
      if (!(proof === 'leader' || proof === 'number' || proof === 'handle' || proof === 'witness')) {
        groups.delete(pgid);
        forget([pgid], []);
        continue;
      }
      if ((proof === 'handle' ? handle!.signal('SIGKILL') : signalGroup(pgid, 'SIGKILL')) === 'sent') report.killed += 1;
    }
    report.killed += endLeaderless(lostLeaders, 'SIGKILL');
    for (const [pid, mark] of strays) {
      if (!isProcessAlive(pid, mark.startTime)) continue;
      if (signalIfAlive(pid, mark.startTime, 'SIGKILL') === 'sent') report.killed += 1;
    }
    // SIGKILL cannot be refused; wait briefly so our exit means "done".
    await waitUntil(() => settled('SIGKILL'), 2000);
    return report;
  } finally {
    // Nothing is held stopped and nothing is left to do: the supervisor exits next.
    watchdog?.retire();
  }
}
