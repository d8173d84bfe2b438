// leash run's children other than the runner: the orphans it adopted as a child subreaper, which
// it must reap. Reaping rule: libuv owns the runner's exit status (waitpid(runner)); every other
// child is reaped with waitpid(thatPid), never waitpid(-1), which would steal the runner's status.
import { reapChild } from '../sys/native.js';
import { readChildren, readProcStat } from '../sys/procfs.js';
import { walkOnce } from '../sys/tree.js';

export interface AdoptionHost {
  readonly self: number;
  /** The runner while libuv still owns it (not exited yet); 0 after. */
  liveRunner(): number;
  /** Whether `pid` is one of the guard's processes (libuv reaps those). */
  isGuard(pid: number): boolean;
}

export class Adoptions {
  /** Our direct children other than the runner, by pid, with their start times. */
  adopted = new Map<number, number>();
  orphanedTotal = 0;
  reapedTotal = 0;
  reapedOrphansTotal = 0;

  constructor(private readonly host: AdoptionHost) {}

  /**
   * Reaps adopted orphans that have ended; returns how many of our children still live (the
   * guard aside, the runner included while libuv owns it). Never touches the runner then.
   */
  reap(): number {
    const { self } = this.host;
    const runner = this.host.liveRunner();
    let live = 0;
    const children = readChildren(self) ?? [...walkOnce(self).values()].filter((stat) => stat.ppid === self).map((stat) => stat.pid);
    for (const pid of children) {
      if (pid === runner) {
        live += 1;
        continue;
      }
      if (this.host.isGuard(pid)) continue;
      const result = reapChild(pid);
      if (result.state === 'exited' || result.state === 'signaled') {
        this.reapedTotal += 1;
        this.reapedOrphansTotal += 1;
        if (!this.adopted.delete(pid)) this.orphanedTotal += 1;
      } else if (result.state === 'running') {
        live += 1;
      }
    }
    return live;
  }

  /** Our direct children now (the runner and the guard aside), from a walk's or a read's list; newcomers counted. */
  record(direct: ReadonlyMap<number, number>): void {
    for (const [pid, startTime] of direct) if (this.adopted.get(pid) !== startTime) this.orphanedTotal += 1;
    this.adopted = new Map(direct);
  }

  /** Our direct children read now (no walk): a zombie is still adopted until it is reaped. */
  readDirect(): Map<number, number> {
    const runner = this.host.liveRunner();
    const direct = new Map<number, number>();
    for (const pid of readChildren(this.host.self) ?? []) {
      if (pid === runner || this.host.isGuard(pid)) continue;
      const stat = readProcStat(pid);
      if (stat) direct.set(pid, stat.startTime);
    }
    return direct;
  }
}
