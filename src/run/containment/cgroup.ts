// The cgroup containment of `leash run`: the run is the union of the run's cgroup (and every
// cgroup below it) and every descendant of leash, whichever cgroup it moved to (podman's conmon
// and container processes do: the container's first process, adopted by leash, lives in a cgroup
// podman made). The cgroup's members are the kernel's record: frozen, each pid of one read of
// cgroup.procs is the member it names, and one pass of kill(2) reaches the whole tree at once.
// A descendant outside the cgroup is found by a walk from leash and signalled by identity (pid
// and start time, through a pidfd where there is one): a freeze does not hold it.
import { cgroupProcsDeep, withCgroupFrozen, type TreeCgroup } from '../../sys/cgroup.js';
import { ownProcessGroupId, signalProcess } from '../../sys/processes.js';
import { isDeadState, isStoppedState, readProcStat, type ProcStat } from '../../sys/procfs.js';
import { walkOnce } from '../../sys/tree.js';
import { signalIfSame } from '../../sys/verified-signal.js';
import type { Adoptions } from '../adoption.js';
import type { PreparedNames, StopNames } from '../stop-names.js';
import { signalThenContinue, type Containment, type Pass } from './seam.js';

export interface CgroupContainmentHost {
  /** leash's own pid: the root of the walk for descendants outside the cgroup. */
  readonly self: number;
  readonly adoptions: Adoptions;
  readonly names: StopNames;
  /** Whether `pid` is one of leash's guard processes (neither the run's nor to be signalled). */
  isGuard(pid: number): boolean;
}

/** Called with the pids a pass is about to reach, while they still have their names to read. */
type PassNames = (pids: readonly number[]) => void;

