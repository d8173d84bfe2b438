// The owner library: process groups that die with this process. The in-memory map below is
// the record of truth; the death supervisor holds a copy that is replayed whenever it is replaced.
import {
  spawn,
  type ChildProcess,
  type SpawnOptions,
} from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { DEFAULT_GRACE_MS, OWNER_TOKEN_VARIABLE } from '../supervisor/protocol.js';
import { isSpared } from '../supervisor/teardown.js';
import {
  checkGroupIdentity,
  findEnvironmentCarriers,
  isProcessAlive,
  liveMemberCounts,
  ownProcessGroupId,
  groupLeaderIdentity,
  signalGroup,
  type ProcessMark,
} from '../sys/processes.js';
import { waitUntil } from '../sys/wait.js';
import { SupervisorLink } from './supervisor-link.js';
import {
  ownedWindowsPids,
  ownProcessWindows,
  releaseProcessWindows,
  spawnOwnedWindows,
  terminateOwnedWindows,
} from './windows-owner.js';

/** pgid -> leader start time at registration (undefined where the platform cannot tell). */
const owned = new Map<number, number | undefined>();
/**
 * Groups let go on purpose with releaseProcessGroup, by identity: their members still carry our
 * token, so every supervisor is told to spare them. Bounded; gone groups are pruned.
 */
const disowned = new Map<number, number | undefined>();
const MAX_DISOWNED = 4096;
let link: SupervisorLink | undefined;
let ownerToken: string | undefined;

/** The token every owned child carries in LEASH_OWNER_TOKEN; one per owner process. */
export function ownerTokenValue(): string {
  ownerToken ??= randomBytes(12).toString('hex');
  return ownerToken;
}

/** The supervisor's grace: LEASH_GRACE_MS when it is a whole number up to 600000, else 3000. */
function supervisorGraceMs(): number {
  const raw = process.env.LEASH_GRACE_MS;
  if (raw !== undefined && /^[0-9]{1,6}$/.test(raw) && Number(raw) <= 600_000) return Number(raw);
  if (raw !== undefined) process.emitWarning(`ignoring LEASH_GRACE_MS='${raw}': expected milliseconds, 0 to 600000`, { code: 'LEASH_CONFIG' });
  return DEFAULT_GRACE_MS;
}

function supervisor(): SupervisorLink {
  link ??= new SupervisorLink({
    ownerToken: ownerTokenValue(),
    graceMs: supervisorGraceMs(),
    replay: () => [
      ...[...owned].map(([pgid, startTime]) => ({ verb: 'register' as const, pgid, startTime })),
      ...[...disowned].map(([pgid, startTime]) => ({ verb: 'disown' as const, pgid, startTime })),
    ],
    needed: () => owned.size > 0 || strayCarriers().length > 0,
  });
  return link;
}

/**
 * Live processes carrying our token outside every group we let go: descendants that left
 * their group with setsid, whose group may be long gone. Linux only; reads every environ.
 */
function strayCarriers(): ProcessMark[] {
  return findEnvironmentCarriers(`${OWNER_TOKEN_VARIABLE}=${ownerTokenValue()}`).filter(
    (mark) => !owned.has(mark.pgid) && !isSpared(mark.pgid, disowned),
  );
}

/**
 * Nothing is owned any more: release the supervisor, unless token carriers outlived their
 * groups. Those stay guarded (the supervisor sweeps them if we die) and are looked at again on
 * the prune tick.
 */
function settle(): void {
  if (owned.size > 0) return;
  if (link?.pid !== undefined && strayCarriers().length > 0) {
    startPruning();
    return;
  }
  clearInterval(pruneTimer);
  pruneTimer = undefined;
  void link?.release();
}

/** The pid of this owner's death supervisor while one runs. */
export function supervisorPid(): number | undefined {
  return link?.pid;
}

/**
 * Groups can empty without any event reaching us (a leaderless group's last member exits, or a
 * group handed to ownProcessGroup ends). A slow, unref'd check forgets them, so an owner whose
 * children are all gone releases its supervisor. One signal-0 probe per group per tick.
 */
const PRUNE_INTERVAL_MS = 5000;
let pruneTimer: NodeJS.Timeout | undefined;

function startPruning(): void {
  if (pruneTimer) return;
  pruneTimer = setInterval(() => {
    pruneGone({ thorough: true });
    settle();
  }, PRUNE_INTERVAL_MS);
  pruneTimer.unref();
}

function register(pgid: number, startTime: number | undefined): void {
  owned.set(pgid, startTime);
  disowned.delete(pgid);
  pruneGone({ except: pgid });
  supervisor().send({ verb: 'register', pgid, startTime });
  startPruning();
}

function forget(pgid: number): void {
  if (!owned.delete(pgid)) return;
  link?.notify({ verb: 'unregister', pgid });
  settle();
}

/**
 * Forgets groups that are provably gone: the group probe says ESRCH, or (thorough, off the hot
 * path) the leader is gone and every member left is a zombie, which never runs again. Doubt,
 * such as EPERM, keeps a group.
 */
function pruneGone(options: { except?: number; thorough?: boolean } = {}): void {
  const leaderless: number[] = [];
  for (const [pgid, startTime] of [...owned]) {
    if (pgid === options.except) continue;
    const probe = signalGroup(pgid, 0);
    if (probe === 'gone') {
      forget(pgid);
      continue;
    }
    if (!options.thorough || probe !== 'sent') continue;
    // A recycled number is not our group, however alive it is.
    if (checkGroupIdentity(pgid, startTime) !== 'ours') forget(pgid);
    else if (!isProcessAlive(pgid, startTime)) leaderless.push(pgid);
  }
  if (leaderless.length > 0) {
    for (const [pgid, live] of liveMemberCounts(leaderless)) if (live === 0) forget(pgid);
  }
  if (options.thorough) {
    for (const [pgid, startTime] of [...disowned]) {
      if (checkGroupIdentity(pgid, startTime) !== 'ours') disowned.delete(pgid);
    }
  }
}

