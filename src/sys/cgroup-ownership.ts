// Whose is a cgroup that `leash run` made, and is its maker provably gone? A pid cannot answer:
// a leash in a private pid namespace that shares the cgroup hierarchy sees none of the others'
// pids (and a pid is reused). The kernel's answer is a lock: the maker opens its cgroup's
// directory, flocks it (shared: a nested run's maker holds its parent's lock the same way while it
// makes its own), and hands that same open file description to its guard, so the lock lasts
// until the maker and every guard are gone, whatever pid namespace looks at it. A mark (an
// extended attribute, which cgroupfs keeps where it refuses regular files) is written only while
// the lock is held: a marked cgroup whose lock is free has lost its maker and its guards.
//
// The moment between mkdir and the lock is covered by a shared lock on the parent directory, held
// by a maker from before its mkdir until its mark is written: a cleaner that takes the parent's
// exclusive lock knows no maker is in that moment (in a nested run's parent, the outer maker's own
// lock refuses it: unmarked leftovers there go with the outer run's cgroup), so an unmarked cgroup whose own lock is free
// was left by a maker that died before it could mark it. A maker without native calls can take
// no lock; its name says so, and only its pid in the cleaner's own pid namespace can prove it gone.
import { closeSync, constants, fstatSync, openSync, readlinkSync, statSync } from 'node:fs';
import { lockFile, nativeLoaded, readExtendedAttribute, setExtendedAttribute } from './native.js';
import { signalProcess } from './processes.js';
import { pauseSync } from './wait.js';

/** Prefix of the cgroups `leash run` makes. */
export const RUN_CGROUP_PREFIX = 'leash-run-';

/** The mark's names: user.* where the kernel allows it on cgroupfs (5.7+), else trusted.* (root). */
const MARKS = ['user.leash.run', 'trusted.leash.run'] as const;

/**
 * leash-run-<pid>-<random>[-<l|p><pid namespace>]: `l` for a maker that locks and marks, `p` for
 * one that could not (no native calls). The name without a suffix is that of leash before
 * 0.2: a maker that neither locked nor said its pid namespace.
 */
const NAME = /^leash-run-(\d+)-([0-9a-f]+)(?:-([lp])(\d*))?$/;

export interface RunCgroupName {
  pid: number;
  /** Whether the maker locks and marks (true), could not (false), or predates both (undefined). */
  claims: boolean | undefined;
  /** The maker's pid namespace (the inode of /proc/<pid>/ns/pid), when the name says it. */
  pidNamespace: string | undefined;
}

