// The owner library on POSIX: process groups that die with this process. The in-memory map below
// is the record of truth; the death supervisor holds a copy that is replayed whenever it is replaced.
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { OWNER_TOKEN_VARIABLE, type ControlCommand } from '../supervisor/protocol.js';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  proveLeader,
  proveMembers,
  proveMembersSoon,
  recordGroupMembers,
  signalProven,
  unprovenGroupNotice,
  type MembershipEvidence,
  type MembershipProof,
  type ProcessIdentityMark,
} from '../sys/group-membership.js';
import {
  checkGroupIdentity,
  isProcessAlive,
  LEADER_ALREADY_GONE,
  liveGroups,
  ownProcessGroupId,
  groupLeaderIdentity,
  isSpared,
  signalGroup,
  signalProcess,
  type ProcessMark,
} from '../sys/processes.js';
import { scanAllStatsInSlices } from '../sys/group-membership.js';
import { signalIfSame } from '../sys/verified-signal.js';
import { escapeesOfGroupInSlices, type EscapeeMark } from '../sys/tree.js';
import { waitUntil } from '../sys/wait.js';
import { randomHex } from '../sys/random.js';
import { findEnvironmentCarriersInSlices } from '../sys/environ-scan.js';
import { isGroupEmptyInSlices, liveMemberCountsInSlices, waitForGroupEmpty } from '../sys/group-exit.js';
import { SupervisorLink } from './supervisor-link.js';
import { identityLines, inheritAtMost, recallLines } from './identity-lines.js';
import { RoundRobin } from './round-robin.js';
import type { EscapeeHandling, Launch, OwnerBackend, TerminateResult } from './owner-backend.js';
import { graceFromEnvironment, LIBRARY_GRACE } from '../config/grace.js';
import { hasProcfs, isDeadState, readProcStat, type ProcStat } from '../sys/procfs.js';
import { GroupHandle, provesGroup, type GroupProof } from '../sys/group-handle.js';
import { loadNative } from '../sys/native.js';

/** pgid -> leader start time at registration (undefined where the platform cannot tell). */
const owned = new Map<number, number | undefined>();
/**
 * Members of owned groups by identity, recorded when the leader was found gone (the group owned
 * without it, the leader's exit, each prune): once the leader is gone, the group's number proves
 * nothing, and only these, the token carriers and what descends from them are signalled.
 */
const ownedMembers = new Map<number, ProcessIdentityMark[]>();
/** Members recorded per group at most. */
const MAX_RECORDED_MEMBERS = 256;
const probeGroup = (pgid: number) => signalGroup(pgid, 0);
/**
 * Groups let go on purpose with releaseProcessGroup, by identity: their members still carry our
 * token, so every supervisor is told to spare them. Bounded; gone groups are pruned.
 */
const disowned = new Map<number, number | undefined>();
const MAX_DISOWNED = 4096;
let link: SupervisorLink | undefined;
let ownerToken: string | undefined;

/**
 * pgid -> the owned group held by identity (group-handle.ts): the leader's pidfd where group
 * handles work (the native calls load once, at the first registration, off the caller's path), its
 * witnesses elsewhere. Signals, emptiness and the prune go through it; a replacement supervisor
 * inherits the pidfds and is told the witnesses, never "whoever is in the group now".
 */
const handles = new Map<number, GroupHandle>();
let nativeRequested = false;
/** How often the witnesses of groups held without a pidfd are refreshed (a few reads each). */
const WITNESS_REFRESH_MS = 500;
let witnessTimer: NodeJS.Timeout | undefined;

function requestNative(): void {
  if (nativeRequested || !hasProcfs()) return;
  nativeRequested = true;
  void loadNative()
    .then((loaded) => {
      // Groups taken meanwhile get their pidfds now, while their leaders are the recorded ones.
      if (loaded) for (const handle of handles.values()) handle.openHandle();
    })
    .catch(() => {});
}

/** Holds group `pgid` by identity (its leader started at `startTime`). */
function holdGroup(pgid: number, startTime: number | undefined): GroupHandle {
  requestNative();
  const previous = handles.get(pgid);
  if (previous && previous.leaderStartTime === startTime) {
    if (!previous.openHandle()) previous.refreshWitnesses();
    return previous;
  }
  previous?.close();
  const handle = GroupHandle.take(pgid, startTime);
  handles.set(pgid, handle);
  if (handle.needsRefresh()) refreshWitnessesSoon();
  return handle;
}

function dropHandle(pgid: number): void {
  handles.get(pgid)?.close();
  handles.delete(pgid);
}

