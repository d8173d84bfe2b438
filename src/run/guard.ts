// The guard of `leash run`: its own death supervisor. leash run can die in ways it cannot handle
// (SIGKILL, the OOM killer, a crash); the supervisor sees its control pipe close and takes the
// tree down — SIGTERM, the grace, SIGKILL. It learns the tree's process groups as they appear,
// and sweeps every process carrying the run's owner token (setsid escapees, the spawn gap).
// A clean exit of leash run releases it: no teardown then.
// Each registered group is held by identity (group-handle.ts): its leader's pidfd, taken while the
// leader is the recorded process, else witnesses. A replacement supervisor (the first one died) is
// told each group with `recall`, its pidfd as an inherited descriptor and its witnesses, never
// "whoever is in the group now": that may be a stranger who took an emptied group's number.
import { identityLines, inheritAtMost, recallLines } from '../owner/identity-lines.js';
import { RoundRobin } from '../owner/round-robin.js';
import { SupervisorLink } from '../owner/supervisor-link.js';
import type { ControlCommand } from '../supervisor/protocol.js';
import { GroupHandle, MAX_WITNESSES, type Witness } from '../sys/group-handle.js';
import { LEADER_ALREADY_GONE } from '../sys/processes.js';
import { readProcStat } from '../sys/procfs.js';
import { randomHex } from '../sys/random.js';
import { LeaderWatch } from './leader-watch.js';

/** The variable the supervisor's sweep looks for (the owner library's name, on purpose). */
export const RUN_TOKEN_VARIABLE = 'LEASH_OWNER_TOKEN';

/** Groups held without a pidfd whose witnesses one walk refreshes at most. */
const WITNESS_REFRESHES_PER_WALK = 64;

export class RunGuard {
  /** Carried in the environment of every process of the tree. */
  readonly token = randomHex(12);
  /** pgid -> its leader's start time (LEADER_ALREADY_GONE when no leader was seen), kept after the leader exits. */
  private readonly registered = new Map<number, number>();
  /** Registered groups the supervisor was told have lost their leader. */
  private readonly leaderless = new Set<number>();
  /** pgid -> the registered group held by identity. */
  private readonly handles = new Map<number, GroupHandle>();
  /** Groups whose witnesses one walk refreshes at most (a few reads each). */
  private readonly witnessRing = new RoundRobin(this.handles);
  private readonly link: SupervisorLink;
  private active = true;
  /** Every supervisor process this guard started, by pid, with its start time. */
  private readonly processes = new Map<number, number>();
  /**
   * The registered leaders, each heard when it exits: the group is registered again without its
   * leader at once, and the supervisor records the members left in it. A walk would come up to
   * seconds later, and a SIGKILL of leash in between left a scrubbed member unproven.
   */
  private readonly leaders = new LeaderWatch((pgid) => this.leaderExited(pgid));

  constructor(graceMs: number) {
    this.link = new SupervisorLink({
      ownerToken: this.token,
      graceMs,
      replay: (inherit) => {
        const inheritSome = inheritAtMost(inherit);
        const lines: ControlCommand[] = [];
        for (const [pgid, startTime] of this.registered) lines.push(...recallLines(pgid, startTime, this.handles.get(pgid), [], inheritSome));
        return lines;
      },
      needed: () => this.active,
    });
  }

  /** Starts the supervisor now, before anything of the tree exists. */
  start(): void {
    this.link.ensure();
  }

  /** The supervisor's pid, for tests and diagnostics. */
  get pid(): number | undefined {
    return this.link.pid;
  }

  /**
   * Whether a process is (or was) one of the guard's supervisors. leash run is a subreaper and
   * the supervisor its child: it shows up in the tree walk, but it is not part of the tree, it
   * must never be signalled by the tree's stop, and libuv, not leash, reaps it.
   */
  isGuardProcess(stat: { pid: number; startTime: number }): boolean {
    return this.mayBeGuard(stat.pid) && this.processes.get(stat.pid) === stat.startTime;
  }

  /** A cheap first test by pid alone (no procfs read unless the pid is a guard's). */
  mayBeGuard(pid: number): boolean {
    const current = this.link.pid;
    if (current !== undefined && !this.processes.has(current)) {
      const start = readProcStat(current)?.startTime;
      if (start !== undefined) this.processes.set(current, start);
    }
    return this.processes.has(pid);
  }

