// Burn-down baseline: per file and rule, how many unmarked findings are tolerated for now.
import { readRegularFile, SETTINGS_MAX_BYTES, whyUnread } from './regular-file.js';
import { CheckError } from './config.js';
import type { Finding } from './types.js';

export type BaselineCounts = Record<string, Record<string, number>>;

/**
 * The findings a baseline can hold: failing ones with no marker. Never a parse error: a file that
 * cannot be parsed can hide any number of new detached spawns, so it always fails the run.
 */
function countable(finding: Finding): boolean {
  return finding.severity === 'error' && finding.suppressed === undefined && finding.rule !== 'parse-error';
}

export function countFindings(findings: Finding[]): BaselineCounts {
  const counts: BaselineCounts = {};
  for (const f of findings.filter(countable)) {
    const rules = (counts[f.path] ??= {});
    rules[f.rule] = (rules[f.rule] ?? 0) + 1;
  }
  const sorted: BaselineCounts = {};
  for (const path of Object.keys(counts).sort()) sorted[path] = counts[path] as Record<string, number>;
  return sorted;
}

export function formatBaseline(findings: Finding[]): string {
  return `${JSON.stringify({ version: 1, files: countFindings(findings) }, null, 2)}\n`;
}

export function readBaseline(path: string, required: boolean): BaselineCounts {
  let raw: unknown;
  try {
    // Read as source files are: a FIFO left in its place must not hang the run.
    const read = readRegularFile(path, { followSymlink: true, maxBytes: SETTINGS_MAX_BYTES });
    if (!('text' in read)) {
      if (read.problem === 'unopenable' && read.code === 'ENOENT') {
        if (required) throw new CheckError(`baseline ${path} does not exist`);
        return {};
      }
      throw new CheckError(`cannot read baseline ${path}: ${whyUnread(read, SETTINGS_MAX_BYTES)}`);
    }
    raw = JSON.parse(read.text);
  } catch (error) {
    if (error instanceof CheckError) throw error;
    throw new CheckError(`cannot read baseline ${path}: ${(error as Error).message}`);
  }
  const files = (raw as { files?: unknown } | null)?.files;
  if (typeof files !== 'object' || files === null) throw new CheckError(`baseline ${path}: expected {"version": 1, "files": {...}}`);
  for (const [file, rules] of Object.entries(files)) {
    for (const count of Object.values(rules as object)) {
      if (!Number.isInteger(count) || (count as number) < 0) throw new CheckError(`baseline ${path}: counts for ${file} must be whole numbers`);
    }
  }
  return files as BaselineCounts;
}

/**
 * Marks the findings the baseline tolerates (in place) and returns advisories: entries that are
 * now too high, for files that were checked or no longer exist.
 */
export function applyBaseline(findings: Finding[], baseline: BaselineCounts, checkedPaths: Set<string>, exists: (path: string) => boolean): string[] {
  const groups = new Map<string, Finding[]>();
  for (const f of findings.filter(countable)) {
    const key = `${f.path}\0${f.rule}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  for (const [key, group] of groups) {
    const [path, rule] = key.split('\0') as [string, string];
    const allowed = baseline[path]?.[rule];
    if (allowed !== undefined && group.length <= allowed) for (const f of group) f.suppressed = { kind: 'baseline' };
  }
  const advisories: string[] = [];
  for (const [path, rules] of Object.entries(baseline)) {
    if (!checkedPaths.has(path)) {
      if (!exists(path)) advisories.push(`${path}: in the baseline but the file is gone`);
      continue;
    }
    for (const [rule, allowed] of Object.entries(rules)) {
      if (rule === 'parse-error') {
        advisories.push(`${path}: the baseline lists parse-error, which a baseline cannot tolerate; the entry is ignored`);
        continue;
      }
      const now = groups.get(`${path}\0${rule}`)?.length ?? 0;
      if (now < allowed) advisories.push(`${path}: ${now} ${rule} finding(s) left, the baseline allows ${allowed}`);
    }
  }
  return advisories;
}
