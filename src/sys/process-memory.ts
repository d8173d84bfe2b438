// Memory of one process as Linux accounts it, for benchmarks and diagnostics. Standard library
// only. RSS counts every resident page, shared ones in full; PSS splits shared pages among
// their users, so the PSS of a helper process is what it really adds to the machine.
import { readFileSync } from 'node:fs';

export interface ProcessMemory {
  rssKb: number;
  /** Proportional set size; undefined where smaps_rollup is missing (kernels before 4.14). */
  pssKb: number | undefined;
  /** Pages no other process maps (Private_Clean + Private_Dirty). */
  privateKb: number | undefined;
  /** Threads of the process. */
  threads: number | undefined;
}

function field(text: string, name: string): number | undefined {
  // Sizes are in kB; counts (Threads) have no unit.
  const match = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

/** Reads /proc/<pid>/status and smaps_rollup; undefined when the process is gone or unreadable. */
export function readProcessMemory(pid: number): ProcessMemory | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const rssKb = field(status, 'VmRSS');
  if (rssKb === undefined) return undefined;
  let rollup = '';
  try {
    rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    // Older kernels: RSS is all there is.
  }
  const privateClean = field(rollup, 'Private_Clean');
  const privateDirty = field(rollup, 'Private_Dirty');
  return {
    rssKb,
    pssKb: field(rollup, 'Pss'),
    privateKb: privateClean !== undefined && privateDirty !== undefined ? privateClean + privateDirty : undefined,
    threads: field(status, 'Threads'),
  };
}

/** Resident set size in kB from /proc/<pid>/status alone (cheap); undefined when gone. */
export function readResidentKb(pid: number): number | undefined {
  try {
    return field(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS');
  } catch {
    return undefined;
  }
}
