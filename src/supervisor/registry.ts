// What the supervisor remembers about the groups it guards, with a bound: the pipe may carry
// anything, and a process that must outlive its owner cannot be grown without limit.
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

export class GroupRegistry {
  /** pgid -> leader start time (LEADER_ALREADY_GONE, or undefined where the platform cannot tell). */
  readonly groups = new Map<number, number | undefined>();
  /**
   * pgid -> its members by identity, recorded when it was (re-)registered without its leader:
   * once the leader is gone, the group number proves nothing, and these (with the owner token and
   * descent from them) are what the teardown may signal, one by one.
   */
  readonly members = new Map<number, ProcessIdentityMark[]>();

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
  register(pgid: number, startTime: number | undefined): RegisterOutcome {
    // A line speaks of the group as it is now: a repeated one records the identity again.
    if (this.groups.has(pgid)) {
      this.remember(pgid, startTime);
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
    this.remember(pgid, startTime);
    return 'registered';
  }

  /**
   * Records the group's identity: its leader's start time, and, when the leader is already gone
   * (a wrapper that exited and left its child in the group), its live members by identity: one
   * scan of /proc, paid only by such groups. A live leader costs one stat read.
   */
  private remember(pgid: number, startTime: number | undefined): void {
    const identity = startTime ?? groupLeaderIdentity(pgid);
    this.groups.set(pgid, identity);
    this.members.delete(pgid);
    if (identity === undefined || !hasProcfs()) return;
    // A start time read just now, or a pid that names some process: no member to record.
    if (identity !== LEADER_ALREADY_GONE && (startTime === undefined || readProcStat(pgid) !== undefined)) return;
    const found = recordGroupMembers(new Set([pgid])).get(pgid);
    if (found) this.members.set(pgid, found.slice(0, MAX_RECORDED_MEMBERS));
  }

  unregister(pgid: number): void {
    this.groups.delete(pgid);
    this.members.delete(pgid);
  }

  clear(): void {
    this.groups.clear();
    this.members.clear();
  }

  /**
   * Forgets groups that no longer exist (ESRCH): one probe each, run only when the registry is
   * full, so a flood of dead or made-up numbers costs O(1) per line on average.
   */
  private forgetGone(): void {
    for (const pgid of this.groups.keys()) if (signalGroup(pgid, 0) === 'gone') this.unregister(pgid);
  }
}