/** Groups whose witnesses one tick refreshes at most (a few reads each): a large set is covered over several ticks. */
const WITNESS_REFRESHES_PER_TICK = 64;
const witnessRing = new RoundRobin(handles);

/** Keeps the witnesses of groups held without a pidfd fresh, on an unref'd timer, while any is. */
function refreshWitnessesSoon(): void {
  if (witnessTimer || !hasProcfs()) return;
  witnessTimer = setInterval(() => {
    let refreshed = 0;
    for (let looked = 0; looked < handles.size && refreshed < WITNESS_REFRESHES_PER_TICK; looked += 1) {
      const handle = handles.get(witnessRing.take(1)[0]!);
      if (!handle?.needsRefresh()) continue;
      handle.refreshWitnesses();
      refreshed += 1;
    }
    if (refreshed === 0) {
      clearInterval(witnessTimer);
      witnessTimer = undefined;
    }
  }, WITNESS_REFRESH_MS);
  witnessTimer.unref();
}

/** What proves an owned group now: its handle, else its leader as recorded (no handle: a group not yet identified). */
function proveOwned(pgid: number): GroupProof {
  const handle = handles.get(pgid);
  if (handle) return handle.prove();
  const identity = proveLeader(pgid, owned.get(pgid), probeGroup);
  return identity === 'stale' ? 'gone' : identity === 'leaderless' ? 'unproven' : identity;
}

/** Signals an owned group proven by proveOwned: through its pidfd where held, else by number. */
function signalOwned(pgid: number, signal: NodeJS.Signals): 'sent' | 'gone' | 'denied' {
  const handle = handles.get(pgid);
  if (!handle) return signalGroup(pgid, signal);
  const outcome = handle.signal(signal);
  return outcome === 'unproven' ? 'gone' : outcome;
}

/** The token every owned child carries in LEASH_OWNER_TOKEN; one per owner process. */
export function ownerTokenValue(): string {
  ownerToken ??= randomHex(12);
  return ownerToken;
}

/** The supervisor's grace: LEASH_GRACE_MS by the rule both grace settings share (src/config/grace.ts). */
function supervisorGraceMs(): number {
  return graceFromEnvironment(process.env, LIBRARY_GRACE, (message) => process.emitWarning(message, { code: 'LEASH_CONFIG' }));
}

/**
 * Whether processes carrying our token may live outside every owned group (setsid escapees):
 * 'unknown' from the first spawn until a scan has looked, 'none' or 'some' after one.
 */
let strays: 'none' | 'unknown' | 'some' = 'none';
/** Bumped by every spawn: a scan that started before one cannot vouch for 'none'. */
let spawnGeneration = 0;
let strayScan: Promise<void> | undefined;

function supervisor(): SupervisorLink {
  link ??= new SupervisorLink({
    ownerToken: ownerTokenValue(),
    graceMs: supervisorGraceMs(),
    replay: (inherit) => {
      // Groups spawned this turn are identified now and go with the replay.
      identifyUnwritten();
      // A group named by its identity, never by who is in it now: `recall` records nobody, and
      // its pidfd (inherited) or its witnesses follow. By number alone where nothing can be told.
      const inheritSome = inheritAtMost(inherit);
      const lines: ControlCommand[] = [];
      for (const [pgid, startTime] of owned) {
        if (startTime === undefined) {
          lines.push({ verb: 'register', pgid });
          continue;
        }
        lines.push(...recallLines(pgid, startTime, handles.get(pgid), ownedMembers.get(pgid), inheritSome));
      }
      for (const [pgid, startTime] of disowned) lines.push({ verb: 'disown', pgid, startTime });
      return lines;
    },
    needed: () => owned.size > 0 || strays !== 'none',
  });
  return link;
}

/**
 * Looks for live processes carrying our token outside every owned group and every group we let
 * go: descendants that left their group with setsid, whose group may be long gone. Reads every
 * environ on the machine, a slice at a time (Linux only); one scan at a time.
 */
function scanForStrays(): Promise<void> {
  strayScan ??= (async () => {
    const generation = spawnGeneration;
    let found: ProcessMark[] | undefined;
    try {
      found = await findEnvironmentCarriersInSlices(`${OWNER_TOKEN_VARIABLE}=${ownerTokenValue()}`);
    } catch {
      found = undefined;
    }
    const some = found === undefined || found.some((mark) => !owned.has(mark.pgid) && !isSpared(mark.pgid, disowned));
    if (some) strays = 'some';
    else if (generation === spawnGeneration) strays = 'none';
  })().finally(() => {
    strayScan = undefined;
  });
  return strayScan;
}

