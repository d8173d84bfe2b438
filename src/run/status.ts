// `leash status [FILE] [--json]`: reads the state document `leash run` keeps.
import { readDescriptorBounded, readRegularFileBounded } from '../sys/bounded-read.js';
import { signalName } from '../sys/verified-signal.js';
import { identityState, parseIdentity } from '../sys/process-identity.js';
import { guardStandardOutput, writeData, writeDiagnostic } from '../sys/safe-output.js';
import { PHASES, STATE_FIELDS, serializeState, writerRecordPath, type RunState } from './state.js';
import { readEndedRecord, type EndedRecordContent } from './ended.js';

export const STATUS_USAGE = 'usage: leash status [--json] [--] [FILE]   (FILE defaults to $LEASH_STATE_PATH)';

/** Exit codes of `leash status` (sysexits). */
export const StatusExit = { ok: 0, usage: 64, invalid: 65, unreadable: 66, writerGone: 69 } as const;

/** What became of the `leash run` that wrote a document. */
export type WriterState =
  /** `containment`: the one line `leash run` said on stderr about its containment, when recorded. */
  | { state: 'running' | 'gone' | 'unknown'; pid: number; containment?: string; containers?: string }
  /** No writer record next to the document (read from stdin, or written by an older leash). */
  | { state: 'unrecorded' };

/** A state document is about 300 bytes; its writer record about 150. Anything far larger is not one. */
export const DOCUMENT_LIMIT_BYTES = 64 * 1024;
const WRITER_RECORD_LIMIT_BYTES = 4096;

/** Looks up the writer record beside the document at `file` and checks it against /proc. */
export function writerOf(file: string): WriterState {
  // Never through a link, never waiting on a FIFO planted there, never more than a bound: a
  // small regular file or nothing.
  const read = readRegularFileBounded(writerRecordPath(file), WRITER_RECORD_LIMIT_BYTES, { noFollow: true });
  if (!read.ok) return { state: 'unrecorded' };
  let identity;
  try {
    identity = parseIdentity(JSON.parse(read.text));
  } catch {
    return { state: 'unrecorded' };
  }
  if (!identity) return { state: 'unrecorded' };
  const containment = (identity as { containment?: unknown }).containment;
  const containers = (identity as { containers?: unknown }).containers;
  return {
    state: identityState(identity),
    pid: identity.pid,
    // Shown to a person: no control characters from a file anyone in the directory could write.
    ...(typeof containment === 'string' ? { containment: containment.replace(/[\x00-\x1f\x7f]/g, '?') } : {}),
    ...(typeof containers === 'string' ? { containers: containers.replace(/[\x00-\x1f\x7f]/g, '?') } : {}),
  };
}

function describeWriter(state: RunState, writer: WriterState): string {
  if (writer.state === 'unrecorded') return 'not recorded';
  if (writer.state === 'running') return `leash run pid ${writer.pid}, running`;
  if (writer.state === 'unknown') return `leash run pid ${writer.pid}, not visible from here (another pid namespace)`;
  return state.phase === 'exited'
    ? `leash run pid ${writer.pid}, finished`
    : `leash run pid ${writer.pid} is gone: it died without finishing, this document is stale`;
}

const COUNT_FIELDS = ['active_children', 'adopted_children', 'orphaned_children_total', 'reaped_children_total', 'reaped_orphans_total'] as const;
/** The form leash run writes updated_at in (Date.toISOString). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** Checks that a parsed value is a state document, each of the ten keys; a string says what is wrong. */
export function validateState(value: unknown): RunState | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const record = value as Record<string, unknown>;
  for (const field of STATE_FIELDS) if (!(field in record)) return `missing field '${field}'`;
  for (const field of COUNT_FIELDS) {
    const count = record[field];
    if (!Number.isSafeInteger(count) || (count as number) < 0) return `'${field}' is not a count (a whole number, 0 or more)`;
  }
  if (typeof record.escalated !== 'boolean') return `'escalated' is not true or false`;
  if (!PHASES.includes(record.phase as never)) return `unknown phase '${String(record.phase)}'`;
  const exit = record.runner_exit_code;
  if (exit !== null && !(Number.isInteger(exit) && (exit as number) >= 0 && (exit as number) <= 255)) {
    return `'runner_exit_code' is neither null nor an exit status (0-255)`;
  }
  const signal = record.termination_signal;
  if (signal !== null && !(Number.isInteger(signal) && (signal as number) >= 1 && (signal as number) <= 64)) {
    return `'termination_signal' is neither null nor a signal number (1-64)`;
  }
  const at = record.updated_at;
  if (typeof at !== 'string' || !ISO_TIME.test(at) || Number.isNaN(Date.parse(at))) return `'updated_at' is not an ISO-8601 UTC time`;
  return record as unknown as RunState;
}

/** The document for a person. */
/** Rows of the processes a run ended (pid, command, the signal sent), at most this many. */
const ENDED_ROWS = 20;

