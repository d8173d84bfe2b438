// A process group held by identity, not by number. Two ways, best first:
// - a handle: a pidfd of the leader, taken while the leader was the recorded process. With
//   PIDFD_SIGNAL_PROCESS_GROUP (Linux >= 6.9) a signal through it reaches the group that leader's
//   pid names for as long as that group has a member, even after the leader was reaped, and fails
//   (ESRCH) once it emptied, whoever holds the number after;
// - witnesses: members seen in the group while it was proven (its leader the recorded process,
//   or another witness alive in it). A group number cannot be reused while any member holds it,
//   so one witness still alive with its start time and still in the group proves that the group
//   never emptied: it is still ours, and its number may be signalled. Kept fresh cheaply from the
//   children of the leader and of the witnesses (no scan of /proc).
// A group proven by neither is 'unproven': the caller decides (group-membership.ts's per-member
// proof). Where there is no procfs (macOS) a group is taken by its number, as documented.
// Shared by the death supervisor (standard library only until it loads the native calls, after
// start-up), the owner library and leash run.
import { closeSync, readFileSync, readlinkSync } from 'node:fs';
import { constants, release } from 'node:os';
import { closeFd, GROUP_HANDLES_VARIABLE, groupHandlesEnabled, NativeError, nativeLoaded, openPidfd, signalPidfdGroup } from './native.js';
import { hasProcfs, isDeadState, readChildrenOfThreads, readProcStat, readProcStatWithThreads } from './procfs.js';
import { liveMemberCounts, signalGroup, type SignalOutcome } from './processes.js';

/** One process by identity. */
export interface Witness {
  pid: number;
  startTime: number;
}

/** Witnesses kept per group at most: one alive is proof; a few more cover members that exit. */
export const MAX_WITNESSES = 16;

/**
 * What proves the group is the one held:
 * - 'handle'   the leader's pidfd reaches a live group;
 * - 'leader'   the recorded leader holds the number (zombie or not);
 * - 'witness'  a witness, same start time, still holds the number;
 * - 'number'   nothing can be told here (no procfs, no identity recorded): taken by number;
 * - 'unproven' the number answers but nothing proves it is still this group;
 * - 'gone'     the group is gone (its number free, or given to a process other than the leader).
 */
export type GroupProof = 'handle' | 'leader' | 'witness' | 'number' | 'unproven' | 'gone';

/** Whether a proof allows signalling the group as a whole. */
export function provesGroup(proof: GroupProof): boolean {
  return proof === 'handle' || proof === 'leader' || proof === 'witness' || proof === 'number';
}

/**
 * Whether group handles can work here at all, before any native call is loaded: Linux 6.9 or
 * later (os.release()) and not switched off. A process that would load koffi only for them (the
 * death supervisor: about 1.4 MB of private memory) skips it where they cannot work.
 */
export function kernelMayHaveGroupHandles(): boolean {
  if (process.platform !== 'linux' || process.env[GROUP_HANDLES_VARIABLE] === 'off') return false;
  const version = /^([0-9]+)\.([0-9]+)/.exec(release());
  if (!version) return true; // unreadable: let the probe decide
  const major = Number(version[1]);
  return major > 6 || (major === 6 && Number(version[2]) >= 9);
}

let probedSupport: boolean | undefined;

/**
 * Whether group handles work here: native calls loaded, not switched off (LEASH_GROUP_HANDLES=off),
 * and the kernel takes PIDFD_SIGNAL_PROCESS_GROUP (probed once, with signal 0, on this process's
 * own pidfd; a process that leads no group gets ESRCH, which also says the flag is known).
 */
export function groupHandlesAvailable(): boolean {
  if (!nativeLoaded() || !groupHandlesEnabled()) return false;
  if (probedSupport === undefined) {
    let fd: number | undefined;
    try {
      fd = openPidfd(process.pid);
    } catch {
      fd = undefined;
    }
    if (fd === undefined) return (probedSupport = false);
    try {
      probedSupport = signalPidfdGroup(fd, 0) !== 'unsupported';
    } finally {
      closeFd(fd);
    }
  }
  return probedSupport && groupHandlesEnabled();
}