  /**
   * Brings the supervisor's record in line with the groups of the tree now: registers new ones
   * (or ones whose number now names another leader), tells it of leaders gone, unregisters groups
   * that have emptied. `members`: live processes of the tree in each group, seen by this walk (the
   * run's own): witnesses of groups held without a pidfd.
   */
  track(groups: ReadonlyMap<number, number | undefined>, members?: ReadonlyMap<number, readonly Witness[]>): void {
    if (!this.active) return;
    for (const [pgid, leaderStart] of groups) {
      const known = this.registered.get(pgid);
      if (leaderStart === undefined && known !== undefined) {
        // The group registered with its leader, now without it: the same group while its handle says so.
        if (known === LEADER_ALREADY_GONE || this.leaderless.has(pgid)) continue;
        if (this.handles.get(pgid)?.prove() !== 'gone') {
          this.leaderGone(pgid);
          continue;
        }
      }
      const startTime = leaderStart ?? LEADER_ALREADY_GONE;
      if (known === startTime) continue;
      this.hold(pgid, startTime);
      // A group first seen without its leader: the supervisor records its members now (the walk just saw them, the run's).
      this.link.send({ verb: 'register', pgid, startTime });
      if (startTime === LEADER_ALREADY_GONE) this.leaders.remove(pgid);
      else this.leaders.add(pgid, startTime);
    }
    for (const pgid of this.registered.keys()) {
      if (groups.has(pgid)) continue;
      this.forget(pgid);
      this.link.notify({ verb: 'unregister', pgid });
    }
    this.refreshWitnesses(members);
  }

  /** Holds group `pgid` by identity afresh (its leader started at `startTime`, 0 when never seen). */
  private hold(pgid: number, startTime: number): void {
    this.handles.get(pgid)?.close();
    this.registered.set(pgid, startTime);
    this.leaderless.delete(pgid);
    if (startTime === LEADER_ALREADY_GONE) this.handles.set(pgid, GroupHandle.fromWitnesses(pgid, startTime, []));
    else this.handles.set(pgid, GroupHandle.take(pgid, startTime));
  }

  private forget(pgid: number): void {
    this.registered.delete(pgid);
    this.leaderless.delete(pgid);
    this.handles.get(pgid)?.close();
    this.handles.delete(pgid);
    this.leaders.remove(pgid);
  }

  /** Keeps the witnesses of groups held without a pidfd true: a few groups per walk, plus what the walk saw. */
  private refreshWitnesses(members: ReadonlyMap<number, readonly Witness[]> | undefined): void {
    let refreshed = 0;
    for (let looked = 0; looked < this.handles.size && refreshed < WITNESS_REFRESHES_PER_WALK; looked += 1) {
      const handle = this.handles.get(this.witnessRing.take(1)[0]!);
      if (!handle?.needsRefresh()) continue;
      handle.refreshWitnesses();
      refreshed += 1;
    }
    if (!members) return;
    for (const [pgid, seen] of members) {
      const handle = this.handles.get(pgid);
      if (handle?.needsRefresh()) handle.addWitnesses(seen.slice(0, MAX_WITNESSES));
    }
  }

  /** A registered leader exited: its group, if it still has members, is registered again without it. */
  private leaderExited(pgid: number): void {
    const known = this.registered.get(pgid);
    if (!this.active || known === undefined || known === LEADER_ALREADY_GONE || this.leaderless.has(pgid)) return;
    // Its pidfd says the group emptied with its leader: nothing left to tell (the next walk unregisters it).
    if (this.handles.get(pgid)?.prove() === 'gone') return;
    this.leaderGone(pgid);
  }

  /**
   * Tells the supervisor that group `pgid` lost its leader, heard as it happened: it records the
   * members in the group now (a scrubbed member carries no token: that record proves it the
   * run's), and is given the witnesses held. The guard's own record keeps the leader's identity:
   * a replacement supervisor is told the group by it, never by who is in the group then.
   */
  private leaderGone(pgid: number): void {
    this.leaderless.add(pgid);
    this.leaders.remove(pgid);
    this.link.notify({ verb: 'register', pgid, startTime: LEADER_ALREADY_GONE });
    for (const line of identityLines(pgid, this.handles.get(pgid))) this.link.notify(line);
  }

  /** Whether what was said to the guard is all in its pipe (SupervisorLink.allWritten). */
  allWritten(): boolean {
    return this.link.allWritten();
  }

  /** The tree is over: let the supervisor go without a teardown. */
  release(): void {
    if (!this.active) return;
    this.active = false;
    this.registered.clear();
    this.leaderless.clear();
    for (const handle of this.handles.values()) handle.close();
    this.handles.clear();
    this.leaders.stop();
    void this.link.release();
  }
}