type SpawnArgs = readonly string[];

/**
 * `child_process.spawn`, except that the child leads a new process group (and session) that
 * is registered with this process's death supervisor before the call returns: the group is
 * taken down when this process dies, however it dies. `detached` is always true.
 */
export function spawnOwned(command: string, options?: SpawnOptions): ChildProcess;
export function spawnOwned(command: string, args?: SpawnArgs, options?: SpawnOptions): ChildProcess;
export function spawnOwned(
  command: string,
  argsOrOptions?: SpawnArgs | SpawnOptions,
  maybeOptions?: SpawnOptions,
): ChildProcess {
  const args: SpawnArgs = Array.isArray(argsOrOptions) ? argsOrOptions : [];
  const options: SpawnOptions =
    (Array.isArray(argsOrOptions) ? maybeOptions : (argsOrOptions as SpawnOptions | undefined)) ?? {};

  if (process.platform === 'win32') return spawnOwnedWindows(command, args, options); // Job Objects
  // The supervisor exists before the child does, so the token sweep covers the spawn gap.
  supervisor().ensure();
  const env = { ...(options.env ?? process.env), [OWNER_TOKEN_VARIABLE]: ownerTokenValue() };
  let child: ChildProcess;
  try {
    // detached-spawn: ok — this is the owned-spawn helper; the group is registered just below.
    child = spawn(command, args, { ...options, env, detached: true });
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
  register(pid, groupLeaderIdentity(pid));
  child.once('exit', () => {
    // The leader is gone; its group may live on (an `sh -c` wrapper's server). Forget it only
    // once nothing is left.
    if (owned.has(pid) && signalGroup(pid, 0) === 'gone') forget(pid);
  });
  return child;
}

/**
 * Guards a process group that other code spawned (say, an SDK that spawns with detached: true).
 * Returns false, with a warning, when the group does not exist or may not be signalled.
 */
export function ownProcessGroup(pgid: number): boolean {
  if (!Number.isSafeInteger(pgid)) throw new TypeError(`ownProcessGroup: expected a pgid, got ${String(pgid)}`);
  if (process.platform === 'win32') return ownProcessWindows(pgid); // a pid there
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
  register(pgid, groupLeaderIdentity(pgid));
  return true;
}

/**
 * Stops guarding a group on purpose: it will no longer be signalled when this process dies,
 * and the token sweep spares its members while the group is provably still that one.
 */
export function releaseProcessGroup(pgid: number): boolean {
  if (process.platform === 'win32') return releaseProcessWindows(pgid);
  if (!owned.has(pgid)) return false;
  const startTime = owned.get(pgid);
  owned.delete(pgid);
  disowned.delete(pgid);
  disowned.set(pgid, startTime);
  if (disowned.size > MAX_DISOWNED) disowned.delete(disowned.keys().next().value as number);
  link?.notify({ verb: 'disown', pgid, startTime });
  settle();
  return true;
}

/** The process groups currently guarded, in registration order. */
export function ownedProcessGroups(): number[] {
  if (process.platform === 'win32') return ownedWindowsPids();
  pruneGone();
  return [...owned.keys()];
}

export interface TerminateOptions {
  /** How long the group has to exit after SIGTERM before SIGKILL (default 3000 ms). */
  graceMs?: number;
}

export interface TerminateResult {
  /** The group that was acted on, if any. */
  pgid: number | undefined;
  /** False when the target was not an owned group (nothing was signalled). */
  owned: boolean;
  /** True when members survived the grace and got SIGKILL. */
  escalated: boolean;
  /** True when no member of the group runs any more. */
  empty: boolean;
}

/**
 * TERMs an owned group, waits for it to empty (zombies count as gone), KILLs what is left after
 * the grace, and forgets the group. Never rejects.
 */
export async function terminateOwned(
  target: ChildProcess | number,
  options: TerminateOptions = {},
): Promise<TerminateResult> {
  const pgid = typeof target === 'number' ? target : target.pid;
  const graceMs = Math.max(0, options.graceMs ?? DEFAULT_GRACE_MS);
  if (process.platform === 'win32') return terminateOwnedWindows(pgid); // no polite step there
  if (pgid === undefined || !owned.has(pgid)) {
    const empty = pgid === undefined || signalGroup(pgid, 0) === 'gone';
    return { pgid, owned: false, escalated: false, empty };
  }
  const startTime = owned.get(pgid);
  const isEmpty = () => (liveMemberCounts([pgid]).get(pgid) ?? 0) === 0;
  let escalated = false;
  if (checkGroupIdentity(pgid, startTime) !== 'ours') {
    // Gone, or its number now names someone else's group: either way nothing of ours is left.
    forget(pgid);
    return { pgid, owned: true, escalated: false, empty: true };
  }
  try {
    signalGroup(pgid, 'SIGTERM');
    if (!(await waitUntil(isEmpty, graceMs)) && checkGroupIdentity(pgid, startTime) === 'ours') {
      escalated = signalGroup(pgid, 'SIGKILL') === 'sent';
      await waitUntil(isEmpty, 2000);
    }
  } catch {
    // Never into the caller; the state below tells what happened.
  }
  const empty = isEmpty();
  if (empty) forget(pgid);
  return { pgid, owned: true, escalated, empty };
}
