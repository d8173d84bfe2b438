// The guard of `leash run`: its own death supervisor. leash run can die in ways it cannot handle
// (SIGKILL, the OOM killer, a crash); the supervisor sees its control pipe close and takes the
// tree down — SIGTERM, the grace, SIGKILL. It learns the tree's process groups as they appear,
// and sweeps every process carrying the run's owner token (setsid escapees, the spawn gap).
// A clean exit of leash run releases it: no teardown then.
import { SupervisorLink } from '../owner/supervisor-link.js';
import type { ControlCommand } from '../supervisor/protocol.js';
import { LEADER_ALREADY_GONE } from '../sys/processes.js';
import { readProcStat } from '../sys/procfs.js';
import { randomHex } from '../sys/random.js';
import { LeaderWatch } from './leader-watch.js';

/** The variable the supervisor's sweep looks for (the owner library's name, on purpose). */
export const RUN_TOKEN_VARIABLE = 'LEASH_OWNER_TOKEN';

export class RunGuard {
  /** Carried in the environment of every process of the tree. */
  readonly token = randomHex(12);
  /** pgid -> its leader's start time (LEADER_ALREADY_GONE when no leader was seen). */
  private readonly registered = new Map<number, number>();
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
      replay: () => [...this.registered].map(([pgid, startTime]): ControlCommand => ({ verb: 'register', pgid, startTime })),
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
   * (or ones whose number now names another leader), unregisters groups that have emptied.
   */
  track(groups: ReadonlyMap<number, number | undefined>): void {
    if (!this.active) return;
    for (const [pgid, leaderStart] of groups) {
      const startTime = leaderStart ?? LEADER_ALREADY_GONE;
      if (this.registered.get(pgid) === startTime) continue;
      this.registered.set(pgid, startTime);
      this.link.send({ verb: 'register', pgid, startTime });
      if (startTime === LEADER_ALREADY_GONE) this.leaders.remove(pgid);
      else this.leaders.add(pgid, startTime);
    }
    for (const pgid of this.registered.keys()) {
      if (groups.has(pgid)) continue;
      this.registered.delete(pgid);
      this.leaders.remove(pgid);
      this.link.notify({ verb: 'unregister', pgid });
    }
  }

  /** A registered leader exited: its group, if it still has members, is registered again without it. */
  private leaderExited(pgid: number): void {
    if (!this.active || !this.registered.has(pgid) || this.registered.get(pgid) === LEADER_ALREADY_GONE) return;
    this.registered.set(pgid, LEADER_ALREADY_GONE);
    this.link.send({ verb: 'register', pgid, startTime: LEADER_ALREADY_GONE });
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
    this.leaders.stop();
    void this.link.release();
  }
}
