// Open file descriptors of other processes, from /proc/<pid>/fd: what each one names and which
// way it was opened. Enough to tell, for one pipe, who still holds its read and write ends.
// Standard library only.
import { lstatSync, readdirSync, readlinkSync } from 'node:fs';

/** What /proc/<pid>/fd/<fd> points to ("pipe:[1234]", "/dev/pts/3", ...), or undefined. */
export function readFdTarget(pid: number, fd: number | string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** The inode of an anonymous pipe from an fd link text ("pipe:[1234]"), else undefined. */
export function pipeInode(target: string | undefined): number | undefined {
  // Cheap first-character test: this runs once per descriptor on the machine.
  if (target === undefined || target.charCodeAt(0) !== 112 || !target.startsWith('pipe:[')) return undefined;
  const inode = Number(target.slice(6, -1));
  return Number.isInteger(inode) ? inode : undefined;
}

/** The inode of a socket from an fd link text ("socket:[1234]"), else undefined. */
export function socketInode(target: string | undefined): number | undefined {
  if (target === undefined || target.charCodeAt(0) !== 115 || !target.startsWith('socket:[')) return undefined;
  const inode = Number(target.slice(8, -1));
  return Number.isInteger(inode) ? inode : undefined;
}

/** Whether an fd link names a terminal: a pty, a virtual console or the console. */
export function isTerminalTarget(target: string | undefined): boolean {
  if (target === undefined) return false;
  return target.startsWith('/dev/pts/') || target.startsWith('/dev/tty') || target === '/dev/console';
}

/**
 * The descriptor numbers a process has open; 'gone' when it has exited, 'denied' when it exists
 * but its descriptors are not ours to read (another user's, hidepid=1): what it holds is unknown.
 */
export function listFdsOrWhy(pid: number): string[] | 'gone' | 'denied' {
  try {
    return readdirSync(`/proc/${pid}/fd`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH' ? 'gone' : 'denied';
  }
}

export type FdAccess = 'read' | 'write' | 'read-write';

/**
 * Which way a descriptor was opened. The kernel mirrors the file's mode into the permission bits
 * of the /proc/<pid>/fd/<fd> link (owner r for FMODE_READ, w for FMODE_WRITE): one lstat, where
 * /proc/<pid>/fdinfo would take an open, a read and a close.
 */
export function fdAccess(pid: number, fd: number | string): FdAccess | undefined {
  let mode: number;
  try {
    mode = lstatSync(`/proc/${pid}/fd/${fd}`).mode;
  } catch {
    return undefined;
  }
  const read = (mode & 0o400) !== 0;
  const write = (mode & 0o200) !== 0;
  if (read && write) return 'read-write';
  if (read) return 'read';
  if (write) return 'write';
  return undefined;
}

/** Who holds the ends of one pipe: pids, one entry per descriptor. */
export interface PipeHolders {
  readers: number[];
  writers: number[];
}

/** The result of one pass over every process's descriptors. */
export interface PipeHolderScan {
  holders: Map<number, PipeHolders>;
  /** Processes whose descriptors could not be read and that were not gone: they may hold any of the pipes. */
  denied: number[];
  /** Pipes with a descriptor whose direction could not be read: who holds which end is not proven. */
  unsure: Set<number>;
  /** Descriptors looked at, for benchmarks. */
  fdsSeen: number;
}

/**
 * Finds every holder of the pipes in `inodes` among `pids`: one readdir and one readlink per
 * descriptor on the machine, one lstat per descriptor that is one of those pipes.
 */
export function scanPipeHolders(inodes: ReadonlySet<number>, pids: Iterable<number>): PipeHolderScan {
  const holders = new Map<number, PipeHolders>();
  for (const inode of inodes) holders.set(inode, { readers: [], writers: [] });
  const denied: number[] = [];
  const unsure = new Set<number>();
  let fdsSeen = 0;
  for (const pid of pids) {
    const fds = listFdsOrWhy(pid);
    if (typeof fds === 'string') {
      if (fds === 'denied') denied.push(pid);
      continue;
    }
    fdsSeen += fds.length;
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch (error) {
        // ENOENT: closed since the listing. Anything else (an exec that changed who may look): unknown.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        if (!denied.includes(pid)) denied.push(pid);
        continue;
      }
      const inode = pipeInode(target);
      if (inode === undefined) continue;
      const entry = holders.get(inode);
      if (!entry) continue;
      const access = fdAccess(pid, fd);
      // Closed since the readlink, or an exec changed who may look: either way, not proven.
      if (access === undefined) unsure.add(inode);
      if (access === 'read' || access === 'read-write') entry.readers.push(pid);
      if (access === 'write' || access === 'read-write') entry.writers.push(pid);
    }
  }
  return { holders, denied, unsure, fdsSeen };
}
