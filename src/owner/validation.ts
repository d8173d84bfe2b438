// What the owner library accepts as a process group and as a grace period: one rule for every
// exported function, so that each input gets the same, documented answer everywhere.
import { DEFAULT_GRACE_MS } from '../supervisor/protocol.js';

/** The longest grace accepted (the supervisor's own limit): 10 minutes. */
export const MAX_GRACE_MS = 600_000;

/** A process-group number: a safe integer (whether it may be guarded is decided later). */
export function isGroupNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

/** The group a terminateOwned target names: a group number, or a ChildProcess's pid; else undefined. */
export function groupNumberOf(target: unknown): number | undefined {
  if (isGroupNumber(target)) return target;
  if (typeof target === 'object' && target !== null && 'pid' in target) {
    const pid = (target as { pid?: unknown }).pid;
    if (isGroupNumber(pid)) return pid;
  }
  return undefined;
}

/** A grace in ms: NaN or a non-number means `fallback`; the rest is clamped to 0..MAX_GRACE_MS. */
export function clampedGrace(raw: unknown, fallback: number): number {
  if (typeof raw !== 'number' || Number.isNaN(raw)) return fallback;
  return Math.min(MAX_GRACE_MS, Math.max(0, raw));
}

/** The grace of terminateOwned's options (`graceMs`), by clampedGrace's rule. */
export function graceFrom(options: unknown): number {
  const raw = typeof options === 'object' && options !== null ? (options as { graceMs?: unknown }).graceMs : undefined;
  return clampedGrace(raw, DEFAULT_GRACE_MS);
}