export function parseRunCgroupName(name: string): RunCgroupName | undefined {
  const match = NAME.exec(name);
  if (!match) return undefined;
  const pid = Number(match[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return { pid, claims: match[3] === undefined ? undefined : match[3] === 'l', pidNamespace: match[4] || undefined };
}

let ownNamespace: string | undefined | null = null;

/** This process's pid namespace, by the inode the kernel shows for it; undefined where unreadable. */
export function pidNamespaceId(): string | undefined {
  if (ownNamespace === null) {
    try {
      ownNamespace = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    } catch {
      ownNamespace = undefined;
    }
  }
  return ownNamespace;
}

export function runCgroupName(random: string, claims: boolean): string {
  return `${RUN_CGROUP_PREFIX}${process.pid}-${random}-${claims ? 'l' : 'p'}${pidNamespaceId() ?? ''}`;
}

/** A directory opened to hold a lock on it (close-on-exec, as every descriptor Node opens). */
export function openDirectory(directory: string): number | undefined {
  try {
    return openSync(directory, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    return undefined;
  }
}

export function closeQuietly(fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/**
 * Takes a lock that others hold only for microseconds (a cleaner looking, a maker marking):
 * retried briefly; false when it stays busy (a holder stopped in that moment) or cannot be taken.
 */
export function lockBriefly(fd: number, mode: 'shared' | 'exclusive', budgetMs = 100): boolean {
  const deadline = performance.now() + budgetMs;
  for (;;) {
    let outcome;
    try {
      outcome = lockFile(fd, mode);
    } catch {
      return false;
    }
    if (outcome === 'held') return true;
    if (performance.now() >= deadline) return false;
    pauseSync(1);
  }
}

/** Whether a cgroup carries leash's mark (nesting: it may get children, as systemd's delegated ones). */
export function hasRunMark(directory: string): boolean {
  return MARKS.some((name) => readExtendedAttribute(directory, name) !== undefined);
}

/**
 * Claims the cgroup just made at `directory`, opened as `fd`: its lock, then its mark. False when
 * the lock cannot be taken, or when the directory is no longer the one opened (a cleaner removed
 * it in the moment before the lock: the caller makes another). A mark the kernel refuses (an
 * unprivileged user before Linux 5.7, which has no user.* attributes on cgroupfs) leaves the
 * cgroup locked but unmarked: usable, and once abandoned removed only if empty.
 */
export function claimCgroup(directory: string, fd: number): boolean {
  if (!lockBriefly(fd, 'shared')) return false;
  for (const name of MARKS) {
    try {
      setExtendedAttribute(fd, name, String(process.pid));
      break;
    } catch {
      // the next name, or none
    }
  }
  try {
    return statSync(directory).ino === fstatSync(fd).ino;
  } catch {
    return false;
  }
}

/** What a cleaner may do with a cgroup of another run. */
export type Abandonment =
  /** Maker and guards proven gone: end what is left in it, then remove it. */
  | 'end'
  /** Maker proven gone, its guard perhaps not: remove it only if empty (rmdir refuses otherwise). */
  | 'remove-if-empty'
  /** The maker lives, or cannot be proven gone: left alone. */
  | 'keep';

/**
 * Judges the run cgroup `name` at `directory`. A lock taken here on the cgroup is kept (in
 * `held`) until the caller is done with it, so no maker can come back in between; the caller
 * closes it. `parentFd` is the parent directory, whose exclusive lock proves no maker is between
 * its mkdir and its mark.
 */
export function judgeRunCgroup(name: string, directory: string, parentFd: number | undefined): { verdict: Abandonment; held?: number } {
  const parsed = parseRunCgroupName(name);
  if (!parsed) return { verdict: 'keep' };
  const sameNamespace = parsed.pidNamespace !== undefined && parsed.pidNamespace === pidNamespaceId();
  const pidGone = sameNamespace && signalProcess(parsed.pid, 0) === 'gone';
  if (!nativeLoaded()) return { verdict: pidGone ? 'remove-if-empty' : 'keep' };
  const fd = openDirectory(directory);
  if (fd === undefined) return { verdict: 'keep' };
  let outcome;
  try {
    outcome = lockFile(fd, 'exclusive');
  } catch {
    outcome = 'busy';
  }
  if (outcome === 'busy') {
    closeQuietly(fd);
    return { verdict: 'keep' };
  }
  if (hasRunMark(directory)) return { verdict: 'end', held: fd };
  if (parsed.claims === true && parentFd !== undefined && lockBriefly(parentFd, 'exclusive', 0)) {
    // No maker is between mkdir and mark, and this one never marked: it died in that moment, before
    // its command could start. Released by the caller's closing of the parent.
    return { verdict: 'remove-if-empty', held: fd };
  }
  if (pidGone) return { verdict: 'remove-if-empty', held: fd };
  closeQuietly(fd);
  return { verdict: 'keep' };
}

/**
 * Whether the maker of the run cgroup `name` at `directory` still lives (or a guard of it), for
 * `leash reap`: the lock when native calls are loaded, else the pid where the name's namespace is
 * this one (or unsaid, as leash before 0.2 named them).
 */
export function runCgroupIsLive(name: string, directory: string | undefined): boolean | undefined {
  const parsed = parseRunCgroupName(name);
  if (!parsed) return undefined;
  if (nativeLoaded() && directory !== undefined && parsed.claims === true) {
    const fd = openDirectory(directory);
    if (fd !== undefined) {
      try {
        return lockFile(fd, 'exclusive') === 'busy';
      } catch {
        // judged by the pid below
      } finally {
        closeQuietly(fd);
      }
    }
  }
  if (parsed.pidNamespace !== undefined && parsed.pidNamespace !== pidNamespaceId()) return true; // cannot tell: assume it lives
  return signalProcess(parsed.pid, 0) !== 'gone';
}
