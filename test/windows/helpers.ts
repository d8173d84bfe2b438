// Plumbing for the Windows tests, which run in the Windows node.exe under Wine. Every Windows
// process under Wine is also a Linux process whose /proc cmdline is its Windows command line, so
// the tests count a tree from Linux (Z:\proc) by the mark each process carries, and kill the
// owner from Linux (kill -9 on its Linux pid) through a Linux shell Wine can start.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { waitUntil } from '../../src/sys/wait.js';

export const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/windows/', import.meta.url));
const LIBRARY = pathToFileURL(fileURLToPath(new URL('../../src/index.js', import.meta.url))).href;
const JOBS = pathToFileURL(fileURLToPath(new URL('../../src/sys/windows-jobs.js', import.meta.url))).href;
/** A link to /bin/sh named .exe, made by scripts/test-windows.sh: Wine runs it as a Unix program. */
const LINUX_SH = process.env.LEASH_WINDOWS_LINUX_SH;
const PROC = 'Z:\\proc';

export function newMark(): string {
  return `leashwin${randomBytes(6).toString('hex')}`;
}

/** Linux pids of live (non-zombie) processes whose command line contains `text`. */
export function linuxPidsWith(text: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync(PROC)) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`${PROC}\\${name}\\cmdline`, 'latin1');
      if (!cmdline.includes(text)) continue;
      const stat = readFileSync(`${PROC}\\${name}\\stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** Runs a Linux shell command and waits (with a deadline) until `done()` holds. */
export async function linuxShell(script: string, done: () => boolean, budgetMs = 10_000): Promise<boolean> {
  if (!LINUX_SH) throw new Error('LEASH_WINDOWS_LINUX_SH is not set (run through scripts/test-windows.sh)');
  try {
    // Wine starts the Unix program but hands libuv no process handle, so spawn reports EBADF
    // after the fact: the command runs all the same, and done() tells when it did.
    // detached-spawn: ok — a Linux `kill` started from the Windows test; it exits at once.
    spawn(LINUX_SH, ['-c', script], { detached: true, stdio: 'ignore' }).on('error', () => {});
  } catch {
    // EBADF, as above.
  }
  return waitUntil(done, budgetMs);
}

/** kill -9 from Linux on these Linux pids; resolves once none of them runs. */
export function killFromLinux(pids: readonly number[]): Promise<boolean> {
  if (pids.length === 0) return Promise.resolve(true);
  const alive = () => pids.some((pid) => isLinuxPidAlive(pid));
  return linuxShell(`kill -9 ${pids.join(' ')}`, () => !alive());
}

function isLinuxPidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`${PROC}\\${pid}\\stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Ends every process carrying the mark (this test's own), from Linux. */
export async function killMarked(mark: string): Promise<void> {
  for (let round = 0; round < 3; round += 1) {
    const pids = linuxPidsWith(mark);
    if (pids.length === 0) return;
    await killFromLinux(pids);
  }
}

export interface OwnerRun {
  owner: ChildProcess;
  mark: string;
  go: string;
  output: () => string;
}

/** Starts the owner fixture (see test/fixtures/windows/owner.mjs). */
export function startOwner(kinds: string, way: string, mode: 'leash' | 'plain', extraEnv: NodeJS.ProcessEnv = {}): OwnerRun {
  const mark = newMark();
  const go = `${process.env.TEMP ?? 'C:\\windows\\temp'}\\${mark}.go`;
  const owner = spawn(process.execPath, [`${FIXTURES}owner.mjs`, kinds, way, mark, mode], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...extraEnv, LEASH_LIBRARY: LIBRARY, LEASH_WINDOWS_JOBS: JOBS, LEASH_WINDOWS_GO: go },
  });
  let text = '';
  owner.stdout?.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  owner.stderr?.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  return { owner, mark, go, output: () => text };
}

/** Waits until `count` processes carry the children's mark. */
export function waitForChildren(run: OwnerRun, count: number, budgetMs = 90_000): Promise<boolean> {
  return waitUntil(() => linuxPidsWith(`${run.mark}-child`).length >= count, budgetMs);
}

export function childPids(run: OwnerRun): number[] {
  return linuxPidsWith(`${run.mark}-child`);
}

/** The owner's own Linux pid: the process carrying the bare mark (its children carry `<mark>-...`). */
export function ownerLinuxPid(run: { mark: string }): number | undefined {
  return linuxPidsWith(run.mark).find((pid) => {
    try {
      const cmdline = readFileSync(`${PROC}\\${pid}\\cmdline`, 'latin1');
      return new RegExp(`${run.mark}(\\s|\\0|$)`).test(cmdline) && !cmdline.includes('wine64');
    } catch {
      return false;
    }
  });
}

/** Starts the owner-api fixture; `next()` waits for its next JSON line. */
export function startScenario(scenario: string): { owner: ChildProcess; mark: string; next: () => Promise<Record<string, unknown>> } {
  const mark = newMark();
  const owner = spawn(process.execPath, [`${FIXTURES}owner-api.mjs`, scenario, mark], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, LEASH_LIBRARY: LIBRARY, LEASH_WINDOWS_JOBS: JOBS },
  });
  const lines: string[] = [];
  let buffered = '';
  let stderr = '';
  owner.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts.filter((line) => line.trim() !== ''));
  });
  owner.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let taken = 0;
  const next = async () => {
    if (!(await waitUntil(() => lines.length > taken || owner.exitCode !== null, 90_000)) || lines.length <= taken) {
      throw new Error(`no output from the ${scenario} owner\n${stderr}`);
    }
    return JSON.parse(lines[taken++] as string) as Record<string, unknown>;
  };
  return { owner, mark, next };
}

export { waitUntil };
