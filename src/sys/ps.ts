// What leash asks ps(1) where there is no procfs (macOS, BSDs). Standard library only: the death
// supervisor imports this file. child_process is loaded on first use, never on Linux's path.
import { createRequire } from 'node:module';

/** The process group of `pid` as `ps -o pgid= -p PID` tells it; undefined when gone or unknowable. */
export function psProcessGroupOf(pid: number): number | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const { execFileSync } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
    const out = execFileSync('ps', ['-o', 'pgid=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2000,
    });
    const pgid = Number(out.trim());
    return Number.isInteger(pgid) && pgid > 0 ? pgid : undefined;
  } catch {
    return undefined;
  }
}