export function describeState(state: RunState, now = Date.now(), writer?: WriterState, ended?: EndedRecordContent): string {
  const age = Math.max(0, Math.round((now - Date.parse(state.updated_at)) / 1000));
  const signal = state.termination_signal === null
    ? 'none'
    : `${signalName(state.termination_signal) ?? 'signal'} (${state.termination_signal})`;
  const runner = state.runner_exit_code === null
    ? 'running'
    : state.runner_exit_code > 128 && signalName(state.runner_exit_code - 128) !== undefined
      ? `exited with status ${state.runner_exit_code} (killed by ${signalName(state.runner_exit_code - 128)})`
      : `exited with status ${state.runner_exit_code}`;
  const rows: Array<[string, string]> = [
    ['phase', state.phase],
    ['runner', runner],
    ['processes', `${state.active_children} live in the tree, ${state.adopted_children} of them adopted orphans`],
    ['orphans', `${state.orphaned_children_total} adopted in all, ${state.reaped_orphans_total} reaped`],
    ['reaped', `${state.reaped_children_total} in all (runner included)`],
    ['stop signal', signal],
    ['escalated', state.escalated ? 'yes: SIGKILL after the grace' : 'no'],
    ['updated', `${state.updated_at} (${age} s ago)`],
  ];
  if (writer) rows.push(['writer', describeWriter(state, writer)]);
  if (writer && writer.state !== 'unrecorded' && writer.containment !== undefined) rows.push(['containment', writer.containment]);
  if (writer && writer.state !== 'unrecorded' && writer.containers !== undefined) rows.push(['containers', writer.containers.replace(/^containers: /, '')]);
  if (ended) {
    const shown = ended.ended.slice(0, ENDED_ROWS);
    for (const [index, entry] of shown.entries()) rows.push([index === 0 ? 'ended' : '', `${entry.pid} ${entry.command} (${entry.signal})`]);
    const more = ended.ended.length - shown.length + ended.more;
    if (more > 0) rows.push([shown.length === 0 ? 'ended' : '', `and ${more} more`]);
  }
  return rows.map(([label, value]) => `${label.padEnd(12)} ${value}`).join('\n') + '\n';
}

export async function statusMain(argv: string[]): Promise<number> {
  // `leash status | head -1` and the like: a reader that leaves early is not an error. Output goes
  // through writeData/writeDiagnostic; the guard covers anything Node itself prints.
  guardStandardOutput();
  let json = false;
  let file: string | undefined;
  let operands = false;
  for (const arg of argv) {
    if (!operands && arg === '--') operands = true; // what follows is FILE, even if it starts with '-'
    else if (!operands && arg === '--json') json = true;
    else if (!operands && arg.startsWith('-') && arg !== '-') {
      writeDiagnostic(`leash status: unknown option '${arg}'\n${STATUS_USAGE}\n`);
      return StatusExit.usage;
    } else if (file === undefined) file = arg;
    else {
      writeDiagnostic(`leash status: one FILE at most\n${STATUS_USAGE}\n`);
      return StatusExit.usage;
    }
  }
  file ??= process.env.LEASH_STATE_PATH || undefined;
  if (file === undefined) {
    writeDiagnostic(`leash status: no FILE given and LEASH_STATE_PATH is not set\n${STATUS_USAGE}\n`);
    return StatusExit.usage;
  }
  // At most a bound, from a regular file only: /dev/zero or a FIFO as FILE is refused, not read.
  const read = file === '-' ? readDescriptorBounded(0, DOCUMENT_LIMIT_BYTES) : readRegularFileBounded(file, DOCUMENT_LIMIT_BYTES);
  if (!read.ok && read.problem === 'too-large') {
    writeDiagnostic(`leash status: ${file} is not a leash run state document: ${read.message}\n`);
    return StatusExit.invalid;
  }
  if (!read.ok) {
    writeDiagnostic(`leash status: cannot read ${file}: ${read.message}\n`);
    return StatusExit.unreadable;
  }
  const text = read.text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    writeDiagnostic(`leash status: ${file} is not JSON\n`);
    return StatusExit.invalid;
  }
  const state = validateState(parsed);
  if (typeof state === 'string') {
    writeDiagnostic(`leash status: ${file} is a malformed state document: ${state}\n`);
    return StatusExit.invalid;
  }
  const writer: WriterState = file === '-' ? { state: 'unrecorded' } : writerOf(file);
  const stale = writer.state === 'gone' && state.phase !== 'exited';
  const ended = file === '-' ? undefined : readEndedRecord(file);
  writeData(json ? serializeState(state) : describeState(state, Date.now(), writer, ended));
  if (stale && json) {
    writeDiagnostic(`leash status: the leash run that wrote ${file} (pid ${writer.pid}) is gone; the document is stale\n`);
  }
  return stale ? StatusExit.writerGone : StatusExit.ok;
}
