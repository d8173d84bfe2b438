// The one seam between the public owner API (owned-groups.ts) and a platform's way of owning
// processes: process groups and a death supervisor on POSIX (posix-owner.ts), Job Objects on
// Windows (windows-owner.ts). The API validates its arguments once and hands them to the backend
// chosen here; no other owner file asks which platform it runs on.
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import type { EscapeeMark } from '../sys/tree.js';

/** Node's creator of the child, called once with the final options. */
export type Launch = (options: SpawnOptions) => ChildProcess;

export interface TerminateOptions {
  /**
   * How long the group has to exit after SIGTERM before SIGKILL: default 3000 ms; clamped to
   * 0..600000 (Infinity waits the most, 10 minutes); anything that is not a number, or NaN,
   * means the default.
   */
  graceMs?: number;
  /**
   * Whether processes that left the group but descend from its leader (a child started with
   * setsid or `detached: true`) are ended with it: default true; only `false` turns it off, and
   * leaves them to the sweep at this process's death (POSIX; a Windows job holds them anyway).
   */
  escapees?: boolean;
}

/** What terminate does about escapees: look for them now, and end those found earlier too. */
export interface EscapeeHandling {
  find: boolean;
  earlier: readonly EscapeeMark[];
}

export interface TerminateResult {
  /** The group that was acted on, if any (undefined when the target names no group). */
  pgid: number | undefined;
  /** False when the target was not an owned group (nothing was signalled). */
  owned: boolean;
  /** True when members (or processes that escaped the group) survived the grace and got SIGKILL. */
  escalated: boolean;
  /** True when no member of the group runs any more (always true when the target names no group). */
  empty: boolean;
}

/** What a platform provides; arguments arrive already validated by the public API. */
export interface OwnerBackend {
  /**
   * Starts a child with `launch` (Node's spawn or fork, handed the options the platform needs:
   * POSIX adds `detached` and the owner token to `env`) so that it, and what it starts, dies
   * with this process.
   */
  create(launch: Launch, options: SpawnOptions): ChildProcess;
  /** Guards a group (POSIX) or process (Windows) started elsewhere; false, with a warning, if it cannot. */
  own(pgid: number): boolean;
  /** Stops guarding it on purpose. */
  release(pgid: number): boolean;
  /** What is guarded now. */
  owned(): number[];
  /**
   * Ends an owned group or tree, within `graceMs` where the platform has a polite step, with
   * the processes that escaped it (POSIX: found now unless told not to, and those found earlier).
   */
  terminate(pgid: number, graceMs: number, escapees: EscapeeHandling): Promise<TerminateResult>;
  /**
   * The processes that left an owned group but descend from it, found now (POSIX: a child
   * started with setsid or `detached`); none where the platform's container holds them all.
   */
  escapees(pgid: number): Promise<readonly EscapeeMark[]>;
  /** Whether no process of the group (POSIX) or of the owned child's tree (Windows) runs any more. */
  isEmpty(pgid: number): boolean;
  /** The same, never holding the event loop for a look through the whole process table. */
  isEmptySoon(pgid: number): Promise<boolean>;
  /** Resolves true once the group (tree) is empty, false when `budgetMs` passes first; never blocks the event loop. */
  waitEmpty(pgid: number, budgetMs: number): Promise<boolean>;
  /** The death supervisor's pid while one runs (POSIX only). */
  supervisorPid(): number | undefined;
}