/** A live (not zombie) process by identity, in group `pgid`, or undefined. */
function statInGroup(mark: Witness, pgid: number): { dead: boolean } | undefined {
  const stat = readProcStat(mark.pid);
  if (!stat || stat.startTime !== mark.startTime || stat.pgid !== pgid) return undefined;
  return { dead: isDeadState(stat.state) };
}

/** Emptiness as far as the group's own facts tell; 'scan' means only a look at every process can. */
export type QuickEmptiness = 'empty' | 'live' | 'scan' | 'unproven';

export class GroupHandle {
  /** The leader's pidfd, while held. */
  private fd: number | undefined;
  private witnessList: Witness[] = [];

  private constructor(
    readonly pgid: number,
    /** The leader's start time (0: it was gone when the group was taken; undefined: unknowable here). */
    readonly leaderStartTime: number | undefined,
  ) {}

  /**
   * Takes group `pgid` whose leader started at `leaderStartTime`: its pidfd where group handles
   * work and the leader is still that process, and its first witnesses (the leader's children in
   * the group). Never throws.
   */
  static take(pgid: number, leaderStartTime: number | undefined): GroupHandle {
    const handle = new GroupHandle(pgid, leaderStartTime);
    // With a working pidfd the witnesses are of no use: none are read.
    if (!handle.openHandle()) handle.refreshWitnesses();
    return handle;
  }

  /**
   * A group held by a descriptor this process was given (inherited from the owner): trusted as
   * the leader's pidfd of `pgid` by whoever passed it. Closed with the handle.
   */
  static adopt(pgid: number, leaderStartTime: number | undefined, fd: number, witnesses: readonly Witness[] = []): GroupHandle {
    const handle = new GroupHandle(pgid, leaderStartTime);
    handle.fd = fd;
    handle.addWitnesses(witnesses);
    return handle;
  }

  /** A group known only by witnesses handed over (a replay from an owner without native calls). */
  static fromWitnesses(pgid: number, leaderStartTime: number | undefined, witnesses: readonly Witness[]): GroupHandle {
    const handle = new GroupHandle(pgid, leaderStartTime);
    handle.addWitnesses(witnesses);
    return handle;
  }

  /** The leader's pidfd, if one is held (for handing over to another process). */
  get descriptor(): number | undefined {
    return this.fd;
  }

  get witnesses(): readonly Witness[] {
    return this.witnessList;
  }

  /**
   * Opens the leader's pidfd if none is held, group handles work, and the leader is still the
   * recorded process (checked after the open, so the descriptor names it). Whether one is held.
   */
  openHandle(): boolean {
    if (this.fd !== undefined) return true;
    if (this.leaderStartTime === undefined || this.leaderStartTime === 0 || !groupHandlesAvailable()) return false;
    if (readProcStat(this.pgid)?.startTime !== this.leaderStartTime) return false; // not worth a descriptor
    let fd: number | undefined;
    try {
      fd = openPidfd(this.pgid);
    } catch {
      return false; // gone (ESRCH), or no descriptor to spare: witnesses then
    }
    if (fd === undefined) return false;
    const stat = readProcStat(this.pgid);
    if (!stat || stat.startTime !== this.leaderStartTime || stat.pgid !== this.pgid) {
      closeFd(fd);
      return false;
    }
    this.fd = fd;
    return true;
  }

  /**
   * Holds `fd`, a pidfd of the leader this process was given (checked with isPidfdOf first), in
   * place of any held before. Closed with the handle.
   */
  attachDescriptor(fd: number): void {
    if (fd === this.fd) return;
    this.close();
    this.fd = fd;
  }

  /** Whether the group's own signals go through a pidfd (no proof by number needed). */
  hasHandle(): boolean {
    return this.fd !== undefined && groupHandlesAvailable();
  }

  /** Adds members seen in the group while it was proven (by whoever saw them), up to MAX_WITNESSES. */
  addWitnesses(marks: Iterable<Witness>): void {
    for (const mark of marks) {
      if (this.witnessList.length >= MAX_WITNESSES) return;
      if (mark.pid === this.pgid || this.witnessList.some((known) => known.pid === mark.pid)) continue;
      this.witnessList.push({ pid: mark.pid, startTime: mark.startTime });
    }
  }

