// What `leash run` ended, by name: each process it signalled to take the tree down, with its
// command line, written on stderr and beside the state document (`.<name>.ended`, read by
// `leash status`), so a leftover is a name, not only a count. The document keeps its ten keys.
import { rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readRegularFileBounded } from '../sys/bounded-read.js';
import { readCommandLine, type ProcStat } from '../sys/procfs.js';
import { replaceFileAtomically } from './state.js';

export interface EndedProcess {
  pid: number;
  command: string;
  /** The signal leash sent it: the stop signal, or SIGKILL once the grace was over. */
  signal: string;
}

/** The record keeps this many; the count of the others is kept as `more`. */
export const RECORD_LIMIT = 100;
/** stderr names this many per line. */
export const LINE_LIMIT = 8;
const COMMAND_CHARS = 80;
const RECORD_LIMIT_BYTES = 64 * 1024;

/** A process's command line for a person: printable, one line, cut short; undefined once it is gone (a zombie has none). */
export function commandOf(pid: number): string | undefined {
  const words = readCommandLine(pid);
  if (!words) return undefined;
  const text = words.join(' ').replace(/[\u0000-\u001f\u007f]/g, '?');
  return text.length > COMMAND_CHARS ? `${text.slice(0, COMMAND_CHARS - 1)}…` : text;
}

/** "1234 (sleep 60), 1240 (sh -c …) and 3 more", of `total` processes. */
export function nameProcesses(list: readonly EndedProcess[], total = list.length, limit = LINE_LIMIT): string {
  const shown = list.slice(0, limit);
  const named = shown.map((entry) => `${entry.pid} (${entry.command})`).join(', ');
  return total > shown.length ? `${named} and ${total - shown.length} more` : named;
}

export function endedRecordPath(statePath: string): string {
  return join(dirname(statePath), `.${basename(statePath)}.ended`);
}

/** Removes the record an earlier run left beside the document at `statePath` (none is fine; a failure only leaves it). */
export function forgetEndedRecord(statePath: string): void {
  try {
    rmSync(endedRecordPath(statePath), { force: true });
  } catch {
    // A directory in its place, no permission: leash status may show an old record, nothing worse.
  }
}

export interface EndedRecordContent {
  ended: EndedProcess[];
  more: number;
}

/**
 * Command lines of a tree's processes, read once per process as walks first see it: by the time
 * a stop names them, most have died (a zombie has no command line), and reading 200 of them
 * before the signal would delay the stop.
 */
export class CommandCache {
  /** By pid:start; `confirmed` once read again after the walk that first saw it (a fork execs soon after). */
  private readonly known = new Map<string, { pid: number; command: string; confirmed: boolean }>();

  /** Reads the newcomers of `stats` (and, once more, last walk's), and forgets the processes no longer in it. */
  update(stats: Iterable<ProcStat>): void {
    const seen = new Set<string>();
    for (const stat of stats) {
      const id = `${stat.pid}:${stat.startTime}`;
      seen.add(id);
      const entry = this.known.get(id);
      if (entry?.confirmed) continue;
      const command = commandOf(stat.pid);
      if (command !== undefined) this.known.set(id, { pid: stat.pid, command, confirmed: entry !== undefined });
    }
    for (const id of this.known.keys()) if (!seen.has(id)) this.known.delete(id);
  }

  /** Reads again the processes seen by one walk only (they may have exec'd since): before a stop's signal. */
  confirmYoung(): void {
    for (const entry of this.known.values()) {
      if (entry.confirmed) continue;
      const command = commandOf(entry.pid);
      if (command !== undefined) entry.command = command;
      entry.confirmed = true;
    }
  }

  /** The command line now if the process still has one, else as last read. */
  commandFor(stat: ProcStat): string {
    return commandOf(stat.pid) ?? this.known.get(`${stat.pid}:${stat.startTime}`)?.command ?? '?';
  }
}

/** Collects what a run ended; writes the record beside the state document, if there is one. */
export class EndedRecord {
  private readonly content: EndedRecordContent = { ended: [], more: 0 };

  constructor(private readonly statePath: string | undefined, private readonly warn: (message: string) => void) {}

  /**
   * Names the processes of `stats` as sent `signal`: the first RECORD_LIMIT, and how many in all;
   * `unlisted` more were sent it too, counted but not named (contained, none of them was read).
   */
  add<T extends { pid: number }>(stats: Iterable<T>, signal: string, commandFor: (stat: T) => string, unlisted = 0): { named: EndedProcess[]; total: number } {
    const added: EndedProcess[] = [];
    let skipped = unlisted;
    for (const stat of stats) {
      if (added.length >= RECORD_LIMIT) {
        skipped += 1;
        continue;
      }
      added.push({ pid: stat.pid, command: commandFor(stat), signal });
    }
    const room = Math.max(0, RECORD_LIMIT - this.content.ended.length);
    this.content.ended.push(...added.slice(0, room));
    this.content.more += added.length - Math.min(room, added.length) + skipped;
    if (this.statePath !== undefined && added.length + skipped > 0) {
      try {
        replaceFileAtomically(endedRecordPath(this.statePath), JSON.stringify(this.content) + '\n');
      } catch (error) {
        this.warn(`cannot write ${endedRecordPath(this.statePath)} (${(error as Error).message})`);
      }
    }
    return { named: added, total: added.length + skipped };
  }
}

/** The record beside the document at `file`, or undefined (none, unreadable, malformed). */
export function readEndedRecord(file: string): EndedRecordContent | undefined {
  const read = readRegularFileBounded(endedRecordPath(file), RECORD_LIMIT_BYTES, { noFollow: true });
  if (!read.ok) return undefined;
  try {
    const value = JSON.parse(read.text) as EndedRecordContent;
    if (!Array.isArray(value.ended) || typeof value.more !== 'number') return undefined;
    const ended = value.ended.filter((entry) =>
      Number.isInteger(entry?.pid) && typeof entry.command === 'string' && typeof entry.signal === 'string');
    return { ended, more: value.more };
  } catch {
    return undefined;
  }
}
