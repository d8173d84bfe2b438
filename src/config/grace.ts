// One syntax for every grace: `leash run --grace`, LEASH_GRACE_SECONDS, LEASH_GRACE_MS (the owner
// library's supervisor) and `leash reap --grace`. A time is a decimal number with an optional unit,
// `ms`, `s` or `m` (`5`, `5s`, `500ms`, `1.5s`, `2m`); a bare number is in the setting's own unit,
// the one its name says (seconds for --grace and LEASH_GRACE_SECONDS, milliseconds for
// LEASH_GRACE_MS). Below a millisecond nothing is kept: the value must come to whole milliseconds.
// From the environment: empty or unset means the default; a value that does not parse, or is out
// of range, is ignored with one warning naming the range, and the default is used. An inherited
// environment variable should never stop a program from running.
import { DEFAULT_GRACE_MS } from '../supervisor/protocol.js';

export interface GraceSetting {
  /** The environment variable (or the flag, for a setting that has no variable). */
  name: string;
  /** The unit of a bare number, and of min, max and fallback. */
  unit: 'ms' | 's';
  min: number;
  max: number;
  fallback: number;
}

export const LIBRARY_GRACE: GraceSetting = { name: 'LEASH_GRACE_MS', unit: 'ms', min: 0, max: 600_000, fallback: DEFAULT_GRACE_MS };
/** Up to 10 minutes: some servers take minutes to shut down (flushing, checkpointing). */
export const RUN_GRACE: GraceSetting = { name: 'LEASH_GRACE_SECONDS', unit: 's', min: 0.05, max: 600, fallback: 10 };
export const REAP_GRACE: GraceSetting = { name: '--grace', unit: 's', min: 0, max: 600, fallback: 5 };

const TIME = /^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ms|s|m)?$/;
const MS_PER = { ms: 1, s: 1000, m: 60_000 } as const;

/** Milliseconds from a time in the syntax above (a bare number in `bareUnit`), or undefined. */
export function parseTimeMs(text: string, bareUnit: 'ms' | 's'): number | undefined {
  const match = TIME.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * MS_PER[(match[2] as keyof typeof MS_PER | undefined) ?? bareUnit];
  // 0.1 s is 100.00000000000001 ms in floating point: compare with a tolerance, then round.
  const whole = Math.round(ms);
  return Number.isFinite(ms) && Math.abs(ms - whole) < 1e-6 ? whole : undefined;
}

/** The value of `text` in the setting's unit, or undefined when it does not parse or is out of range. */
export function parseGrace(text: string, setting: GraceSetting): number | undefined {
  const ms = parseTimeMs(text, setting.unit);
  if (ms === undefined) return undefined;
  const value = setting.unit === 'ms' ? ms : ms / 1000;
  return value >= setting.min && value <= setting.max ? value : undefined;
}

/** A time the way a person would write it: 50ms, 10s, 10m. */
export function formatTime(value: number, unit: 'ms' | 's'): string {
  const ms = unit === 'ms' ? value : Math.round(value * 1000);
  if (ms !== 0 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms !== 0 && ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

export function describeRange(setting: GraceSetting): string {
  return `a time such as 5s, 500ms or 1.5s, a bare number being ${setting.unit === 's' ? 'seconds' : 'milliseconds'}, ` +
    `from ${formatTime(setting.min, setting.unit)} to ${formatTime(setting.max, setting.unit)}`;
}

/** The setting from the environment, by the rule above; `warn` gets the one line on a rejected value. */
export function graceFromEnvironment(env: NodeJS.ProcessEnv, setting: GraceSetting, warn: (message: string) => void): number {
  const raw = env[setting.name];
  if (raw === undefined || raw.trim() === '') return setting.fallback;
  const value = parseGrace(raw, setting);
  if (value !== undefined) return value;
  warn(`ignoring ${setting.name}='${raw}': expected ${describeRange(setting)}; using ${formatTime(setting.fallback, setting.unit)}`);
  return setting.fallback;
}