  /** What proves the group now: one pidfd call, or a stat read or two. */
  prove(): GroupProof {
    if (this.fd !== undefined && groupHandlesEnabled()) {
      const probe = signalPidfdGroup(this.fd, 0);
      if (probe === 'gone') return 'gone';
      if (probe !== 'unsupported') return 'handle';
    }
    if (!hasProcfs() || this.leaderStartTime === undefined) return signalGroup(this.pgid, 0) === 'gone' ? 'gone' : 'number';
    const leader = readProcStat(this.pgid);
    if (leader) {
      if (leader.startTime === this.leaderStartTime && leader.pgid === this.pgid) return 'leader';
      // Another process at the number is a stranger, unless a witness still holds the group: then
      // the number was never free, and that process is the leader itself (a zombie not yet reaped,
      // of a group registered as leaderless).
      for (const witness of this.witnessList) if (statInGroup(witness, this.pgid)) return 'witness';
      return 'gone';
    }
    if (signalGroup(this.pgid, 0) === 'gone') return 'gone';
    for (const witness of this.witnessList) if (statInGroup(witness, this.pgid)) return 'witness';
    return 'unproven';
  }

  /**
   * Signals the group through its pidfd only: the call is its own proof ('sent': the group that
   * leader named still has a member; 'gone': it emptied, whoever holds the number now). 'none'
   * where no pidfd is held or the kernel refuses the flag (the caller proves the group another
   * way). For a caller that checked groupHandlesAvailable() once for many groups.
   */
  signalThroughPidfd(signal: NodeJS.Signals): 'sent' | 'gone' | 'denied' | 'none' {
    if (this.fd === undefined) return 'none';
    const sent = signalPidfdGroup(this.fd, numberOf(signal));
    return sent === 'unsupported' ? 'none' : sent;
  }

  /**
   * Signals the group: through the pidfd where held, else by number once proven. 'unproven' when
   * nothing proves it (the caller may still end proven members one by one).
   */
  signal(signal: NodeJS.Signals | 0, signalNumber?: number): SignalOutcome | 'unproven' {
    if (this.fd !== undefined && groupHandlesEnabled()) {
      const sent = signalPidfdGroup(this.fd, signal === 0 ? 0 : (signalNumber ?? numberOf(signal)));
      if (sent !== 'unsupported') return sent;
    }
    const proof = this.prove();
    if (proof === 'gone') return 'gone';
    if (proof === 'unproven') return 'unproven';
    return signalGroup(this.pgid, signal);
  }

  /**
   * Whether anything of the group still runs code, from its own facts: gone; its leader or a
   * witness running; or 'scan' (the group is proven but only zombies of it are known: count its
   * members in one look at every process); 'unproven' (nothing tells whose the number is).
   */
  quickEmptiness(): QuickEmptiness {
    const proof = this.prove();
    if (proof === 'gone') return 'empty';
    if (proof === 'unproven') return 'unproven';
    if (!hasProcfs()) {
      // macOS answers EPERM for a group of zombies only: nothing there can be signalled.
      return signalGroup(this.pgid, 0) === 'sent' ? 'live' : 'empty';
    }
    if (this.leaderStartTime !== undefined && this.leaderStartTime !== 0) {
      const leader = statInGroup({ pid: this.pgid, startTime: this.leaderStartTime }, this.pgid);
      if (leader && !leader.dead) return 'live';
    }
    for (const witness of this.witnessList) {
      const found = statInGroup(witness, this.pgid);
      if (found && !found.dead) return 'live';
    }
    return 'scan';
  }

  /**
   * Whether nothing of the group runs code any more (zombies count as gone); 'unproven' when
   * nothing tells whose the number is. A group proven but with only zombies known costs one scan
   * of /proc (quickEmptiness first, where that matters).
   */
  isEmpty(): boolean | 'unproven' {
    const quick = this.quickEmptiness();
    if (quick === 'scan') return (liveMemberCounts([this.pgid]).get(this.pgid) ?? 0) === 0;
    return quick === 'unproven' ? quick : quick === 'empty';
  }

