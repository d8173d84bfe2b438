// Plumbing for the cgroup tests: where the test process's own v2 cgroup is, and scratch cgroups
// made there that are always emptied and removed after the test, pass or fail.
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assessOwnCgroup, parseUnifiedPath, type CgroupLocation } from '../../src/sys/cgroup.js';
import { loadNative } from '../../src/sys/native.js';
import { waitUntil } from '../../src/sys/wait.js';
import { randomHex } from '../../src/sys/random.js';

/** The test process's own cgroup when it may make children there (root here), else why not. */
export async function usableCgroup(): Promise<CgroupLocation | string> {
  if (process.platform !== 'linux') return `${process.platform} has no cgroups`;
  await loadNative();
  const assessment = assessOwnCgroup();
  if (!assessment.usable) return assessment.reason;
  if (assessment.authority !== 'root') return 'these tests make and chown cgroups: they need root';
  return assessment.place;
}

/** The v2 cgroup path of a process, or undefined. */
export function cgroupOf(pid: number): string | undefined {
  try {
    return parseUnifiedPath(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
  } catch {
    return undefined;
  }
}

function populated(directory: string): boolean {
  try {
    return /^populated 1$/m.test(readFileSync(join(directory, 'cgroup.events'), 'utf8'));
  } catch {
    return false;
  }
}

/** Kills everything in a cgroup and below, then removes them all, deepest first. */
export async function destroyCgroup(directory: string): Promise<void> {
  if (!existsSync(directory)) return;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (entry.isDirectory()) await destroyCgroup(join(directory, entry.name));
  }
  if (populated(directory)) {
    try {
      writeFileSync(join(directory, 'cgroup.kill'), '1');
    } catch {
      // no cgroup.kill: what is left is reported by the rmdir below
    }
    await waitUntil(() => !populated(directory), 5000);
  }
  rmdirSync(directory);
}

/**
 * A scratch cgroup below `parent`, optionally handed to `uid` the kernel's way (the directory
 * and its files chowned), destroyed after the test.
 */
export function scratchCgroup(
  t: { after: (fn: () => Promise<void> | void) => void },
  parent: CgroupLocation,
  uid?: number,
): { directory: string; path: string } {
  const name = `leash-test-${randomHex(4)}`;
  const directory = join(parent.directory, name);
  mkdirSync(directory); // the kernel fills it with its files
  t.after(() => destroyCgroup(directory));
  if (uid !== undefined) {
    chownSync(directory, uid, uid);
    for (const file of ['cgroup.procs', 'cgroup.subtree_control', 'cgroup.threads']) chownSync(join(directory, file), uid, uid);
  }
  return { directory, path: `${parent.path === '/' ? '' : parent.path}/${name}` };
}

/** Every `leash-run-*` cgroup below `directory`, at any depth (nested runs, sub-cgroups). */
export function runCgroupsBelow(directory: string): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      if (entry.name.startsWith('leash-run-')) found.push(join(dir, entry.name));
      visit(join(dir, entry.name));
    }
  };
  visit(directory);
  return found;
}

/** Whether a live process is in the cgroup at `directory` or below it. */
export function cgroupPopulated(directory: string): boolean {
  return populated(directory);
}

/**
 * Starts a command inside the cgroup at `directory`: a shell moves itself there, then execs it
 * (everything it starts, a `leash run` and its guard included, is born there).
 */
export function spawnInCgroup(directory: string, command: readonly string[], env: NodeJS.ProcessEnv): ChildProcess & { output: () => string } {
  const child = spawn('sh', ['-c', 'cg=$1; shift; echo $$ > "$cg/cgroup.procs" && exec "$@"', 'sh', directory, ...command], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (output += text));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (output += text));
  return Object.assign(child, { output: () => output });
}

/** The shell words that make a sub-cgroup of the caller's own cgroup (`sub` below it) and move the shell there. */
export function moveIntoSubCgroup(mountPoint: string, sub: string): string {
  return `cg=${mountPoint}$(sed -n 's/^0:://p' /proc/self/cgroup); mkdir -p "$cg/${sub}" && echo $$ > "$cg/${sub}/cgroup.procs"`;
}

/**
 * Writes on a cgroup the mark systemd writes on the ones it delegated (Delegate=yes, systemd 251+):
 * trusted.delegate=1. Through koffi directly, as a test-only setxattr(2).
 */
export async function markDelegatedBySystemd(directory: string): Promise<void> {
  type Koffi = typeof import('koffi');
  const loaded = (await import('koffi')) as Koffi & { default?: Koffi };
  const koffi = loaded.default ?? loaded;
  const setxattr = koffi.load('libc.so.6').func('int setxattr(const char *path, const char *name, const void *value, size_t size, int flags)') as
    (path: string, name: string, value: Buffer, size: number, flags: number) => number;
  if (setxattr(directory, 'trusted.delegate', Buffer.from('1'), 1, 0) !== 0) throw new Error(`setxattr(${directory}, trusted.delegate) failed`);
}
