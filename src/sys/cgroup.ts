// cgroup v2 for `leash run`: find the hierarchy this process lives in (unified, or the v2 part of
// a hybrid mount: never assumed to be at /sys/fs/cgroup), decide whether the rules of its owner
// let us make a child cgroup there, and drive that child (kill, freeze, "is it empty").
//
// Whose cgroup is it? As root on a host no service manager runs (or in a container's own cgroup
// namespace), root's. Under systemd only a cgroup systemd delegated (Delegate=yes) may get
// children: systemd's "Control Group APIs and Delegation" forbids creating cgroups anywhere else,
// even as root. The system manager (251+) marks those with the xattr trusted.delegate and
// user.delegate; a user manager marks nothing (src/core/cgroup.c returns before it for user
// managers), so there only the user's word (LEASH_CONTAINMENT=cgroup) stands for the mark.
// Elsewhere an unprivileged user may use a cgroup delegated the kernel's way: the directory, its
// cgroup.procs and cgroup.subtree_control owned by that user.
//
// Nesting: a cgroup leash made carries leash's mark (cgroup-ownership.ts), which stands for
// systemd's: a `leash run` started inside another one's cgroup makes its own as a child of it.
import { accessSync, constants, existsSync, mkdirSync, readdirSync, rmdirSync, statSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import {
  claimCgroup,
  closeQuietly,
  hasRunMark,
  judgeRunCgroup,
  lockBriefly,
  openDirectory,
  parseRunCgroupName,
  RUN_CGROUP_PREFIX,
  runCgroupIsLive,
  runCgroupName,
} from './cgroup-ownership.js';
import { nativeLoaded, readExtendedAttribute, unlockFile, waitForFileChange } from './native.js';
import { readProcText } from './proc-text.js';
import { signalProcess, type SignalOutcome } from './processes.js';
import { randomHex } from './random.js';
import { signalPinned } from './verified-signal.js';
import { pauseSync } from './wait.js';

export { RUN_CGROUP_PREFIX } from './cgroup-ownership.js';

export interface CgroupMount {
  /** Where the hierarchy is mounted here. */
  mountPoint: string;
  /** Which cgroup of the hierarchy that mount shows at its top ("/" unless bind-mounted deeper). */
  root: string;
  readOnly: boolean;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Every cgroup2 mount listed in a /proc/<pid>/mountinfo text. */
export function parseCgroup2Mounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const separator = line.indexOf(' - ');
    if (separator < 0) continue;
    const fields = line.slice(0, separator).split(' ');
    const [fstype] = line.slice(separator + 3).split(' ');
    if (fstype !== 'cgroup2' || fields.length < 6) continue;
    const options = (fields[5] ?? '').split(',');
    mounts.push({ root: unescapeMountField(fields[3] ?? '/'), mountPoint: unescapeMountField(fields[4] ?? ''), readOnly: options.includes('ro') });
  }
  return mounts;
}

/** The v2 path from a /proc/<pid>/cgroup text (its `0::` line), or undefined. */
export function parseUnifiedPath(procCgroup: string): string | undefined {
  for (const line of procCgroup.split('\n')) {
    if (line.startsWith('0::')) return line.slice(3).trim();
  }
  return undefined;
}

/** A cgroup as a path inside the hierarchy and as a directory here. */
export interface CgroupLocation {
  path: string;
  directory: string;
  mount: CgroupMount;
}

/**
 * Maps a cgroup path to its directory through a mount that shows it: the last one listed, since a
 * later mount at the same place (a read-only bind over the hierarchy) hides the earlier ones.
 */
export function locateCgroup(path: string, mounts: readonly CgroupMount[]): CgroupLocation | undefined {
  // Outside the root of its cgroup namespace a process reads `0::/../x`: that cgroup is not under
  // any mount this namespace shows, and joining the path would step out of the mount point (into
  // a v1 hierarchy beside it, say).
  if (path.split('/').includes('..')) return undefined;
  for (const mount of [...mounts].reverse()) {
    const root = mount.root === '/' ? '' : mount.root;
    if (path !== mount.root && !path.startsWith(`${root}/`)) continue;
    return { path, directory: join(mount.mountPoint, path.slice(root.length)), mount };
  }
  return undefined;
}