  /**
   * Keeps the witnesses true and fresh, without a scan: drops those gone or moved, then adds the
   * children in the group of the leader and of each witness, read while that parent is proven in
   * the group (it holds the number, so its children there are the group's). A few reads per group.
   */
  refreshWitnesses(): void {
    if (!hasProcfs() || this.leaderStartTime === undefined) return;
    this.witnessList = this.witnessList.filter((witness) => statInGroup(witness, this.pgid) !== undefined);
    const parents: Witness[] = [...this.witnessList];
    if (this.leaderStartTime !== 0) parents.unshift({ pid: this.pgid, startTime: this.leaderStartTime });
    for (const parent of parents) {
      if (this.witnessList.length >= MAX_WITNESSES) return;
      // One read gives identity, state and thread count (a single-threaded parent has one children file).
      const before = readProcStatWithThreads(parent.pid);
      if (!before || before.startTime !== parent.startTime || before.pgid !== this.pgid || isDeadState(before.state)) continue;
      const children = readChildrenOfThreads(parent.pid, before.threads) ?? [];
      // Read while the parent still held the number: checked again after the read.
      if (!statInGroup(parent, this.pgid)) continue;
      const found: Witness[] = [];
      for (const pid of children) {
        const stat = readProcStat(pid);
        if (stat && stat.pgid === this.pgid && stat.ppid === parent.pid && !isDeadState(stat.state)) found.push({ pid, startTime: stat.startTime });
      }
      this.addWitnesses(found);
    }
  }

  /** Whether refreshing the witnesses is of any use: no working handle, procfs present, an identity recorded. */
  needsRefresh(): boolean {
    return !this.hasHandle() && hasProcfs() && this.leaderStartTime !== undefined;
  }

  /** Lets go of the pidfd (the witnesses stay, for a replay that cannot carry it). */
  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    closeDescriptor(fd);
  }
}

const signalNumbers = constants.signals as Record<string, number>;

/** Signal numbers by name, without a lookup through os constants at every call. */
function numberOf(signal: NodeJS.Signals): number {
  return signalNumbers[signal] ?? 0;
}

/**
 * Closes a descriptor of this process, quietly: through the native calls where loaded, else
 * through Node's fs (an inherited handle may be closed before koffi loads; Deno's fs refuses a
 * descriptor it did not open itself, so there it waits for the native calls).
 */
export function closeDescriptor(fd: number): void {
  try {
    if (nativeLoaded()) closeFd(fd);
    else closeSync(fd);
  } catch (error) {
    if (!(error instanceof NativeError) && !(error as NodeJS.ErrnoException).code) throw error;
    if (!nativeLoaded() && (error as NodeJS.ErrnoException).code === 'EBADF') deferredCloses.push(fd);
  }
}

/** Descriptors a runtime's fs would not close (Deno), for the native calls once loaded. */
const deferredCloses: number[] = [];

/** Closes, through the native calls just loaded, what closeDescriptor could not close before. */
export function closeDeferredDescriptors(): void {
  if (!nativeLoaded()) return;
  for (const fd of deferredCloses.splice(0)) closeDescriptor(fd);
}

const PIDFD_LINK = /^(anon_inode:\[pidfd\]|pidfd:)/;

/** Whether descriptor `fd` of this process is a pidfd (of any process). */
export function isPidfdDescriptor(fd: number): boolean {
  try {
    return PIDFD_LINK.test(readlinkSync(`/proc/self/fd/${fd}`));
  } catch {
    return false;
  }
}

/**
 * Whether `fd`, a descriptor of this process, is a pidfd naming process `pid` (or a process
 * already reaped, whose pidfd names no pid any more): an inherited descriptor is checked before
 * it is trusted as a group's handle.
 */
export function isPidfdOf(fd: number, pid: number): boolean {
  if (!Number.isInteger(fd) || fd < 3 || !hasProcfs()) return false;
  try {
    if (!PIDFD_LINK.test(readlinkSync(`/proc/self/fd/${fd}`))) return false;
    const named = /^Pid:\s*(-?[0-9]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'));
    if (!named) return false;
    const value = Number(named[1]);
    // -1: reaped; 0: outside this pid namespace (the owner's view is trusted then).
    return value === pid || value <= 0;
  } catch {
    return false;
  }
}
