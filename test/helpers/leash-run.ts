// Plumbing for the `leash run` tests: start the CLI with the test's mark, read its state file.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCommandLine, readProcStat, scanAllStats } from '../../src/sys/procfs.js';
import { CLI_ENTRY, killMarked, markedEnv, newMark } from './processes.js';

export interface LeashProcess {
  child: ChildProcess;
  /** Everything written to stderr so far. */
  stderr: () => string;
  stdout: () => string;
}

/** Starts `node bin/leash.js <args>` with the mark (inherited by everything below it). */
export function startLeash(args: readonly string[], mark: string, extraEnv: NodeJS.ProcessEnv = {}): LeashProcess {
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', ...extraEnv }),
  });
  let err = '';
  let out = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (err += text));
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (out += text));
  return { child, stderr: () => err, stdout: () => out };
}

/** A private temporary directory, removed by the returned function. */
export function scratchDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'leash-run-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A test's own marker and scratch folder (with a state path in it), both cleaned up after the
 * test: its marked processes ended, the folder removed.
 */
export function markedScratch(t: { after: (fn: () => Promise<void> | void) => void }) {
  const mark = newMark();
  const scratch = scratchDir();
  t.after(async () => {
    await killMarked(mark);
    scratch.remove();
  });
  return { mark, dir: scratch.dir, state: join(scratch.dir, 'state.json') };
}

export function readJson(path: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Zombie children of `pid`: processes it should have reaped. */
export function zombieChildrenOf(pid: number): number[] {
  return scanAllStats().filter((stat) => stat.ppid === pid && stat.state === 'Z').map((stat) => stat.pid);
}

/**
 * Live (non-zombie) processes of the tree of `pid` (a `leash run`), by a full scan: its
 * descendants and, contained, every member of its run cgroup with theirs (an orphan made in the
 * command's first milliseconds, before leash is a subreaper, is init's child but still in the
 * cgroup). Its guard is not one.
 */
export function liveDescendantsOf(pid: number): number[] {
  const guard = guardOf(pid);
  const stats = scanAllStats().filter((stat) => stat.pid !== guard);
  const found = new Set<number>([pid, ...runCgroupMembers(guard)]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const stat of stats) {
      if (!found.has(stat.pid) && found.has(stat.ppid)) {
        found.add(stat.pid);
        grew = true;
      }
    }
  }
  found.delete(pid);
  return [...found].filter((p) => {
    const stat = readProcStat(p);
    return stat !== undefined && stat.state !== 'Z';
  });
}

/** Contained: the members of the run cgroup that the guard (`sh -c SCRIPT leash-guard DIR TICKS`) watches, subgroups included. */
function runCgroupMembers(guard: number | undefined): number[] {
  if (guard === undefined) return [];
  const command = readCommandLine(guard) ?? [];
  const directory = command[command.indexOf('leash-guard') + 1];
  if (!command.includes('leash-guard') || directory === undefined) return [];
  const pids: number[] = [];
  const visit = (dir: string) => {
    try {
      pids.push(...readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number));
      for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) visit(join(dir, entry.name));
    } catch {
      // gone meanwhile
    }
  };
  visit(directory);
  return pids;
}

/**
 * The guard of a `leash run` (its child): the death supervisor, started with an owner token, or,
 * contained in a cgroup, the shell named leash-guard.
 */
export function guardOf(leashPid: number): number | undefined {
  return scanAllStats().find((stat) => {
    if (stat.ppid !== leashPid) return false;
    const command = readCommandLine(stat.pid) ?? [];
    return command.includes('--owner-token') || command.includes('leash-guard');
  })?.pid;
}