export type CgroupAssessment =
  | { usable: true; place: CgroupLocation; authority: 'root' | 'delegated' }
  | { usable: false; reason: string };

export interface AssessOptions {
  mountinfo?: string;
  procCgroup?: string;
  euid?: number;
  /** Whether systemd is the service manager here (sd_booted: /run/systemd/system exists). */
  systemd?: boolean;
  /**
   * The user says this process's cgroup was delegated to it (LEASH_CONTAINMENT=cgroup): a systemd
   * user manager delegates (`systemd-run --user --scope -p Delegate=yes`) without marking the
   * cgroup, so under systemd that word replaces the mark. Ownership and write access still count.
   */
  declaredDelegated?: boolean;
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readProcText(path);
  } catch {
    return undefined;
  }
}

function ownerOf(path: string): number | undefined {
  try {
    return statSync(path).uid;
  } catch {
    return undefined;
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether systemd marked the cgroup at `directory` as delegated (systemd 251 and later). */
function hasDelegationMark(directory: string): boolean {
  return readExtendedAttribute(directory, 'trusted.delegate') === '1' || readExtendedAttribute(directory, 'user.delegate') === '1';
}

/** This process's v2 cgroup as a writable mount shows it, or why there is none (the first of assessOwnCgroup's rules). */
function ownCgroupPlace(options: Pick<AssessOptions, 'mountinfo' | 'procCgroup'> = {}): CgroupLocation | string {
  if (process.platform !== 'linux') return `no cgroups on ${process.platform}`;
  const mountinfo = options.mountinfo ?? readOrUndefined('/proc/self/mountinfo');
  const procCgroup = options.procCgroup ?? readOrUndefined('/proc/self/cgroup');
  if (mountinfo === undefined || procCgroup === undefined) return 'cannot read /proc/self/mountinfo or /proc/self/cgroup';
  const mounts = parseCgroup2Mounts(mountinfo);
  if (mounts.length === 0) return 'no cgroup v2 hierarchy is mounted';
  const path = parseUnifiedPath(procCgroup);
  if (path === undefined || !path.startsWith('/')) return 'this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)';
  const place = locateCgroup(path, mounts);
  if (!place) return `no cgroup v2 mount here shows this process's cgroup ${path}`;
  if (place.mount.readOnly) return `${place.mount.mountPoint} is mounted read-only`;
  return place;
}

/** Whether this process may make child cgroups in its own v2 cgroup, and if not, why. */
export function assessOwnCgroup(options: AssessOptions = {}): CgroupAssessment {
  const place = ownCgroupPlace(options);
  if (typeof place === 'string') return { usable: false, reason: place };
  const path = place.path;
  const euid = options.euid ?? process.geteuid?.() ?? -1;
  const systemd = options.systemd ?? existsSync('/run/systemd/system');
  let authority: 'root' | 'delegated';
  const madeByLeash = parseRunCgroupName(basename(place.directory)) !== undefined && hasRunMark(place.directory);
  if (systemd && !options.declaredDelegated && !hasDelegationMark(place.directory) && !madeByLeash) {
    // Never create cgroups in a unit systemd did not delegate, not even as root. A cgroup leash
    // made (a `leash run` inside another) is the outer leash's, made where it was allowed to.
    return {
      usable: false,
      reason: `systemd manages ${path} and it carries no delegation mark (see docs/run.md: systemd-run --user --scope -p Delegate=yes env LEASH_CONTAINMENT=cgroup leash run ...)`,
    };
  }
  if (euid === 0) {
    authority = systemd ? 'delegated' : 'root';
  } else {
    const files = [place.directory, join(place.directory, 'cgroup.procs'), join(place.directory, 'cgroup.subtree_control')];
    const stranger = files.find((file) => ownerOf(file) !== euid);
    if (stranger !== undefined) return { usable: false, reason: `${path} is not delegated to uid ${euid} (${stranger} is not ours)` };
    authority = 'delegated';
  }
  if (!writable(place.directory) || !writable(join(place.directory, 'cgroup.procs'))) {
    return { usable: false, reason: `${place.directory} is not writable` };
  }
  return { usable: true, place, authority };
}

/** The whole text of a cgroup file, or undefined (gone, unreadable). */
function readCgroupFile(directory: string, file: string): string | undefined {
  return readOrUndefined(join(directory, file));
}

/** What a cgroup's member file lists: the pids of its processes, one a line. */
function parsePids(text: string | undefined): number[] {
  if (text === undefined) return [];
  const pids: number[] = [];
  for (const line of text.split('\n')) {
    const pid = Number(line);
    if (line.length > 0 && Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

/** Whether pid's v2 cgroup is `path` or below it. */
function memberOf(pid: number, path: string): boolean | undefined {
  const own = parseUnifiedPath(readOrUndefined(`/proc/${pid}/cgroup`) ?? '');
  if (own === undefined) return undefined;
  return own === path || own.startsWith(`${path}/`);
}

/**
 * A cgroup of our own holding one command's tree: made fresh (a unique name) in the cgroup this
 * process is in, removed once empty. Its processes are found and ended by the kernel's record,
 * not by walking /proc.
 */
export class TreeCgroup {
  private watcher: FSWatcher | undefined;
  readonly hasKill: boolean;

  private constructor(
    readonly parent: CgroupLocation,
    readonly path: string,
    readonly directory: string,
    /**
     * The cgroup's directory, open and flocked (cgroup-ownership.ts): kept open for leash's life,
     * and handed to the guard, which keeps the lock after leash. Undefined without native calls.
     */
    readonly lockFd: number | undefined,
  ) {
    this.hasKill = existsSync(join(directory, 'cgroup.kill'));
  }

  /**
   * Makes a fresh child cgroup of `parent`; a string says why it could not. With native calls
   * loaded it is claimed (locked, then marked) before anything can run in it; then the cgroups of
   * runs whose makers are proven gone are ended and removed.
   */
  static create(parent: CgroupLocation): TreeCgroup | string {
    const claims = nativeLoaded();
    // Shared while this maker is between its mkdir and its mark: see cgroup-ownership.ts.
    const parentFd = claims ? openDirectory(parent.directory) : undefined;
    const creating = parentFd !== undefined && lockBriefly(parentFd, 'shared');
    let made: { name: string; directory: string; lockFd: number | undefined } | string = 'no attempt';
    try {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const name = runCgroupName(randomHex(4), claims);
        const directory = join(parent.directory, name);
        try {
          mkdirSync(directory);
        } catch (error) {
          made = `cannot create ${directory}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
          break;
        }
        if (!claims) {
          made = { name, directory, lockFd: undefined };
          break;
        }
        const lockFd = openDirectory(directory);
        if (lockFd !== undefined && claimCgroup(directory, lockFd)) {
          made = { name, directory, lockFd };
          break;
        }
        closeQuietly(lockFd);
        removeTree(directory);
        made = `cannot claim ${directory} (lock and mark)`;
      }
    } finally {
      if (creating) unlockFile(parentFd!);
    }
    if (typeof made !== 'string') removeAbandoned(parent, made.name, parentFd);
    closeQuietly(parentFd);
    if (typeof made === 'string') return made;
    const { name, directory, lockFd } = made;
    const cgroup = new TreeCgroup(parent, `${parent.path === '/' ? '' : parent.path}/${name}`, directory, lockFd);
    // cgroup.events (4.5+) says when it empties; cgroup.kill (5.14) or cgroup.freeze (5.2) ends it.
    const missing = !existsSync(join(directory, 'cgroup.events'))
      ? 'cgroup.events'
      : !cgroup.hasKill && !existsSync(join(directory, 'cgroup.freeze')) ? 'cgroup.kill and cgroup.freeze' : undefined;
    if (missing !== undefined) {
      cgroup.remove();
      return `this kernel's cgroup v2 has no ${missing}`;
    }
    return cgroup;
  }

  /** Moves a process (all its threads) into this cgroup. Throws on failure. */
  enter(pid = process.pid): void {
    writeFileSync(join(this.directory, 'cgroup.procs'), String(pid));
  }

  /** Moves a process back to the parent cgroup. Throws on failure. */
  leave(pid = process.pid): void {
    writeFileSync(join(this.parent.directory, 'cgroup.procs'), String(pid));
  }

  /** The pids in this cgroup and in any cgroup the tree made below it. */
  members(): number[] {
    return collectMembers(this.directory);
  }

  /** Whether a live process is in the cgroup or below (cgroup.events `populated`). */
  populated(): boolean {
    // Gone or unreadable: nothing can be in a cgroup that is not there.
    return populatedAt(this.directory);
  }

  /** Calls `onChange` when cgroup.events changes (inotify): "populated 0" needs no polling. */
  watch(onChange: () => void): void {
    if (this.watcher) return;
    try {
      this.watcher = watch(join(this.directory, 'cgroup.events'), { persistent: false }, () => onChange());
      this.watcher.on('error', () => undefined);
    } catch {
      this.watcher = undefined;
    }
  }

  /** Whether the watch could be set: without it the caller must look by itself. */
  get watching(): boolean {
    return this.watcher !== undefined;
  }

  /**
   * Freezes the cgroup and waits (briefly, spinning: sleeping processes freeze at once) until the
   * kernel says every member is frozen. False, thawed again, when that does not come in time (a
   * process in uninterruptible sleep) or the cgroup cannot be frozen.
   */
  private freezeNow(budgetMs = 20): boolean {
    if (!this.freeze(true)) return false;
    const deadline = performance.now() + budgetMs;
    do {
      const events = readCgroupFile(this.directory, 'cgroup.events');
      if (events === undefined) break;
      if (/^frozen 1$/m.test(events)) return true;
    } while (performance.now() < deadline);
    this.freeze(false);
    return false;
  }

  freeze(frozen: boolean): boolean {
    try {
      writeFileSync(join(this.directory, 'cgroup.freeze'), frozen ? '1' : '0');
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Sends `signal` to every member, each proven a member when signalled: while the cgroup is
   * frozen; where it cannot be frozen in time, each by identity (the pid pinned with a pidfd, its
   * cgroup read and still this one or below, the signal sent through the descriptor; without
   * pidfds the membership is read right before kill(2)). A reused pid is never hit. Returns how
   * many were reached; pids signalled are added to `skip`.
   */
  signalMembers(signal: NodeJS.Signals, skip?: Set<number>): number {
    // Frozen, no member can exit, nor reap one: every pid listed stays that member until the
    // thaw, so plain kill(2) is proof enough, at a microsecond a member (the check by identity
    // below costs ~0.3 ms a member: 60 ms for a 200-process tree on a loaded machine).
    if (this.freezeNow()) {
      let reached = 0;
      try {
        for (const pid of this.members()) {
          if (skip?.has(pid)) continue;
          skip?.add(pid);
          if (signalProcess(pid, signal) === 'sent') reached += 1;
        }
      } finally {
        this.freeze(false);
      }
      return reached;
    }
    let reached = 0;
    for (const pid of this.members()) {
      if (skip?.has(pid)) continue;
      // Recorded as done whatever the outcome: once per pid is enough (cgroup.kill ends the rest).
      skip?.add(pid);
      if (signalMember(pid, this.path, signal) === 'sent') reached += 1;
    }
    return reached;
  }

  /** Whether `pid` is in this cgroup (or below) now. */
  holds(pid: number): boolean {
    return memberOf(pid, this.path) === true;
  }

  /** Signals one member by identity (see signalMembers). */
  signalMember(pid: number, signal: NodeJS.Signals): SignalOutcome {
    return signalMember(pid, this.path, signal);
  }

  /**
   * Ends every process of the cgroup at once: cgroup.kill (Linux 5.14+), else the cgroup is
   * frozen (nothing in it can fork or exit by itself), each member SIGKILLed, and thawed.
   */
  kill(): void {
    if (this.hasKill) {
      try {
        writeFileSync(join(this.directory, 'cgroup.kill'), '1');
        return;
      } catch {
        // fall through to the freezer
      }
    }
    // SIGKILL reaches frozen processes; what the freezer has not caught yet is caught next round.
    for (let round = 0; round < 100; round += 1) {
      if (this.signalMembers('SIGKILL') === 0) break;
    }
  }

  /**
   * Removes the cgroup and every cgroup the tree made below it, deepest first; false while one
   * still holds a process (or is not ours to remove). Gone already counts as removed.
   */
  remove(): boolean {
    this.watcher?.close();
    this.watcher = undefined;
    return removeTree(this.directory);
  }

  /**
   * Ends whatever is still in the cgroup or below (cgroup.kill reaches every descendant cgroup's
   * members), waits for the kernel's "populated 0" (woken by cgroup.events, never spinning), and
   * removes the cgroups deepest first. False when that did not happen within `budgetMs`. Never
   * while the calling process is in the cgroup: it would end itself.
   */
  destroy(budgetMs = 1000): boolean {
    if (this.remove()) return true;
    if (this.holds(process.pid)) return false;
    this.kill();
    waitUntilEmpty(this.directory, budgetMs);
    return this.remove();
  }
}

/** Whether cgroup.events of `directory` says a live process is in it or below. */
function populatedAt(directory: string): boolean {
  const events = readCgroupFile(directory, 'cgroup.events');
  return events !== undefined && /^populated 1$/m.test(events);
}

/**
 * Waits until the cgroup at `directory` is empty, at most `budgetMs`: woken by the kernel's
 * notification on cgroup.events; without native calls, it looks every 5 ms (sleeping between).
 */
function waitUntilEmpty(directory: string, budgetMs: number): boolean {
  const empty = () => !populatedAt(directory);
  const watched = waitForFileChange(join(directory, 'cgroup.events'), empty, budgetMs);
  if (watched !== undefined) return watched;
  const deadline = performance.now() + budgetMs;
  while (!empty()) {
    if (performance.now() >= deadline) return false;
    pauseSync(5);
  }
  return true;
}

/**
 * rmdir of a cgroup and all its descendants, deepest first (rmdir refuses a cgroup with child
 * cgroups, and one that holds a process). True when none is left; gone already counts as removed.
 */
function removeTree(directory: string, depth = 0): boolean {
  let entries;
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  // cgroupfs shows child cgroups as directories and nothing else does: every directory is one.
  if (depth < 64) for (const entry of entries) if (entry.isDirectory()) removeTree(join(directory, entry.name), depth + 1);
  try {
    rmdirSync(directory);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Ends every process in the cgroup at `directory` and below, without a TreeCgroup (cleaning up). */
function killTree(directory: string): void {
  try {
    writeFileSync(join(directory, 'cgroup.kill'), '1');
  } catch {
    // Before Linux 5.14: each member, by identity (its cgroup read again right before the signal).
    const path = cgroupPathOf(directory);
    if (path === undefined) return;
    for (let round = 0; round < 20; round += 1) {
      const pids = collectMembers(directory);
      if (pids.length === 0) break;
      for (const pid of pids) signalMember(pid, path, 'SIGKILL');
      pauseSync(5);
    }
  }
}

function collectMembers(directory: string, depth = 0): number[] {
  const pids = parsePids(readCgroupFile(directory, 'cgroup.procs'));
  if (depth > 32) return pids;
  try {
    for (const entry of readdirSync(directory, { withFileTypes: true })) if (entry.isDirectory()) pids.push(...collectMembers(join(directory, entry.name), depth + 1));
  } catch {
    // gone
  }
  return pids;
}

function signalMember(pid: number, path: string, signal: NodeJS.Signals): SignalOutcome {
  return signalPinned(pid, signal, () => {
    const member = memberOf(pid, path);
    return member === undefined ? 'gone' : member ? 'same' : 'denied';
  });
}

/**
 * Ends and removes the cgroups of runs whose maker (and its guards) are proven gone, sub-cgroups
 * included; one whose maker cannot be proven gone is left alone, whatever it holds (see
 * cgroup-ownership.ts for the proofs). `own` is skipped; `parentFd` is the parent, opened.
 */
function removeAbandoned(parent: CgroupLocation, own: string, parentFd: number | undefined): void {
  let names: string[];
  try {
    names = readdirSync(parent.directory);
  } catch {
    return;
  }
  // A leftover tree gets what the guard would have given it had it lived: the kill (the grace was
  // the guard's, and it is gone); the start of this run waits for that at most this long.
  const deadline = performance.now() + 500;
  for (const name of names) {
    if (!name.startsWith(RUN_CGROUP_PREFIX) || name === own) continue;
    const directory = join(parent.directory, name);
    const { verdict, held } = judgeRunCgroup(name, directory, parentFd);
    try {
      if (verdict === 'end' && populatedAt(directory)) {
        killTree(directory);
        waitUntilEmpty(directory, Math.max(0, deadline - performance.now()));
      }
      if (verdict !== 'keep') removeTree(directory);
    } finally {
      closeQuietly(held);
      if (parentFd !== undefined && verdict !== 'keep') unlockFile(parentFd);
    }
  }
}

/** The v2 mounts of this process, read once. */
let ownMounts: CgroupMount[] | undefined;

function cgroupPathOf(directory: string): string | undefined {
  ownMounts ??= parseCgroup2Mounts(readOrUndefined('/proc/self/mountinfo') ?? '');
  for (const mount of ownMounts) {
    if (directory !== mount.mountPoint && !directory.startsWith(`${mount.mountPoint}/`)) continue;
    const root = mount.root === '/' ? '' : mount.root;
    return `${root}${directory.slice(mount.mountPoint.length)}` || '/';
  }
  return undefined;
}

/**
 * The pid (in its maker's pid namespace) of the live `leash run` whose cgroup holds `pid` (its
 * cgroup, or one the tree made below it), or undefined. For `leash reap`: such a process has an
 * owner that answers for it, as a token carrier whose supervisor runs does.
 */
export function liveRunHolding(pid: number): number | undefined {
  const path = parseUnifiedPath(readOrUndefined(`/proc/${pid}/cgroup`) ?? '');
  if (path === undefined) return undefined;
  ownMounts ??= parseCgroup2Mounts(readOrUndefined('/proc/self/mountinfo') ?? '');
  const parts = path.split('/');
  for (let index = 0; index < parts.length; index += 1) {
    const part = parts[index]!;
    if (!part.startsWith(RUN_CGROUP_PREFIX)) continue;
    const directory = locateCgroup(parts.slice(0, index + 1).join('/') || '/', ownMounts)?.directory;
    if (runCgroupIsLive(part, directory)) return Number(part.slice(RUN_CGROUP_PREFIX.length).split('-')[0]);
  }
  return undefined;
}

/** The one-line description of the containment in force, for stderr and `leash status`. */
export function describeContainment(cgroup: TreeCgroup | undefined, fallbackReason?: string): string {
  return cgroup
    ? `cgroup v2 (${cgroup.directory})`
    : `process tree (subreaper)${fallbackReason ? `; no usable cgroup: ${fallbackReason}` : ''}`;
}

// --- leash run's stop (freeze, then signal the whole tree at once) -------------------------------

/** Whether cgroup.events of `directory` says every process in it (and below) is frozen. */
export function cgroupFrozen(directory: string): boolean {
  const events = readCgroupFile(directory, 'cgroup.events');
  return events !== undefined && /^frozen 1$/m.test(events);
}

/** Every pid of one read of cgroup.procs of `directory` and of every cgroup below it, at any depth. */
export function cgroupProcsDeep(directory: string): number[] {
  const pids: number[] = [];
  const pending = [directory];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    pids.push(...parsePids(readCgroupFile(next, 'cgroup.procs')));
    let entries;
    try {
      entries = readdirSync(next, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) if (entry.isDirectory()) pending.push(join(next, entry.name));
  }
  return pids;
}

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/**
 * Freezes the cgroup, waits (off the CPU: the tasks must run to freeze) for `frozen 1`, hands
 * `whileFrozen` one read of every pid in it and below, then thaws. A frozen task can neither
 * exit, fork nor be reaped: every pid read names the member it named when read, so plain kill(2)
 * is proof enough, and a signal sent to all of them reaches the whole tree at once. False, thawed
 * again and `whileFrozen` not called, when the cgroup cannot be frozen or does not freeze within
 * `budgetMs` (a task in uninterruptible sleep).
 */
export async function withCgroupFrozen(cgroup: TreeCgroup, whileFrozen: (pids: number[]) => void, budgetMs = 250): Promise<boolean> {
  if (!cgroup.freeze(true)) return false;
  try {
    const deadline = performance.now() + budgetMs;
    while (!cgroupFrozen(cgroup.directory)) {
      if (performance.now() > deadline || readCgroupFile(cgroup.directory, 'cgroup.events') === undefined) return false;
      await nextTurn();
    }
    whileFrozen(cgroupProcsDeep(cgroup.directory));
    return true;
  } finally {
    cgroup.freeze(false);
  }
}

/**
 * Moves a process into `cgroup` ('in') or back to its parent ('out') off the main thread (libuv's
 * threadpool). The first migration after a quiet spell waits for an RCU grace period in the
 * kernel (see primeMigrations); the next ones take 0.1 ms. Rejects as the write does.
 */
export async function moveProcess(cgroup: TreeCgroup, where: 'in' | 'out', pid = process.pid): Promise<void> {
  await writeFile(join(where === 'in' ? cgroup.directory : cgroup.parent.directory, 'cgroup.procs'), String(pid));
}

/**
 * Starts a migration that changes nothing (this process into the cgroup it is already in) on the
 * thread pool; settles, never rejects, when it is done. Any migration takes the kernel's one
 * cgroup-wide write lock, whose first taking after a quiet spell waits for an RCU grace period:
 * 7-24 ms measured here, against 0.1-0.3 ms for the moves in the next 20 ms or so. Started before
 * koffi loads, that wait runs beside the load instead of before the command's start.
 * Only where a move is likely to follow: this process may write its own cgroup.procs, and no
 * systemd manages it undelegated (assessOwnCgroup's rule; the mark it reads needs koffi, so here
 * only the user's word LEASH_CONTAINMENT=cgroup or a cgroup of leash's own name counts under
 * systemd). Elsewhere it costs the machine a grace period under that lock for nothing.
 */
export function primeMigrations(declaredDelegated = false): Promise<void> {
  const place = ownCgroupPlace();
  if (typeof place === 'string') return Promise.resolve();
  if (existsSync('/run/systemd/system') && !declaredDelegated && parseRunCgroupName(basename(place.directory)) === undefined) return Promise.resolve();
  const procs = join(place.directory, 'cgroup.procs');
  if (!writable(procs)) return Promise.resolve();
  return writeFile(procs, String(process.pid)).catch(() => {});
}