/**
 * Nothing is owned any more: release the supervisor, unless token carriers outlived their
 * groups. Those stay guarded (the supervisor sweeps them if we die) and are looked at again on
 * the prune tick. Whether any are left is known without a scan only when no child was spawned
 * since the last one.
 */
function settle(): void {
  if (owned.size > 0) return;
  if (link?.pid === undefined || strays === 'none') {
    stopPruning();
    void link?.release();
    return;
  }
  // The scan looks again at a process caught in the middle of an execve (a `setsid sleep`
  // becoming sleep shows no environment for that instant): one scan is enough to let go.
  void scanForStrays().then(() => {
    if (owned.size > 0) return;
    if (strays === 'none') {
      stopPruning();
      void link?.release();
    } else {
      startPruning();
    }
  });
}

/** The pid of this owner's death supervisor while one runs. */
function supervisorPid(): number | undefined {
  return link?.pid;
}

/**
 * Groups can empty without any event reaching us (a leaderless group's last member exits, or a
 * group handed to ownProcessGroup ends). A slow, unref'd check forgets them, so an owner whose
 * children are all gone releases its supervisor. Done in slices: the event loop is never held
 * for more than a slice.
 */
const PRUNE_INTERVAL_MS = 5000;
/** Groups looked at per slice of the prune before the event loop gets a turn. */
const PRUNE_SLICE = 64;
let pruneTimer: NodeJS.Timeout | undefined;
let pruning = false;

function startPruning(): void {
  if (pruneTimer) return;
  pruneTimer = setInterval(() => {
    if (pruning) return;
    pruning = true;
    void pruneThoroughly()
      .catch(() => {})
      .finally(() => {
        pruning = false;
        settle();
      });
  }, PRUNE_INTERVAL_MS);
  pruneTimer.unref();
}

function stopPruning(): void {
  clearInterval(pruneTimer);
  pruneTimer = undefined;
}

/** Puts a group in the owned set (its leader's start time, or undefined until it is read). */
function track(pgid: number, startTime: number | undefined): void {
  owned.set(pgid, startTime);
  disowned.delete(pgid);
  // One probe per registration keeps the set from filling with gone groups between prune
  // ticks, at a cost that does not grow with the set.
  pruneSome(1, pgid);
  startPruning();
}

function register(pgid: number, startTime: number | undefined): void {
  unwritten.delete(pgid);
  track(pgid, startTime);
  holdGroup(pgid, startTime);
  supervisor().send({ verb: 'register', pgid, startTime });
}

function forget(pgid: number): void {
  ownedMembers.delete(pgid);
  dropHandle(pgid);
  if (!owned.delete(pgid)) return;
  // Never written: the supervisor has nothing to forget.
  if (unwritten.delete(pgid)) {
    settle();
    return;
  }
  link?.notify({ verb: 'unregister', pgid });
  settle();
}

/**
 * Groups of children spawnOwned started this turn, owned but not yet written to the supervisor:
 * their leaders' start times are read and their lines written together, once, when the current
 * turn's synchronous code ends (process.nextTick). The call itself then costs the spawn, the
 * environment copy and a few map updates; a burst of spawns costs one write.
 *
 * What this gives up, and why it holds: until the flush, the supervisor knows the child only by
 * the owner token in its environment (the supervisor was started before the child, and the
 * child carries the token from its first instruction, since spawn returns after exec). An owner
 * SIGKILLed before the flush has the child swept by that token; what the sweep cannot see is a
 * process the child forked, in that same turn, with a scrubbed environment, in the child's group.
 * Where there is no procfs there is no sweep, and the line is written before spawnOwned returns.
 * The pid cannot be recycled before the flush: libuv reaps its children only from the event loop.
 */
const unwritten = new Set<number>();
let flushQueued = false;
const deferRegistration = hasProcfs();

function registerSoon(pgid: number): void {
  if (!deferRegistration) {
    register(pgid, groupLeaderIdentity(pgid));
    return;
  }
  // In the set at once (ownedProcessGroups, terminateOwned, release see it); identified at the flush.
  unwritten.add(pgid);
  track(pgid, undefined);
  if (flushQueued) return;
  flushQueued = true;
  process.nextTick(flushRegistrations);
}

