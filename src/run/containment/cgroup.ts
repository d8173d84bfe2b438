// The cgroup containment of `leash run`: the run is the union of the run's cgroup (and every
// cgroup below it) and every descendant of leash, whichever cgroup it moved to (podman's conmon
// and container processes do: the container's first process, adopted by leash, lives in a cgroup
// podman made). The cgroup's members are the kernel's record: frozen, each pid of one read of
// cgroup.procs is the member it names, and one pass of kill(2) reaches the whole tree at once.
// A descendant outside the cgroup is found by a walk from leash and signalled by identity (pid
// and start time, through a pidfd where there is one): a freeze does not hold it.
import { cgroupProcsDeep, withCgroupFrozen, type TreeCgroup } from '../../sys/cgroup.js';
import { signalProcess } from '../../sys/processes.js';
import { isDeadState, type ProcStat } from '../../sys/procfs.js';
import { walkOnce } from '../../sys/tree.js';
import { signalIfSame } from '../../sys/verified-signal.js';
import type { Containment, PassNames } from './seam.js';

export interface CgroupContainmentHost {
  /** leash's own pid: the root of the walk for descendants outside the cgroup. */
  readonly self: number;
  /** Whether `pid` is one of leash's guard processes (neither the run's nor to be signalled). */
  isGuard(pid: number): boolean;
  /** Reaps leash's ended children and says how many still live (the guard aside). */
  liveChildren(): number;
}

export class CgroupContainment implements Containment {
  readonly kind = 'cgroup';
  /** Pids of the cgroup already sent this phase's signal (a pid is a member until it leaves the list). */
  private readonly reached = new Set<number>();
  /** pid:start of the outsiders already sent this phase's signal. */
  private readonly reachedOutside = new Set<string>();
  /** Descendants of leash outside the cgroup at the last walk. */
  private outside: ProcStat[] = [];
  private memberCount = 0;
  private passing = false;

  constructor(readonly cgroup: TreeCgroup, private readonly host: CgroupContainmentHost) {}

  /** Members at the last look: the cgroup's, and the outsiders of the last walk. */
  count(): number {
    return this.memberCount + this.outside.filter((stat) => !isDeadState(stat.state)).length;
  }

  /** One read of the member list (the state document's count); no walk. */
  refresh(): void {
    this.memberCount = cgroupProcsDeep(this.cgroup.directory).length;
  }

  /** The run ended: nothing is left (the last look may predate the last exits). */
  emptied(): void {
    this.memberCount = 0;
    this.outside = [];
  }

  newPhase(): void {
    this.reached.clear();
    this.reachedOutside.clear();
  }

  /** Whether a member of the cgroup has not had this phase's signal yet. */
  hasNewcomers(): boolean {
    const pids = cgroupProcsDeep(this.cgroup.directory);
    this.memberCount = pids.length;
    return pids.some((pid) => !this.reached.has(pid));
  }

  /**
   * Sends `signal` to every member of the cgroup not reached yet in this phase, all at once while
   * it is frozen; `names` reads the few shown while they cannot die. Where the cgroup does not
   * freeze in time, each member by identity (its cgroup read through a pidfd). SIGKILL is
   * cgroup.kill. Resolves with how many were reached; concurrent calls are one.
   */
  async signalMembers(signal: NodeJS.Signals, names: PassNames): Promise<number> {
    if (this.passing) return 0;
    this.passing = true;
    try {
      if (signal === 'SIGKILL') {
        const pids = cgroupProcsDeep(this.cgroup.directory);
        this.memberCount = pids.length;
        names(pids);
        this.cgroup.kill();
        return pids.length;
      }
      let reached = 0;
      const frozen = await withCgroupFrozen(this.cgroup, (pids) => {
        this.memberCount = pids.length;
        const fresh = pids.filter((pid) => !this.reached.has(pid));
        // Before the signal: a default-fatal one ends a frozen task at once (and its command line).
        names(fresh);
        for (const pid of fresh) {
          this.reached.add(pid);
          if (signalProcess(pid, signal) === 'sent') reached += 1;
        }
      });
      if (frozen) return reached;
      const pids = cgroupProcsDeep(this.cgroup.directory);
      this.memberCount = pids.length;
      const fresh = pids.filter((pid) => !this.reached.has(pid));
      names(fresh);
      for (const pid of fresh) {
        this.reached.add(pid);
        if (this.cgroup.signalMember(pid, signal) === 'sent') reached += 1;
      }
      return reached;
    } finally {
      this.passing = false;
    }
  }

  /**
   * The live descendants of leash outside the cgroup: one walk from leash, the guard's processes
   * left out, each process not listed in the cgroup's last read looked at (its cgroup file).
   */
  findOutsiders(): ProcStat[] {
    const tree = walkOnce(this.host.self);
    const guards = new Set<number>();
    for (const stat of tree.values()) if (this.host.isGuard(stat.pid)) guards.add(stat.pid);
    const members = new Set(cgroupProcsDeep(this.cgroup.directory));
    this.memberCount = members.size;
    const outside: ProcStat[] = [];
    for (const stat of tree.values()) {
      if (isDeadState(stat.state) || members.has(stat.pid)) continue;
      if (guards.has(stat.pid) || guards.has(stat.ppid)) continue;
      if (this.cgroup.holds(stat.pid)) continue;
      // Gone meanwhile, or a zombie (it has left every cgroup): nothing to signal.
      if (signalProcess(stat.pid, 0) === 'gone') continue;
      outside.push(stat);
    }
    this.outside = outside;
    return outside;
  }

  /** Sends `signal` to each outsider of a fresh walk not reached yet in this phase, by identity; returns those reached. */
  signalOutsiders(signal: NodeJS.Signals): ProcStat[] {
    const sent: ProcStat[] = [];
    for (const stat of this.findOutsiders()) {
      const key = `${stat.pid}:${stat.startTime}`;
      if (this.reachedOutside.has(key)) continue;
      this.reachedOutside.add(key);
      if (signalIfSame(stat.pid, stat.startTime, signal) === 'sent') sent.push(stat);
    }
    return sent;
  }

  /**
   * Empty when the cgroup is (cgroup.events) and none of leash's children lives: every live
   * descendant outside the cgroup either has a live ancestor in it or, its ancestors all gone,
   * is leash's child (leash is a child subreaper from before the command's first fork).
   */
  isEmpty(): boolean {
    return !this.cgroup.populated() && this.host.liveChildren() === 0;
  }

  /** Whether the cgroup part alone is empty (its members leave in exit(), before they are reaped). */
  cgroupEmpty(): boolean {
    return !this.cgroup.populated();
  }
}
