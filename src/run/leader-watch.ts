// The process-tree guard's ear for group leaders: a pidfd of each registered group's leader,
// taken while it lives (its start time checked once the descriptor pins it), all polled at once
// on libuv's threadpool beside a wake-up pipe. A leader's exit is heard when it happens, not at
// the next walk: the guard then re-registers the group without its leader, and the supervisor
// records the members left in it (a scrubbed process carries no owner token: those records are
// what prove it the run's if leash dies right after). Without native calls, nothing is watched.
import { readSync, writeSync } from 'node:fs';
import { closeFd, makePipe, nativeLoaded, openPidfd, pollBlockingAsync } from '../sys/native.js';
import { readProcStat } from '../sys/procfs.js';

const POLLIN = 0x1;
const POLLNVAL = 0x20;
/** Leaders watched at most (one descriptor each); the walks still re-register the rest. */
export const MAX_WATCHED_LEADERS = 512;
/** Polls failing in a row (EINTR storms aside) before the watch is given up. */
const MAX_FAILED_POLLS = 16;

export class LeaderWatch {
  /** pgid -> the leader's pidfd. */
  private readonly watched = new Map<number, number>();
  /** Descriptors dropped while a poll held them: closed once it returns. */
  private readonly retired: number[] = [];
  private wake: [number, number] | undefined;
  private polling = false;
  private stopped = false;
  private failedPolls = 0;

  constructor(private readonly onLeaderExit: (pgid: number) => void) {}

  /** Watches the leader of `pgid` (pid `pgid`) if it is still the process that started at `startTime`. */
  add(pgid: number, startTime: number): void {
    if (this.stopped || this.watched.has(pgid) || this.watched.size >= MAX_WATCHED_LEADERS || !nativeLoaded()) return;
    let fd: number | undefined;
    try {
      fd = openPidfd(pgid);
    } catch {
      return; // gone already (ESRCH), or no descriptor to spare: the walks stay the fallback
    }
    if (fd === undefined) return;
    // Pinned: a leader that exited before the open would have failed it, or is a stranger now.
    if (readProcStat(pgid)?.startTime !== startTime) {
      closeFd(fd);
      return;
    }
    this.watched.set(pgid, fd);
    this.rearm();
  }

  remove(pgid: number): void {
    const fd = this.watched.get(pgid);
    if (fd === undefined) return;
    this.watched.delete(pgid);
    this.retire(fd);
    this.rearm();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const fd of this.watched.values()) this.retire(fd);
    this.watched.clear();
    if (this.polling) this.poke();
    else this.closeAll();
  }

  private retire(fd: number): void {
    if (this.polling) this.retired.push(fd);
    else closeFd(fd);
  }

  private poke(): void {
    if (!this.wake) return;
    try {
      writeSync(this.wake[1], Buffer.from([1]));
    } catch {
      // full: the poll is waking anyway
    }
  }

  /** A poll in flight is woken to take the new set; none in flight (and leaders to watch): one starts. */
  private rearm(): void {
    if (this.polling) {
      this.poke();
      return;
    }
    if (this.stopped || this.watched.size === 0) return;
    try {
      this.wake ??= makePipe();
    } catch {
      return;
    }
    const pgids = [...this.watched.keys()];
    const entries = Buffer.alloc(8 * (pgids.length + 1)); // struct pollfd { int fd; short events; short revents; }
    entries.writeInt32LE(this.wake[0], 0);
    entries.writeInt16LE(POLLIN, 4);
    pgids.forEach((pgid, index) => {
      entries.writeInt32LE(this.watched.get(pgid) as number, 8 * (index + 1));
      entries.writeInt16LE(POLLIN, 8 * (index + 1) + 4);
    });
    this.polling = true;
    const settle = (ok: boolean) => {
      this.polling = false;
      for (const fd of this.retired.splice(0)) closeFd(fd);
      if (this.stopped) {
        this.closeAll();
        return;
      }
      if (entries.readInt16LE(6) !== 0) this.drainWake();
      // A poll that keeps failing is given up: the walks stay the fallback.
      this.failedPolls = ok ? 0 : this.failedPolls + 1;
      if (!ok) {
        if (this.failedPolls < MAX_FAILED_POLLS) this.rearm();
        return;
      }
      const exited: number[] = [];
      pgids.forEach((pgid, index) => {
        const revents = entries.readInt16LE(8 * (index + 1) + 6);
        if (revents === 0 || this.watched.get(pgid) !== entries.readInt32LE(8 * (index + 1))) return;
        if (revents & POLLNVAL) return;
        exited.push(pgid);
      });
      for (const pgid of exited) {
        closeFd(this.watched.get(pgid) as number);
        this.watched.delete(pgid);
      }
      this.rearm();
      for (const pgid of exited) this.onLeaderExit(pgid);
    };
    pollBlockingAsync(entries, pgids.length + 1).then(() => settle(true), () => settle(false));
  }

  private drainWake(): void {
    if (!this.wake) return;
    const buffer = Buffer.alloc(64);
    try {
      while (readSync(this.wake[0], buffer, 0, buffer.length, null) > 0);
    } catch {
      // EAGAIN: drained
    }
  }

  private closeAll(): void {
    for (const fd of this.retired.splice(0)) closeFd(fd);
    if (this.wake) {
      closeFd(this.wake[0]);
      closeFd(this.wake[1]);
      this.wake = undefined;
    }
  }
}