/** Reads the start time of every unwritten group still owned; returns their register lines. */
function identifyUnwritten(): ControlCommand[] {
  const commands: ControlCommand[] = [];
  for (const pgid of unwritten) {
    if (!owned.has(pgid)) continue;
    const startTime = groupLeaderIdentity(pgid);
    owned.set(pgid, startTime);
    // The leader cannot have been reaped yet (libuv reaps from the event loop): its pidfd is exact.
    holdGroup(pgid, startTime);
    commands.push({ verb: 'register', pgid, startTime });
  }
  unwritten.clear();
  return commands;
}

/** Writes the registrations of this turn's spawns in one line batch. Anything that reads a start time calls it first. */
function flushRegistrations(): void {
  flushQueued = false;
  if (unwritten.size === 0) return;
  supervisor().sendAll(identifyUnwritten());
}

/** Where pruneSome goes on from, round the owned set. */
const pruneRing = new RoundRobin(owned);

/** Probes the next `count` owned groups (round-robin) and forgets those that are gone (ESRCH). */
function pruneSome(count: number, except: number): void {
  for (const pgid of pruneRing.take(count)) if (pgid !== except && signalGroup(pgid, 0) === 'gone') forget(pgid);
}

/** Forgets every group the probe says is gone (ESRCH): one probe per group. */
function pruneGone(): void {
  for (const pgid of [...owned.keys()]) if (signalGroup(pgid, 0) === 'gone') forget(pgid);
}

/**
 * Forgets groups that are provably gone: the group probe says ESRCH, its number now names
 * another group, or the leader is gone and every member left is a zombie (which never runs
 * again). Doubt, such as EPERM, keeps a group.
 */
async function pruneThoroughly(): Promise<void> {
  flushRegistrations();
  const leaderless = new Map<number, number | undefined>();
  const unproven = new Map<number, number | undefined>();
  let looked = 0;
  for (const [pgid, startTime] of [...owned]) {
    if (++looked % PRUNE_SLICE === 0) await yieldToLoop();
    // Re-registered or forgotten meanwhile: not the entry this pass is about.
    if (!owned.has(pgid) || owned.get(pgid) !== startTime) continue;
    const probe = signalGroup(pgid, 0);
    if (probe === 'gone') {
      forget(pgid);
      continue;
    }
    if (probe !== 'sent') continue;
    // A recycled number is not our group, however alive it is; without its leader, its handle or
    // a witness keeps it while it has live members, else only its proven members do.
    const proof = proveOwned(pgid);
    if (proof === 'gone') forget(pgid);
    else if (proof === 'unproven') unproven.set(pgid, startTime);
    else if (!isProcessAlive(pgid, startTime)) leaderless.set(pgid, startTime);
    const handle = handles.get(pgid);
    if (handle?.needsRefresh()) handle.refreshWitnesses();
  }
  if (leaderless.size > 0) {
    for (const [pgid, live] of await liveMemberCountsInSlices(new Set(leaderless.keys()))) {
      if (live === 0 && owned.has(pgid) && owned.get(pgid) === leaderless.get(pgid)) forget(pgid);
    }
  }
  if (unproven.size > 0) {
    for (const [pgid, proof] of await proveMembersSoon(new Set(unproven.keys()), ownedEvidence(new Set(unproven.keys())))) {
      if (!owned.has(pgid) || owned.get(pgid) !== unproven.get(pgid)) continue;
      // What is proven now is recorded: a child proven by its parent stays proven once orphaned.
      if (proof.proven.length > 0) ownedMembers.set(pgid, proof.proven.slice(0, MAX_RECORDED_MEMBERS));
      else dropUnproven(pgid, proof);
    }
  }
  looked = 0;
  for (const [pgid, startTime] of [...disowned]) {
    if (++looked % PRUNE_SLICE === 0) await yieldToLoop();
    if (disowned.get(pgid) === startTime && checkGroupIdentity(pgid, startTime) !== 'ours') disowned.delete(pgid);
  }
}

/**
 * `child_process.spawn` (or fork: `launch`), except that the child leads a new process group (and
 * session) that is registered with this process's death supervisor when this turn's synchronous
 * code ends (registerSoon). `detached` is always true.
 */
