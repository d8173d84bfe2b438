// The record of what `leash mcp install` replaced, one per config file, in the file owner's leash
// folder: for each server, its command and args as written before the first wrap; for the file,
// the chain of writes (before and after digests, backup). `--undo` reads it: a file nobody touched
// since the last write gets its first backup back byte for byte; otherwise each server whose wrap
// is still as written gets its original text back in the file as it is now (client edits kept).
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { type Owner, readPrivate, writePrivate } from './state.js';

export interface ServerRecord {
  /** The command and args as they were written in the file (values and raw text); null: no args key. */
  original: { command: { value: string; raw: string }; args: { value: string; raw: string }[] | null };
  /** The values the wrap wrote: undo trusts the record only while the server still reads so. */
  wrapped: { command: string; args: string[] };
  /** The text install added around the args list of a server that had none (removed again by undo). */
  addedArgs?: { head: string; tail: string };
}

export interface Write {
  before: string;
  after: string;
  backup: string;
}

export interface ConfigRecord {
  path: string;
  servers: Record<string, ServerRecord>;
  writes: Write[];
}

export function digest(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function recordRel(realPath: string): string {
  return join('mcp', 'records', `${digest(realPath).slice(0, 32)}.json`);
}

export function readRecord(owner: Owner, realPath: string): ConfigRecord {
  const bytes = readPrivate(owner, recordRel(realPath));
  if (bytes) {
    try {
      const record = JSON.parse(bytes.toString('utf8')) as ConfigRecord;
      if (record.path === realPath && typeof record.servers === 'object' && Array.isArray(record.writes)) return record;
    } catch {
      // unreadable: start a new one (undo then falls back to taking the wrap apart)
    }
  }
  return { path: realPath, servers: {}, writes: [] };
}

export function writeRecord(owner: Owner, record: ConfigRecord): void {
  writePrivate(owner, [{ rel: recordRel(record.path), content: Buffer.from(`${JSON.stringify(record, null, 2)}\n`).toString('base64'), mode: 0o600, exclusive: false }]);
}

/**
 * The backup to restore whole: the first of the last unbroken chain of leash's writes that ends in
 * the file as it is now, or undefined when someone else wrote the file since.
 */
export function untouchedSince(record: ConfigRecord, now: string): Write | undefined {
  let index = record.writes.length - 1;
  if (index < 0 || record.writes[index]!.after !== now) return undefined;
  while (index > 0 && record.writes[index - 1]!.after === record.writes[index]!.before) index--;
  return record.writes[index];
}
