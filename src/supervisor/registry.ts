// What the supervisor remembers about the groups it guards, with a bound: the pipe may carry
// anything, and a process that must outlive its owner cannot be grown without limit.
import { GroupHandle, isPidfdOf, provesGroup, type Witness } from '../sys/group-handle.js';
import { recordGroupMembers, type ProcessIdentityMark } from '../sys/group-membership.js';
import { groupLeaderIdentity, LEADER_ALREADY_GONE, signalGroup } from '../sys/processes.js';
import { hasProcfs, readProcStat } from '../sys/procfs.js';

/**
 * Groups remembered at most. pid_max is 32768 by default and a machine rarely runs more than
 * a few thousand groups; a full registry first forgets the groups that no longer exist.
 */
export const MAX_REGISTERED = 8192;

/** Members recorded per leaderless group at most (the proof needs one live one; the rest descend or carry the token). */
export const MAX_RECORDED_MEMBERS = 256;

export type RegisterOutcome = 'registered' | 'gone' | 'full';

/** How a registration names its group: now (`register`), or as registered earlier with another supervisor (`recall`). */
export type RegisterMode = 'now' | 'recalled';

/** Witnesses refreshed per tick at most (round-robin over the groups with neither handle nor end). */
const REFRESHES_PER_TICK = 64;

export class GroupRegistry {
  /** pgid -> leader start time (LEADER_ALREADY_GONE, or undefined where the platform cannot tell). */
  readonly groups = new Map<number, number | undefined>();
  /**
   * pgid -> its members by identity, recorded when it was (re-)registered without its leader:
   * once the leader is gone, the group number proves nothing, and these (with the owner token and
   * descent from them) are what the teardown may signal, one by one.
   */
  readonly members = new Map<number, ProcessIdentityMark[]>();
  /** pgid -> the group held by identity: the leader's pidfd where group handles work, its witnesses. */
  readonly handles = new Map<number, GroupHandle>();
  private refreshCursor: Iterator<GroupHandle> | undefined;

  /** Refusals left before a full registry is probed again after a probe that freed nothing. */
  private refusalsBeforeProbe = 0;

  constructor(private readonly limit = MAX_REGISTERED) {}

  get size(): number {
    return this.groups.size;
  }

  /**
   * Remembers a group that exists now. Without a start time on the line, the leader's is read
   * now: a number recycled later for a stranger's group must not be taken for this one.
   */
  register(pgid: number, startTime: number | undefined, mode: RegisterMode = 'now'): RegisterOutcome {
    // A line speaks of the group as it is now: a repeated one records the identity again.
    if (this.groups.has(pgid)) {
      this.remember(pgid, startTime, mode);
      return 'registered';
    }
    // A group that no longer exists has nothing left to take down, and its number cannot name
    // it again: remembering it would only let a flood of dead or made-up numbers grow us.
    if (signalGroup(pgid, 0) === 'gone') return 'gone';
    if (this.groups.size >= this.limit) {
      if (this.refusalsBeforeProbe > 0) {
        this.refusalsBeforeProbe -= 1;
        return 'full';
      }
      this.forgetGone();
      if (this.groups.size >= this.limit) {
        // Full of live groups: probing all of them again for every line would cost O(limit) each.
        this.refusalsBeforeProbe = 256;
        return 'full';
      }
    }
    this.remember(pgid, startTime, mode);
    return 'registered';
  }