function createOwned(launch: Launch, options: SpawnOptions): ChildProcess {
  // The supervisor exists before the child does, so the token sweep covers the spawn gap.
  supervisor().ensure();
  const env = { ...(options.env ?? process.env), [OWNER_TOKEN_VARIABLE]: ownerTokenValue() };
  let child: ChildProcess;
  try {
    // detached-spawn: ok — this is the owned-spawn helper; the group is registered at the turn's end.
    child = launch({ ...options, env, detached: true });
  } catch (error) {
    // Bad arguments throw as they would from spawn; the supervisor started for them goes.
    settle();
    throw error;
  }
  const pid = child.pid;
  if (pid === undefined) {
    // The spawn failed (ENOENT, EACCES...): the 'error' event tells the caller; nothing to own.
    settle();
    return child;
  }
  // From now on a process carries our token and may leave its group: only a scan can say otherwise.
  strays = 'unknown';
  spawnGeneration += 1;
  registerSoon(pid);
  child.once('exit', () => {
    // The leader is gone; its group may live on (an `sh -c` wrapper's server). Forget it only
    // once nothing is left.
    if (!owned.has(pid)) return;
    if (signalGroup(pid, 0) === 'gone') forget(pid);
    else recordMembersSoon(pid, owned.get(pid));
  });
  return child;
}

/**
 * Guards a process group that other code spawned (say, an SDK that spawns with detached: true).
 * Returns false, with a warning, when the group does not exist or may not be signalled.
 */
function ownProcessGroup(pgid: number): boolean {
  let ownPgid: number | undefined;
  try {
    ownPgid = ownProcessGroupId();
  } catch {
    ownPgid = undefined;
  }
  if (pgid <= 1 || pgid === ownPgid) {
    process.emitWarning(`ownProcessGroup: refusing process group ${pgid} (init, or this process's own group)`, {
      code: 'LEASH_UNSAFE_GROUP',
    });
    return false;
  }
  if (signalGroup(pgid, 0) === 'gone') {
    process.emitWarning(
      `ownProcessGroup: no process group ${pgid} exists (spawn the child with detached: true so it leads one)`,
      { code: 'LEASH_NO_GROUP' },
    );
    return false;
  }
  const startTime = groupLeaderIdentity(pgid);
  register(pgid, startTime);
  // Owned without its leader: its members now are what proves it later (the supervisor records its own).
  if (startTime === LEADER_ALREADY_GONE) {
    const members = (recordGroupMembers(new Set([pgid])).get(pgid) ?? []).slice(0, MAX_RECORDED_MEMBERS);
    ownedMembers.set(pgid, members);
    handles.get(pgid)?.addWitnesses(members);
  }
  return true;
}

/** Groups whose leader exited this turn with members left, by the leader start time they were owned with. */
const toRecord = new Map<number, number | undefined>();

/**
 * Records the live members of an owned group whose leader has just exited (its number still
 * answers, so they are its members): later, they prove the group. One sliced scan of /proc for
 * every leader that exited in the same turn.
 */
function recordMembersSoon(pgid: number, startTime: number | undefined): void {
  if (!hasProcfs()) return;
  toRecord.set(pgid, startTime);
  if (toRecord.size > 1) return;
  setImmediate(() => {
    void scanAllStatsInSlices()
      .then((stats) => {
        const groups = new Map(toRecord);
        toRecord.clear();
        const found = recordGroupMembers(new Set(groups.keys()), stats);
        for (const [group, start] of groups) {
          if (!owned.has(group) || owned.get(group) !== start) continue;
          // Read while the group was still the one held (its pidfd reaches it after the scan: it
          // never emptied, so its number named no one else): then they are its members.
          const handle = handles.get(group);
          if (handle?.hasHandle() && handle.prove() === 'gone') continue;
          const members = (found.get(group) ?? []).slice(0, MAX_RECORDED_MEMBERS);
          ownedMembers.set(group, members);
          handle?.addWitnesses(members);
          // The supervisor may have missed them (the leader gone before it looked, a scrubbed
          // environment): it is told, so they die at our death.
          for (const line of identityLines(group, handle, members)) link?.notify(line);
        }
      })
      .catch(() => toRecord.clear()); // the prune looks again
  });
}

/** What proves a process ours: recorded members, our token, descent; groups owned on their own or let go are not entered. */
function ownedEvidence(pgids: ReadonlySet<number>): MembershipEvidence {
  return {
    recorded: (pgid) => ownedMembers.get(pgid),
    tokenEntry: `${OWNER_TOKEN_VARIABLE}=${ownerTokenValue()}`,
    spare: (stat) => !pgids.has(stat.pgid) && isSparedGroup(stat.pgid),
  };
}

/** Forgets a leaderless group that nothing proves ours; a warning says so when live members are left unsignalled. */
function dropUnproven(pgid: number, proof: MembershipProof): void {
  if (proof.unproven > 0) process.emitWarning(unprovenGroupNotice(pgid, proof.unproven), { code: 'LEASH_UNPROVEN_GROUP' });
  forget(pgid);
}

