// Project configuration: `.leash-check.json` in the working directory (optional).
import { resolve } from 'node:path';
import { readRegularFile, SETTINGS_MAX_BYTES, whyUnread } from './regular-file.js';

export const CONFIG_FILE = '.leash-check.json';
export const DEFAULT_BASELINE_FILE = '.leash-check-baseline.json';

/** Raised for anything that stops a run from giving a trustworthy answer (exit 2). */
export class CheckError extends Error {}

/** A failure's reason in one line: the error's message, never its stack. */
export function describeFailure(error: unknown): string {
  if (error instanceof CheckError) return error.message.replace(/^cannot (?:read|check) [^:]*: /, '');
  if (error instanceof RangeError && /call stack/i.test(error.message)) return 'the analyser ran out of stack on this file (nested too deeply)';
  return `the analyser failed: ${error instanceof Error ? error.message : String(error)}`;
}

export interface CheckConfig {
  /** Globs of the files that implement the project's owned-spawn helper: never checked. */
  helpers: string[];
  /** More globs to skip, on top of the default skips. */
  skip: string[];
  /** Whether tests, fixtures, vendored and generated trees are skipped (default true). */
  defaultSkips: boolean;
  /** The baseline file, relative to the working directory. */
  baseline: string;
}

const KEYS = new Set(['helpers', 'skip', 'defaultSkips', 'baseline']);

export function loadConfig(cwd: string, file?: string): CheckConfig {
  const path = resolve(cwd, file ?? CONFIG_FILE); // an absolute FILE stays as given
  const config: CheckConfig = { helpers: [], skip: [], defaultSkips: true, baseline: DEFAULT_BASELINE_FILE };
  let text: string;
  try {
    // Read as source files are: a FIFO left in its place must not hang the run.
    const read = readRegularFile(path, { followSymlink: true, maxBytes: SETTINGS_MAX_BYTES });
    if (!('text' in read)) {
      if (read.problem === 'unopenable' && read.code === 'ENOENT' && file === undefined) return config;
      throw new CheckError(`cannot read ${path}: ${whyUnread(read, SETTINGS_MAX_BYTES)}`);
    }
    text = read.text;
  } catch (error) {
    if (error instanceof CheckError) throw error;
    throw new CheckError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new CheckError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new CheckError(`${path}: expected a JSON object`);
  const record = raw as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!KEYS.has(key)) throw new CheckError(`${path}: unknown key "${key}" (known: ${[...KEYS].join(', ')})`);
  }
  const globs = (key: 'helpers' | 'skip') => {
    const value = record[key];
    if (value === undefined) return [];
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new CheckError(`${path}: "${key}" must be an array of strings`);
    return value as string[];
  };
  config.helpers = globs('helpers');
  config.skip = globs('skip');
  if (record.defaultSkips !== undefined) {
    if (typeof record.defaultSkips !== 'boolean') throw new CheckError(`${path}: "defaultSkips" must be true or false`);
    config.defaultSkips = record.defaultSkips;
  }
  if (record.baseline !== undefined) {
    if (typeof record.baseline !== 'string') throw new CheckError(`${path}: "baseline" must be a file name`);
    config.baseline = record.baseline;
  }
  return config;
}
