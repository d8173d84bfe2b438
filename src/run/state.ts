// The state document of `leash run`: a small fixed-shape JSON file that a person or a program can
// read at any time (`leash status`). Replaced atomically (write a private temporary file, then
// rename over the old one), so a reader never sees half a document.
import { closeSync, constants, fchmodSync, fchownSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ownIdentity } from '../sys/process-identity.js';
import { randomHex } from '../sys/random.js';

export const PHASES = ['starting', 'running', 'stopping', 'killing', 'exited'] as const;
export type Phase = (typeof PHASES)[number];

/** The document's fields; the names are part of the interface (programs read them). */
export interface RunState {
  active_children: number;
  adopted_children: number;
  escalated: boolean;
  orphaned_children_total: number;
  phase: Phase;
  reaped_children_total: number;
  reaped_orphans_total: number;
  runner_exit_code: number | null;
  termination_signal: number | null;
  updated_at: string;
}

export const STATE_FIELDS: ReadonlyArray<keyof RunState> = [
  'active_children',
  'adopted_children',
  'escalated',
  'orphaned_children_total',
  'phase',
  'reaped_children_total',
  'reaped_orphans_total',
  'runner_exit_code',
  'termination_signal',
  'updated_at',
];

/** What a runner without adoption (one group or job, nothing reaped but the command) knows. */
export interface SingleRunnerView {
  members: number;
  escalated: boolean;
  phase: Phase;
  exitCode: number | null;
  terminationSignal: number | null;
}

/** The document's fields (but updated_at) for such a runner: the Windows job and the group fallback. */
export function singleRunnerState(view: SingleRunnerView): Omit<RunState, 'updated_at'> {
  return {
    active_children: view.members,
    adopted_children: 0,
    escalated: view.escalated,
    orphaned_children_total: 0,
    phase: view.phase,
    reaped_children_total: view.exitCode === null ? 0 : 1,
    reaped_orphans_total: 0,
    runner_exit_code: view.exitCode,
    termination_signal: view.terminationSignal,
  };
}

/** Serialises with the keys in a fixed (sorted) order, one line. */
export function serializeState(state: RunState): string {
  const ordered: Record<string, unknown> = {};
  for (const field of STATE_FIELDS) ordered[field] = state[field];
  return JSON.stringify(ordered) + '\n';
}

/** Flags of the temporary file: a new file only (never an existing one, never through a link), never a wait. */
const TEMPORARY_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Writes `text` to `path` atomically with mode 0600 (or `keep`'s mode and owner, for a file that
 * replaces someone's config). The temporary file has an unpredictable
 * name and is created exclusively, without following links and without blocking, so nothing
 * planted in the directory (a symlink to redirect the write, a FIFO to block it) is ever opened;
 * its mode is set on the descriptor, not by name. Throws on failure (after cleaning up).
 */
export function replaceFileAtomically(path: string, text: string, keep?: { mode: number; uid: number; gid: number }): void {
  const temporary = join(dirname(path), `.${basename(path)}.${randomHex(8)}.tmp`);
  let created = false;
  try {
    // Created 0600 from the start, so the content is never readable by others, even briefly.
    const fd = openSync(temporary, TEMPORARY_FLAGS, 0o600);
    created = true;
    try {
      // The umask may have taken bits away; a kept owner first, since chown can clear setuid bits.
      if (keep && process.getuid?.() === 0) fchownSync(fd, keep.uid, keep.gid);
      fchmodSync(fd, keep ? keep.mode & 0o7777 : 0o600);
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    // Only a file we created is ours to remove: the name may be someone else's.
    if (created) rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * Where the writer of the state document at `path` records who it is: the document keeps its
 * ten keys (programs parse it), and `leash status` checks this file to tell a live run from a
 * document whose writer died without saying `exited`.
 */
export function writerRecordPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.writer`);
}

/** Runs a write; undefined when it succeeded, else why it failed. */
function failureOf(write: () => void): string | undefined {
  try {
    write();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Publishes state changes at most once per `minIntervalMs`, and at once when forced (phase
 * boundaries). A change that arrives too soon is written when the interval ends. The first
 * failure to write gives one warning; supervision never depends on the file.
 */
export class StatePublisher {
  private lastWrittenAt = -Infinity;
  private lastComparable = '';
  private trailing: NodeJS.Timeout | undefined;
  /** Files already warned about: one warning per file that cannot be written. */
  private readonly warned = new Set<string>();
  private writerRecorded = false;
  writes = 0;

  constructor(
    private readonly path: string | undefined,
    private readonly snapshot: () => Omit<RunState, 'updated_at'>,
    private readonly warn: (message: string) => void,
    private readonly minIntervalMs = 1000,
    /** Extra fields of the writer record (the containment in force, for `leash status`). */
    private readonly writerDetails?: Readonly<Record<string, string>>,
  ) {}

  publish(force = false): void {
    if (this.path === undefined) return;
    const state = this.snapshot();
    const comparable = JSON.stringify(state);
    if (!force && comparable === this.lastComparable) return;
    const now = Date.now();
    const wait = this.lastWrittenAt + this.minIntervalMs - now;
    if (!force && wait > 0) {
      this.trailing ??= setTimeout(() => {
        this.trailing = undefined;
        this.publish();
      }, wait);
      this.trailing.unref();
      return;
    }
    if (this.trailing) {
      clearTimeout(this.trailing);
      this.trailing = undefined;
    }
    this.lastComparable = comparable;
    this.lastWrittenAt = now;
    // Before the first document: a reader that finds the document finds its writer too. A record
    // that cannot be written (a directory planted at its name) never keeps the document from
    // being written (`leash status` then says "not recorded"); it is tried again at each write.
    let recordFailure: string | undefined;
    const record = writerRecordPath(this.path);
    if (!this.writerRecorded) {
      const identity = ownIdentity();
      recordFailure = identity === undefined ? undefined : failureOf(() => replaceFileAtomically(record, JSON.stringify({ ...identity, ...this.writerDetails }) + '\n'));
      this.writerRecorded = recordFailure === undefined;
    }
    const path = this.path;
    const documentFailure = failureOf(() => replaceFileAtomically(path, serializeState({ ...state, updated_at: new Date(now).toISOString() })));
    if (documentFailure === undefined) this.writes += 1;
    // One warning per file, naming the file that failed; when both fail (an unwritable
    // directory), the document's warning says it all.
    if (documentFailure !== undefined) this.warnOnce(path, `cannot write the state file ${path} (${documentFailure})`);
    else if (recordFailure !== undefined) this.warnOnce(record, `cannot write the writer record ${record} (${recordFailure}); \`leash status\` cannot tell whether this run is alive`);
  }

  private warnOnce(file: string, message: string): void {
    if (this.warned.has(file)) return;
    this.warned.add(file);
    this.warn(`${message}; supervision goes on without it`);
  }

  close(): void {
    if (this.trailing) clearTimeout(this.trailing);
    this.trailing = undefined;
  }
}