/** The groups asked about in this turn, proven together from one sliced scan. */
let proofBatch: { pgids: Set<number>; proofs: Promise<Map<number, MembershipProof>> } | undefined;

/** The proof for one owned group whose leader is gone; every group asked about in the same turn shares the scan. */
async function proveOwnedGroup(pgid: number): Promise<MembershipProof> {
  if (!proofBatch) {
    const pgids = new Set<number>();
    const proofs = (async () => {
      await yieldToLoop();
      proofBatch = undefined;
      return proveMembersSoon(pgids, ownedEvidence(pgids));
    })();
    proofBatch = { pgids, proofs };
  }
  proofBatch.pgids.add(pgid);
  return (await proofBatch.proofs).get(pgid) ?? { proven: [], unproven: 0 };
}

/**
 * Stops guarding a group on purpose: it will no longer be signalled when this process dies,
 * and the token sweep spares its members while the group is provably still that one.
 */
function releaseProcessGroup(pgid: number): boolean {
  if (!owned.has(pgid)) return false;
  // The disown line carries the start time, and must follow the register line.
  flushRegistrations();
  const startTime = owned.get(pgid);
  owned.delete(pgid);
  dropHandle(pgid);
  disowned.delete(pgid);
  disowned.set(pgid, startTime);
  if (disowned.size > MAX_DISOWNED) disowned.delete(disowned.keys().next().value as number);
  link?.notify({ verb: 'disown', pgid, startTime });
  settle();
  return true;
}

/** The process groups currently guarded, in registration order. */
function ownedProcessGroups(): number[] {
  pruneGone();
  return [...owned.keys()];
}

/** How long terminateOwned waits for a SIGKILLed group to empty. */
const KILL_WAIT_MS = 2000;

/**
 * terminateOwned calls admitted per turn of the event loop. Each reads the leader's stat and
 * signals its group: cheap alone, but hundreds started together would hold the loop for tens of
 * milliseconds (a signal wakes its target, which may take the CPU from us).
 */
const TERMINATIONS_PER_TURN = 4;
const admissions: Array<() => void> = [];

/** Resolves on a later turn of the event loop, at most TERMINATIONS_PER_TURN callers per turn. */
function takeTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    admissions.push(resolve);
    if (admissions.length === 1) setImmediate(admitSome);
  });
}

function admitSome(): void {
  const admitted = admissions.splice(0, TERMINATIONS_PER_TURN);
  if (admissions.length > 0) setImmediate(admitSome);
  for (const resolve of admitted) resolve();
}

/**
 * TERMs an owned group, waits for it to empty (zombies count as gone), KILLs what is left after
 * the grace, and forgets the group. What left the group but descends from its leader (found
 * now unless told not to, plus those a caller found before the server could exit) gets the same signals
 * on the same clock, each by its identity. Never rejects. Waiting costs a probe and a stat read
 * per group per check, shared by all callers.
 */
async function terminateOwned(pgid: number, graceMs: number, handling: EscapeeHandling): Promise<TerminateResult> {
  await takeTurn();
  flushRegistrations();
  // Found before the first signal: once a member exits, what it started is reparented and no
  // longer descends from the group.
  const escapees = distinctMarks([...handling.earlier, ...(handling.find ? await escapeesOfOwnedGroup(pgid) : [])]);
  let result: TerminateResult;
  let proof: GroupProof | undefined;
  // Members the leader has now are witnesses: should the TERM end the leader first, they still prove the group.
  handles.get(pgid)?.refreshWitnesses();
  if (!owned.has(pgid)) {
    result = { pgid, owned: false, escalated: false, empty: signalGroup(pgid, 0) === 'gone' };
    // Let go of on purpose meanwhile: what escaped it goes with it, into its own life.
    if (isSpared(pgid, disowned)) return result;
  } else if ((proof = proveOwned(pgid)) === 'gone') {
    // Gone, or its number now names someone else's group: either way nothing of ours is left.
    forget(pgid);
    result = { pgid, owned: true, escalated: false, empty: true };
  } else if (proof === 'unproven') {
    // Its number proves nothing now: only its proven members are ended, one by one.
    const proof = await proveOwnedGroup(pgid);
    if (proof.proven.length === 0) {
      dropUnproven(pgid, proof);
      result = { pgid, owned: true, escalated: false, empty: proof.unproven === 0 };
    } else {
      const [escalated, escapeesEscalated] = await Promise.all([endProven(proof.proven, graceMs), escapees.length > 0 && endEscapees(escapees, graceMs)]);
      const after = await proveOwnedGroup(pgid);
      if (after.proven.length === 0) dropUnproven(pgid, after);
      return { pgid, owned: true, escalated: escalated || escapeesEscalated, empty: after.proven.length + after.unproven === 0 };
    }
  } else {
    result = await endGroup(pgid, graceMs, escapees);
    if (result.empty) forget(pgid);
    return result;
  }
  // No group to end, but what escaped it while it was owned still goes (a transport's close
  // found them before the server left on EOF).
  if (escapees.length > 0 && (await endEscapees(escapees, graceMs))) result.escalated = true;
  return result;
}