  /**
   * Records the group's identity: its leader's start time, and, when the leader is already gone
   * (a wrapper that exited and left its child in the group), its live members by identity: one
   * scan of /proc, paid only by such groups. A live leader costs one stat read.
   */
  private remember(pgid: number, startTime: number | undefined, mode: RegisterMode): void {
    const identity = startTime ?? groupLeaderIdentity(pgid);
    const previous = this.handles.get(pgid);
    this.groups.set(pgid, identity);
    this.members.delete(pgid);
    // The same group named again keeps what holds it; so does the word that its leader is gone
    // (`register PGID 0`, a guard that saw the leader exit) about a group still held: its pidfd
    // reaches the group after the leader's death, and the members recorded below join its
    // witnesses. Another identity starts afresh.
    const stillHeld = previous !== undefined && identity === LEADER_ALREADY_GONE && previous.leaderStartTime !== undefined &&
      previous.leaderStartTime !== LEADER_ALREADY_GONE && provesGroup(previous.prove());
    if (previous && (previous.leaderStartTime === identity || stillHeld)) {
      previous.openHandle();
      previous.refreshWitnesses();
    } else {
      previous?.close();
      this.handles.set(pgid, GroupHandle.take(pgid, identity));
    }
    if (identity === undefined || !hasProcfs()) return;
    // A start time read just now, or a pid that names some process: no member to record. A group
    // recalled from an earlier supervisor records nobody: whoever is in it now may be a stranger
    // who took the number since; its handle or witnesses follow on their own lines.
    if (mode === 'recalled') return;
    if (identity !== LEADER_ALREADY_GONE && (startTime === undefined || readProcStat(pgid) !== undefined)) return;
    const found = recordGroupMembers(new Set([pgid])).get(pgid);
    if (!found) return;
    this.members.set(pgid, found.slice(0, MAX_RECORDED_MEMBERS));
    // Named by the owner as the group now: its members are as good as witnesses.
    this.handles.get(pgid)?.addWitnesses(found);
  }

  /**
   * A member of a registered group, as the owner saw it: kept as a witness if it is still that
   * process and still in the group (a witness that left or died proves nothing). 'unknown' for a
   * group not registered, 'stale' for a witness that no longer holds the group.
   */
  witness(pgid: number, mark: Witness): 'kept' | 'unknown' | 'stale' {
    const handle = this.handles.get(pgid);
    if (!handle) return 'unknown';
    if (hasProcfs()) {
      const stat = readProcStat(mark.pid);
      if (!stat || stat.startTime !== mark.startTime || stat.pgid !== pgid) return 'stale';
    }
    handle.addWitnesses([mark]);
    return 'kept';
  }

  /**
   * Attaches an inherited descriptor, the owner's pidfd of the group's leader. 'unknown' for a
   * group not registered; 'invalid' for a descriptor that is no pidfd of that leader (left open:
   * it may be another line's).
   */
  adoptHandle(pgid: number, fd: number): 'kept' | 'unknown' | 'invalid' {
    const handle = this.handles.get(pgid);
    if (!handle) return 'unknown';
    // One descriptor is one group's: another's would take its signals, and its close the other's.
    if (!isPidfdOf(fd, pgid) || (handle.descriptor !== fd && this.holdsDescriptor(fd))) return 'invalid';
    handle.attachDescriptor(fd);
    return 'kept';
  }

  /** Whether a group holds descriptor `fd` as its handle. */
  holdsDescriptor(fd: number): boolean {
    for (const handle of this.handles.values()) if (handle.descriptor === fd) return true;
    return false;
  }

  /** Opens a pidfd for every group whose leader is still the recorded one (once the native calls are loaded). */
  openHandles(): void {
    for (const handle of this.handles.values()) handle.openHandle();
  }

  /**
   * Keeps the witnesses of a few groups fresh (those held without a working pidfd), round-robin:
   * a few reads of /proc per group, never a scan.
   */
  refreshSome(count = REFRESHES_PER_TICK): void {
    let done = 0;
    let looked = 0;
    while (done < count && looked < this.handles.size) {
      let next = this.refreshCursor?.next();
      if (!next || next.done) {
        this.refreshCursor = this.handles.values();
        next = this.refreshCursor.next();
        if (next.done) return;
      }
      looked += 1;
      if (!next.value.needsRefresh()) continue;
      next.value.refreshWitnesses();
      done += 1;
    }
  }

  /** Whether any group is held without a working pidfd (witnesses then need refreshing). */
  needsRefresh(): boolean {
    for (const handle of this.handles.values()) if (handle.needsRefresh()) return true;
    return false;
  }

  unregister(pgid: number): void {
    this.groups.delete(pgid);
    this.members.delete(pgid);
    this.handles.get(pgid)?.close();
    this.handles.delete(pgid);
  }

  clear(): void {
    this.groups.clear();
    this.members.clear();
    for (const handle of this.handles.values()) handle.close();
    this.handles.clear();
  }

  /**
   * Forgets groups that no longer exist (ESRCH): one probe each, run only when the registry is
   * full, so a flood of dead or made-up numbers costs O(1) per line on average.
   */
  private forgetGone(): void {
    for (const pgid of this.groups.keys()) if (signalGroup(pgid, 0) === 'gone') this.unregister(pgid);
  }
}
