// The owner library's public API: children that die with this process. Arguments are read and
// validated here, once, for every platform; the work is done by the platform's backend, chosen
// once below (process groups and a death supervisor on POSIX, Job Objects on Windows).
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { spawn } from '../sys/child-process.js';
import type { Launch, OwnerBackend, TerminateOptions, TerminateResult } from './owner-backend.js';
import { ownerTokenValue, posixOwner } from './posix-owner.js';
import type { EscapeeMark } from '../sys/tree.js';
import { DEFAULT_GRACE_MS } from '../supervisor/protocol.js';
import { clampedGrace, graceFrom, groupNumberOf, isGroupNumber } from './validation.js';
import { windowsOwner } from './windows-owner.js';
import { spawnArguments } from './spawn-arguments.js';

export type { TerminateOptions, TerminateResult };
export { ownerTokenValue };

/** The one place that asks which platform this is. */
const backend: OwnerBackend = process.platform === 'win32' ? windowsOwner : posixOwner;

type SpawnArgs = readonly string[];

/**
 * `child_process.spawn`, except that the child dies with this process, however it dies. On POSIX
 * it leads a new process group (and session) registered with this process's death supervisor
 * when this turn's synchronous code ends (the token in its environment covers it until then; see
 * posix-owner.ts), `detached` always true; on Windows it is in a kill-on-close job. Arguments
 * follow spawn's rules exactly (spawn-arguments.ts): the same overloads, errors and environment.
 */
export function spawnOwned(command: string, options?: SpawnOptions): ChildProcess;
export function spawnOwned(command: string, args?: SpawnArgs | null, options?: SpawnOptions): ChildProcess;
export function spawnOwned(command: string, argsOrOptions?: SpawnArgs | SpawnOptions | null, maybeOptions?: SpawnOptions): ChildProcess {
  const { args, options } = spawnArguments(argsOrOptions, maybeOptions);
  return createOwned((final) => spawn(command, args, final), options);
}

/**
 * For the other owned creators (forkOwned, execFileOwned): `launch` is Node's own creator, called
 * once with `options` plus what the platform needs (POSIX: `detached`, the owner token in `env`).
 */
export function createOwned(launch: Launch, options: SpawnOptions): ChildProcess {
  return backend.create(launch, options);
}

/**
 * Guards a process group that other code spawned (say, an SDK that spawns with detached: true);
 * on Windows the number is a pid. Returns false, with a warning, when the group does not exist or
 * may not be signalled.
 */
export function ownProcessGroup(pgid: number): boolean {
  if (!isGroupNumber(pgid)) throw new TypeError(`ownProcessGroup: expected a pgid, got ${String(pgid)}`);
  return backend.own(pgid);
}

/**
 * Stops guarding a group on purpose: it will no longer be signalled when this process dies,
 * and the token sweep spares its members while the group is provably still that one.
 */
export function releaseProcessGroup(pgid: number): boolean {
  if (!isGroupNumber(pgid)) return false;
  return backend.release(pgid);
}

/** The process groups currently guarded, in registration order. */
export function ownedProcessGroups(): number[] {
  return backend.owned();
}

/** The pid of this owner's death supervisor while one runs. */
export function supervisorPid(): number | undefined {
  return backend.supervisorPid();
}

/**
 * Whether no process of an owned group (the owned child's tree on Windows) runs any more. A probe
 * and a stat read while the leader runs; a group that outlived its leader costs a synchronous scan
 * of /proc: in a loop, or for many groups, ask ownedGroupIsEmptySoon.
 */
export function ownedGroupIsEmpty(pgid: number): boolean {
  return backend.isEmpty(pgid);
}

/** ownedGroupIsEmpty without holding the event loop: a group that outlived its leader waits for a sliced look through /proc. */
export function ownedGroupIsEmptySoon(pgid: number): Promise<boolean> {
  return backend.isEmptySoon(pgid);
}

/** Resolves true once no process of an owned group (tree) runs, false when `budgetMs` passes first. */
export function waitForOwnedGroupEmpty(pgid: number, budgetMs: number): Promise<boolean> {
  return backend.waitEmpty(pgid, budgetMs);
}

/**
 * TERMs an owned group, waits for it to empty (zombies count as gone), KILLs what is left after
 * the grace, and forgets the group (Windows: ends the child's job at once). Never rejects,
 * whatever it is given: a target that is not a ChildProcess with a pid or a whole number (the
 * rule ownProcessGroup applies) names no group.
 */
export async function terminateOwned(
  target: ChildProcess | number,
  options: TerminateOptions = {},
): Promise<TerminateResult> {
  // Read once, and never into a rejection: a target or options whose getters throw name no group,
  // or mean the defaults.
  let pgid: number | undefined;
  try {
    pgid = groupNumberOf(target);
  } catch {
    pgid = undefined;
  }
  if (pgid === undefined) return { pgid, owned: false, escalated: false, empty: true };
  let graceMs = DEFAULT_GRACE_MS;
  let find = true;
  try {
    graceMs = graceFrom(options);
    find = !(typeof options === 'object' && options !== null && (options as { escapees?: unknown }).escapees === false);
  } catch {
    // The defaults above.
  }
  return backend.terminate(pgid, graceMs, { find, earlier: [] });
}

/**
 * For a caller that lets the group end by itself first (the MCP transport's EOF): what has
 * escaped the group so far, to hand to terminateOwnedWithEscapees once the group has had its
 * chance. Once the server has exited, what it started no longer descends from the group.
 */
export function ownedGroupEscapees(pgid: number): Promise<readonly EscapeeMark[]> {
  return backend.escapees(pgid);
}

/** terminateOwned, also ending `escapees` found earlier (each only while it is still itself); the grace by terminateOwned's rule. */
export function terminateOwnedWithEscapees(pgid: number, graceMs: unknown, escapees: readonly EscapeeMark[]): Promise<TerminateResult> {
  return backend.terminate(pgid, clampedGrace(graceMs, DEFAULT_GRACE_MS), { find: true, earlier: escapees });
}
