// One rule for both grace settings, LEASH_GRACE_MS (the owner library's supervisor) and
// LEASH_GRACE_SECONDS (`leash run`): empty or unset means the default; a value that is not a plain
// number, or is out of range, is ignored with one warning naming the range, and the default is used.
// An inherited environment variable should never stop a program from running.
import { DEFAULT_GRACE_MS } from '../supervisor/protocol.js';

export interface GraceSetting {
  /** The environment variable. */
  name: string;
  unit: 'ms' | 's';
  min: number;
  max: number;
  fallback: number;
}

export const LIBRARY_GRACE: GraceSetting = { name: 'LEASH_GRACE_MS', unit: 'ms', min: 0, max: 600_000, fallback: DEFAULT_GRACE_MS };
export const RUN_GRACE: GraceSetting = { name: 'LEASH_GRACE_SECONDS', unit: 's', min: 0.05, max: 30, fallback: 10 };

/** Milliseconds are whole numbers; seconds may have a fraction. */
const PLAIN = { ms: /^[0-9]+$/, s: /^([0-9]+(\.[0-9]*)?|\.[0-9]+)$/ };

/** The value of `text` in the setting's unit, or undefined when it is not a plain number within range. */
export function parseGrace(text: string, setting: GraceSetting): number | undefined {
  const trimmed = text.trim();
  if (!PLAIN[setting.unit].test(trimmed)) return undefined;
  const value = Number(trimmed);
  return value >= setting.min && value <= setting.max ? value : undefined;
}

export function describeRange(setting: GraceSetting): string {
  return `${setting.unit === 'ms' ? 'whole milliseconds' : 'seconds'} from ${setting.min} to ${setting.max}`;
}

/** The setting from the environment, by the rule above; `warn` gets the one line on a rejected value. */
export function graceFromEnvironment(env: NodeJS.ProcessEnv, setting: GraceSetting, warn: (message: string) => void): number {
  const raw = env[setting.name];
  if (raw === undefined || raw.trim() === '') return setting.fallback;
  const value = parseGrace(raw, setting);
  if (value !== undefined) return value;
  warn(`ignoring ${setting.name}='${raw}': expected ${describeRange(setting)}; using ${setting.fallback}`);
  return setting.fallback;
}