/** TERM, grace, KILL for a group proven ours and for what escaped it, on the same clock. */
async function endGroup(pgid: number, graceMs: number, found: readonly EscapeeMark[]): Promise<TerminateResult> {
  const startTime = owned.get(pgid);
  let escalated = false;
  let empty = false;
  try {
    signalOwned(pgid, 'SIGTERM');
    const escapees = signalMarks(found, 'SIGTERM');
    const deadline = performance.now() + graceMs;
    empty = await waitForGroupEmpty(pgid, graceMs);
    const escapeesGone = await waitForMarksGone(escapees, deadline - performance.now());
    let members: ProcessIdentityMark[] = [];
    if (!empty) {
      // Proven again: the leader may have exited on the TERM, leaving members behind (its handle
      // or a witness still proves the group then).
      const proof = owned.get(pgid) === startTime ? proveOwned(pgid) : 'gone';
      if (provesGroup(proof)) {
        escalated = signalOwned(pgid, 'SIGKILL') === 'sent';
      } else if (proof === 'unproven') {
        const proof = await proveOwnedGroup(pgid);
        members = signalProven(proof.proven, 'SIGKILL', signalIfSame);
        escalated = members.length > 0;
        if (proof.proven.length === 0) {
          dropUnproven(pgid, proof);
          empty = true;
        }
      } else {
        empty = true;
      }
    }
    if (!escapeesGone && signalMarks(escapees, 'SIGKILL').length > 0) escalated = true;
    // The two waits after SIGKILL side by side: one KILL_WAIT_MS at most, as before escapees.
    const membersGone = waitForMarksGone(members, KILL_WAIT_MS);
    [empty] = await Promise.all([empty || waitForGroupEmpty(pgid, KILL_WAIT_MS), escapeesGone || waitForMarksGone(escapees, KILL_WAIT_MS)]);
    // A group left with none but unproven members (a stranger took the number) is empty of ours.
    if (!empty && members.length > 0 && (await membersGone)) empty = (await proveOwnedGroup(pgid)).proven.length === 0;
  } catch {
    // Never into the caller; the state below tells what happened.
  }
  return { pgid, owned: true, escalated, empty };
}

/** TERM, grace, KILL for proven members of a leaderless group, each by identity; whether any got SIGKILL. */
async function endProven(members: readonly ProcessIdentityMark[], graceMs: number): Promise<boolean> {
  try {
    const reached = signalProven(members, 'SIGTERM', signalIfSame);
    if (await waitForMarksGone(reached, graceMs)) return false;
    const killed = signalProven(reached, 'SIGKILL', signalIfSame);
    await waitForMarksGone(killed, KILL_WAIT_MS);
    return killed.length > 0;
  } catch {
    return false; // never into the caller
  }
}

/** TERM, grace, KILL for escapees alone (their group already gone or not ours to signal); whether any got SIGKILL. */
async function endEscapees(found: readonly EscapeeMark[], graceMs: number): Promise<boolean> {
  let escalated = false;
  try {
    const escapees = signalMarks(found, 'SIGTERM');
    if (!(await waitForMarksGone(escapees, graceMs))) {
      escalated = signalMarks(escapees, 'SIGKILL').length > 0;
      await waitForMarksGone(escapees, KILL_WAIT_MS);
    }
  } catch {
    // Never into the caller.
  }
  return escalated;
}

/**
 * The processes that left owned group `pgid` but still descend from its leader, for
 * terminateOwned to end with it. Groups owned on their own, or let go with releaseProcessGroup,
 * are not escapees: they keep their own lives.
 */
async function escapeesOfOwnedGroup(pgid: number): Promise<EscapeeMark[]> {
  if (!hasProcfs() || !owned.has(pgid)) return [];
  // Walked from the leader: only while it is the recorded one (the walk starts at its pid).
  const identity = proveLeader(pgid, owned.get(pgid), probeGroup);
  if (identity !== 'leader' && identity !== 'number') return [];
  try {
    return await escapeesOfGroupInSlices(pgid, (stat) => isSparedGroup(stat.pgid));
  } catch {
    return [];
  }
}

