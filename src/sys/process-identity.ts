// Who a process is, in a form another process can check later: pid, start time, the boot it
// started in, and the pid namespace its pid means something in. A pid alone is recycled; with
// the start time and the boot it names one process for good. Linux; standard library only.
import { readFileSync, readlinkSync } from 'node:fs';
import { isDeadState, readProcStat } from './procfs.js';

export interface ProcessIdentity {
  pid: number;
  start_time: number;
  boot_id: string;
  pid_namespace: string;
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
  } catch {
    return undefined;
  }
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/** This process's identity, or undefined where procfs cannot give it. */
export function ownIdentity(): ProcessIdentity | undefined {
  const stat = readProcStat('self');
  const boot = bootId();
  const namespace = pidNamespace();
  if (!stat || boot === undefined || namespace === undefined) return undefined;
  return { pid: stat.pid, start_time: stat.startTime, boot_id: boot, pid_namespace: namespace };
}

/** Parses a recorded identity; undefined when the value is not one. */
export function parseIdentity(value: unknown): ProcessIdentity | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (!Number.isInteger(record.pid) || !Number.isInteger(record.start_time)) return undefined;
  if (typeof record.boot_id !== 'string' || typeof record.pid_namespace !== 'string') return undefined;
  return record as unknown as ProcessIdentity;
}

/**
 * Whether the recorded process still runs code: 'running', 'gone' (exited, a zombie, its pid
 * recycled, or the machine rebooted since), or 'unknown' (seen from another pid namespace, or no
 * procfs here).
 */
export function identityState(identity: ProcessIdentity): 'running' | 'gone' | 'unknown' {
  const boot = bootId();
  if (boot === undefined) return 'unknown';
  if (boot !== identity.boot_id) return 'gone';
  if (pidNamespace() !== identity.pid_namespace) return 'unknown';
  const stat = readProcStat(identity.pid);
  if (!stat || isDeadState(stat.state) || stat.startTime !== identity.start_time) return 'gone';
  return 'running';
}