/** Up to this many members to signal, each is proven one by one rather than all frozen. */
const SIGNAL_BY_IDENTITY_MAX = 16;

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

  /** One read of the member list (the state document's count) and of leash's children (the adopted); no walk. */
  refresh(): void {
    this.refreshCount();
    this.host.adoptions.record(this.host.adoptions.readDirect());
  }

  /** One read of the member list alone. */
  refreshCount(): void {
    this.memberCount = cgroupProcsDeep(this.cgroup.directory).length;
  }

  /** Whether anything but the runner (gone by then) is left: the cgroup, or a child of leash outside it. */
  holdsDescendants(): boolean {
    return !this.isEmpty();
  }

  /**
   * The stop's first pass, and a repeated stop signal's: the whole cgroup at once (frozen), the
   * few names shown read before the signal; the outsiders come with the timers' passes.
   */
  async signalAll(signal: NodeJS.Signals): Promise<Pass> {
    let names: PreparedNames | undefined;
    const reached = await this.signalMembers(signal, (pids) => {
      names = this.host.names.prepare(signal, pids);
    });
    return { reached, name: () => names && this.host.names.logPrepared(names) };
  }

  /**
   * A later pass (the timers, while the tree dies): the phase's signal to members that came after
   * the last pass (a fork in the middle of it), and to the descendants of leash outside the cgroup.
   */
  signalNewcomers(signal: NodeJS.Signals): void {
    if (!this.cgroupEmpty() && this.hasNewcomers()) void this.signalAll(signal).then(({ name }) => name());
    this.signalOutsidersNamed(signal);
  }

  /** cgroup.kill (the names read first) and SIGKILL to each outsider, by identity. */
  killAll(): void {
    this.newPhase();
    void this.signalAll('SIGKILL').then(({ name }) => name());
    this.signalOutsidersNamed('SIGKILL');
  }

  /**
   * Job control's own signals, not the freezer: the tree sees SIGSTOP and SIGCONT as without
   * leash. Each member by identity; what someone else had stopped stays stopped.
   */
  pause(): () => void {
    const ownPgid = ownProcessGroupId();
    const stoppedBefore = new Set<number>();
    for (const pid of this.cgroup.members()) {
      const stat = readProcStat(pid);
      if (stat && isStoppedState(stat.state) && stat.pgid !== ownPgid) stoppedBefore.add(pid);
    }
    this.cgroup.signalMembers('SIGSTOP', new Set());
    return () => void this.cgroup.signalMembers('SIGCONT', stoppedBefore);
  }

  /** The phase's signal to the descendants of leash outside the cgroup, by identity, named. */
  private signalOutsidersNamed(signal: NodeJS.Signals): void {
    // Read before the signal: a process has no command line once it is gone.
    this.host.names.commands.update(this.findOutsiders());
    const sent = this.signalOutsiders(signal);
    this.host.names.nameStats(sent, signal, ' outside the cgroup');
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
  private hasNewcomers(): boolean {
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
  private async signalMembers(signal: NodeJS.Signals, names: PassNames): Promise<number> {
    // cgroup.kill needs no freeze: it reaches every member at once, even during another pass.
    if (signal === 'SIGKILL') {
      const pids = cgroupProcsDeep(this.cgroup.directory);
      this.memberCount = pids.length;
      names(pids);
      this.cgroup.kill();
      return pids.length;
    }
    if (this.passing) return 0;
    this.passing = true;
    try {
      let reached = 0;
      // A few members (a wrapped server and its launcher) are signalled at once, each by identity:
      // freezing busy multi-threaded processes first cost ~10 ms of a client-death stop (5 -> 15
      // ms, measured); past a few, the freeze is cheaper than proving each member.
      const listed = cgroupProcsDeep(this.cgroup.directory);
      if (listed.filter((pid) => !this.reached.has(pid)).length <= SIGNAL_BY_IDENTITY_MAX) return this.signalEachByIdentity(listed, signal, names);
      const frozen = await withCgroupFrozen(this.cgroup, (pids) => {
        this.memberCount = pids.length;
        const fresh = pids.filter((pid) => !this.reached.has(pid));
        // Before the signal: a default-fatal one ends a frozen task at once (and its command line).
        names(fresh);
        for (const pid of fresh) {
          this.reached.add(pid);
          if (signalThenContinue(signal, (each) => signalProcess(pid, each)) === 'sent') reached += 1;
        }
      });
      if (frozen) return reached;
      return this.signalEachByIdentity(cgroupProcsDeep(this.cgroup.directory), signal, names);
    } finally {
      this.passing = false;
    }
  }

  /** Each member of `pids` not reached yet, by identity (pinned by a pidfd, its cgroup read, then signalled). */
  private signalEachByIdentity(pids: readonly number[], signal: NodeJS.Signals, names: PassNames): number {
    this.memberCount = pids.length;
    const fresh = pids.filter((pid) => !this.reached.has(pid));
    names(fresh);
    let reached = 0;
    for (const pid of fresh) {
      this.reached.add(pid);
      if (signalThenContinue(signal, (each) => this.cgroup.signalMember(pid, each)) === 'sent') reached += 1;
    }
    return reached;
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
  private signalOutsiders(signal: NodeJS.Signals): ProcStat[] {
    const sent: ProcStat[] = [];
    for (const stat of this.findOutsiders()) {
      const key = `${stat.pid}:${stat.startTime}`;
      if (this.reachedOutside.has(key)) continue;
      this.reachedOutside.add(key);
      if (signalThenContinue(signal, (each) => signalIfSame(stat.pid, stat.startTime, each)) === 'sent') sent.push(stat);
    }
    return sent;
  }

  /**
   * Empty when the cgroup is (cgroup.events) and none of leash's children lives: every live
   * descendant outside the cgroup either has a live ancestor in it or, its ancestors all gone,
   * is leash's child (leash is a child subreaper from before the command's first fork).
   */
  isEmpty(): boolean {
    return !this.cgroup.populated() && this.host.adoptions.reap() === 0;
  }

  /** Whether the cgroup part alone is empty (its members leave in exit(), before they are reaped). */
  cgroupEmpty(): boolean {
    return !this.cgroup.populated();
  }
}