/** A group an escapee walk leaves alone, with all below it: owned on its own, released, or this process's own. */
function isSparedGroup(pgid: number): boolean {
  return owned.has(pgid) || isSpared(pgid, disowned) || pgid === ownProcessGroupId();
}

function distinctMarks(marks: readonly EscapeeMark[]): EscapeeMark[] {
  const byPid = new Map<number, EscapeeMark>();
  for (const mark of marks) byPid.set(mark.pid, mark);
  return [...byPid.values()];
}

/**
 * Signals every mark still to be ended, and the group it leads while it leads one: a group
 * number cannot be reused while its leader lives, so the leader proves the group. Returns the
 * marks the signal reached: only those are waited for (one of another user's, EPERM, is not).
 */
function signalMarks(marks: readonly EscapeeMark[], signal: NodeJS.Signals): EscapeeMark[] {
  const reached: EscapeeMark[] = [];
  for (const mark of marks) {
    const stat = toEnd(mark);
    if (!stat) continue;
    const outcome = stat.pid === stat.pgid ? signalGroup(stat.pgid, signal) : signalProcess(stat.pid, signal);
    if (outcome === 'sent') reached.push(mark);
  }
  return reached;
}

/**
 * A mark's process as it is now, if it is still to be ended: the process found (its start time),
 * running code, not this process, and in or below no group that is spared now (the owner may
 * have taken or let go of one since the mark was made, seconds earlier for a transport's close).
 */
function toEnd(mark: EscapeeMark): ProcStat | undefined {
  const stat = readProcStat(mark.pid);
  if (!stat || isDeadState(stat.state) || stat.startTime !== mark.startTime || mark.pid === process.pid) return undefined;
  if (isSparedGroup(stat.pgid) || mark.groups.some(isSparedGroup)) return undefined;
  return stat;
}

/** Resolves true once no mark runs code any more (zombies count as gone), false at `budgetMs`. */
function waitForMarksGone(marks: readonly ProcessIdentityMark[], budgetMs: number): Promise<boolean> {
  return waitUntil(() => marks.every((mark) => !isProcessAlive(mark.pid, mark.startTime)), budgetMs);
}

/**
 * Whether nothing of ours runs in a group any more. An owned group is settled by its leader while
 * it is the recorded one (a probe and a stat read); without it, by the proof: a group whose live
 * members are none of them provably ours (a stranger has the number) is empty of ours, and dropped.
 */
function ownedGroupIsEmptyNow(pgid: number): boolean {
  const proof = owned.has(pgid) ? proveOwned(pgid) : 'number';
  if (provesGroup(proof)) return liveGroups([pgid]).size === 0;
  if (proof === 'unproven') {
    const pgids = new Set([pgid]);
    const proof = proveMembers(pgids, ownedEvidence(pgids)).get(pgid) ?? { proven: [], unproven: 0 };
    if (proof.proven.length > 0) return false;
    dropUnproven(pgid, proof);
    return true;
  }
  forget(pgid);
  return true;
}

/** ownedGroupIsEmptyNow without holding the event loop: a leaderless group waits for a shared sliced scan. */
async function ownedGroupIsEmptySoon(pgid: number): Promise<boolean> {
  const proof = owned.has(pgid) ? proveOwned(pgid) : 'number';
  if (provesGroup(proof)) return isGroupEmptyInSlices(pgid);
  if (proof === 'unproven') {
    const proof = await proveOwnedGroup(pgid);
    if (proof.proven.length > 0) return false;
    if (owned.has(pgid)) dropUnproven(pgid, proof);
    return true;
  }
  forget(pgid);
  return true;
}

export const posixOwner: OwnerBackend = {
  create: createOwned,
  own: ownProcessGroup,
  release: releaseProcessGroup,
  owned: ownedProcessGroups,
  terminate: terminateOwned,
  // Admitted like terminations: a client closing fifty servers at once walks a few per turn.
  escapees: async (pgid) => {
    await takeTurn();
    return escapeesOfOwnedGroup(pgid);
  },
  // A probe and the leader's stat settle most groups; only a leaderless one costs a scan of /proc.
  isEmpty: ownedGroupIsEmptyNow,
  isEmptySoon: ownedGroupIsEmptySoon,
  waitEmpty: waitForGroupEmpty,
  supervisorPid,
};
