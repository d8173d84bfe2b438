// The tests' own eyes where the code under test sees no /proc: the macOS-paths lane
// (scripts/test-macos-paths.sh) hides /proc and mounts the real procfs at LEASH_REAL_PROC, for
// the tests only. Everywhere else these read /proc through src/sys, as the code does.
import { readFileSync, readdirSync } from 'node:fs';
import { hasProcfs, isDeadState, parseProcStat, readCommandLine, readProcStat, type ProcStat } from '../../src/sys/procfs.js';

/** Where the tests read process facts from: /proc, the lane's relocated procfs, or nowhere. */
export function testProcRoot(): string | undefined {
  if (hasProcfs()) return '/proc';
  return process.env.LEASH_REAL_PROC || undefined;
}

/** Skip reason for a test that needs procfs facts the tests cannot get here. */
export function needsProcfsFacts(): string | false {
  return testProcRoot() === undefined && 'needs /proc, or the relocated procfs of the macOS-paths lane (LEASH_REAL_PROC)';
}

/** A process's stat, for assertions. */
export function testProcStat(pid: number): ProcStat | undefined {
  const root = testProcRoot();
  if (root === '/proc') return readProcStat(pid);
  if (root === undefined) return undefined;
  try {
    return parseProcStat(pid, readFileSync(`${root}/${pid}/stat`, 'latin1'));
  } catch {
    return undefined;
  }
}

/** A process's command line, for assertions. */
export function testCommandLine(pid: number): string[] | undefined {
  const root = testProcRoot();
  if (root === '/proc') return readCommandLine(pid);
  if (root === undefined) return undefined;
  try {
    const raw = readFileSync(`${root}/${pid}/cmdline`, 'utf8');
    return raw.length === 0 ? undefined : raw.replace(/\0$/, '').split('\0');
  } catch {
    return undefined;
  }
}

/** Live processes of the relocated procfs whose initial environment holds `entry` (lane only). */
export function relocatedEnvironCarriers(entry: string): number[] {
  const root = testProcRoot();
  if (root === undefined || root === '/proc') return [];
  const wanted = Buffer.from(entry + '\0', 'latin1');
  const found: number[] = [];
  for (const name of readdirSync(root)) {
    const pid = Number(name);
    if (!/^[0-9]+$/.test(name) || pid === process.pid) continue;
    let raw: Buffer;
    try {
      raw = readFileSync(`${root}/${pid}/environ`);
    } catch {
      continue;
    }
    let at = raw.indexOf(wanted);
    while (at > 0 && raw[at - 1] !== 0) at = raw.indexOf(wanted, at + 1);
    if (at < 0) continue;
    const stat = testProcStat(pid);
    if (stat && !isDeadState(stat.state)) found.push(pid);
  }
  return found;
}
