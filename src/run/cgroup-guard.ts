// The guard of a contained `leash run`: no Node, a POSIX shell reading a pipe whose only writer
// is leash. A line "release" lets it go (the tree ended normally); end of file means leash died
// (SIGKILL, the OOM killer, a crash), and the shell ends the tree's cgroup: SIGTERM to every
// member while the cgroup is frozen (so every pid read is still a member when signalled), the
// grace, then cgroup.kill (or, before Linux 5.14, SIGKILL to each member of the frozen cgroup),
// and rmdir. Membership is the kernel's: a process that left its session and scrubbed its
// environment is still in the cgroup. It costs well under a megabyte.
import type { ChildProcess } from 'node:child_process';
import { spawn } from '../sys/child-process.js';
import { existsSync } from 'node:fs';
import type { TreeCgroup } from '../sys/cgroup.js';

/** Only shell built-ins but `sleep`, which runs during a teardown only. */
export const CGROUP_GUARD_SCRIPT = `
cg=$1 ticks=$2
while IFS= read -r line; do [ "$line" = release ] && exit 0; done
populated() { while read -r k v; do [ "$k" = populated ] && [ "$v" = 1 ] && return 0; done < "$cg/cgroup.events"; return 1; } 2>/dev/null
frozen() { while read -r k v; do [ "$k" = frozen ] && [ "$v" = 1 ] && return 0; done < "$cg/cgroup.events"; return 1; } 2>/dev/null
if sleep 0.0 2>/dev/null; then tick=0.1 per=1; else tick=1 per=10; fi
nap() { sleep $tick; }
each() { for f in "$cg/cgroup.procs" "$cg"/*/cgroup.procs; do [ -f "$f" ] && while read -r p; do kill -"$1" "$p" 2>/dev/null; done < "$f"; done; }
freeze() { echo 1 > "$cg/cgroup.freeze" 2>/dev/null || return 1; i=0; while ! frozen && [ $i -lt 20 ]; do nap; i=$((i+1)); done; }
thaw() { echo 0 > "$cg/cgroup.freeze" 2>/dev/null; }
if populated; then
  freeze; each TERM; thaw
  i=0; while populated && [ $i -lt "$ticks" ]; do nap; i=$((i+per)); done
  if populated; then
    if ! { echo 1 > "$cg/cgroup.kill"; } 2>/dev/null; then
      i=0; while populated && [ $i -lt 50 ]; do freeze; each KILL; thaw; nap; i=$((i+1)); done
    fi
  fi
fi
i=0; while populated && [ $i -lt 50 ]; do nap; i=$((i+1)); done
rmdir "$cg" 2>/dev/null
exit 0
`;

const SHELL = existsSync('/bin/sh') ? '/bin/sh' : 'sh';
const MAX_STARTS = 4;

export class CgroupGuard {
  private child: ChildProcess | undefined;
  private released = false;
  private starts = 0;
  /** Every guard process started, by pid: leash (a subreaper) must leave their reaping to libuv. */
  private readonly pids = new Set<number>();

  constructor(
    private readonly cgroup: TreeCgroup,
    private readonly graceMs: number,
    private readonly warn: (message: string) => void,
  ) {}

  /** Starts the guard; false when it could not be started. */
  start(): boolean {
    if (this.released || this.starts >= MAX_STARTS) return false;
    this.starts += 1;
    let child: ChildProcess;
    try {
      // detached-spawn: ok — the guard must outlive leash: it ends the tree's cgroup when leash dies.
      child = spawn(SHELL, ['-c', CGROUP_GUARD_SCRIPT, 'leash-guard', this.cgroup.directory, String(Math.ceil(this.graceMs / 100))], {
        // Its own session: the terminal's signals and a signal to leash's group do not reach it.
        detached: true,
        // stdin is the pipe; Node's end is close-on-exec, so the tree never holds it.
        stdio: ['pipe', 'ignore', 'inherit'],
        env: { PATH: process.env.PATH || '/usr/bin:/bin', LC_ALL: 'C' },
      });
    } catch (error) {
      this.warn(`cannot start the cgroup guard: ${(error as Error).message}`);
      return false;
    }
    if (child.pid === undefined) {
      child.on('error', () => undefined);
      this.warn(`cannot start the cgroup guard (${SHELL})`);
      return false;
    }
    this.child = child;
    this.pids.add(child.pid);
    // detached-spawn: ok — leash's exit must not wait for its guard, which leaves on "release".
    child.unref();
    const stdin = child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null;
    stdin?.unref?.();
    stdin?.on('error', () => undefined);
    child.on('error', () => undefined);
    child.once('exit', () => {
      if (this.child !== child) return;
      this.child = undefined;
      if (this.released) return;
      // Killed by someone: another one takes its place.
      this.warn('the cgroup guard exited; starting another');
      this.start();
    });
    return true;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  isGuardPid(pid: number): boolean {
    return this.pids.has(pid);
  }

  /** Whether `release` (and anything before it) is in the guard's pipe, none left queued in Node. */
  allWritten(): boolean {
    return (this.child?.stdin?.writableLength ?? 0) === 0;
  }

  /** The tree is over: the guard exits without a teardown. */
  release(): void {
    if (this.released) return;
    this.released = true;
    const child = this.child;
    if (!child) return;
    try {
      child.stdin?.end('release\n');
    } catch {
      // it is gone already
    }
  }
}
