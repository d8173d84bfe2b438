// The guard of a contained `leash run`: no Node, a POSIX shell reading a pipe whose only writer
// is leash. A line "release" lets it go (the tree ended normally); end of file means leash died
// (SIGKILL, the OOM killer, a crash), and the shell ends the tree's cgroup: SIGTERM to every
// member of the cgroup and of every cgroup the tree made below it while the cgroup is frozen (so
// every pid read is still a member when signalled), the grace, then cgroup.kill (or, before Linux
// 5.14, SIGKILL to each member of the frozen cgroup), and rmdir of them all, deepest first.
// Membership is the kernel's: a process that left its session and scrubbed its environment is
// still in the cgroup. It costs well under a megabyte.
//
// It ignores every signal a POSIX shell can name whose default would end it (TERM, INT, HUP,
// QUIT, USR1, USR2, ALRM, PIPE, ...): a stop that signals every process of an outer cgroup (a
// `leash run` inside another: this guard sits in the outer run's cgroup) must not end the guard
// while its leash runs. SIGKILL (and the real-time signals, SIGSTKFLT, which dash cannot name)
// still can, and leash then starts another, for as long as it lives (rate limited). It inherits, as fd 3, the cgroup's directory that leash opened and
// flocked: the lock says, for as long as the guard lives, that the cgroup is not abandoned.
import type { ChildProcess } from 'node:child_process';
import { spawn } from '../sys/child-process.js';
import { existsSync } from 'node:fs';
import type { TreeCgroup } from '../sys/cgroup.js';

/** Only shell built-ins but `sleep`, which runs during a teardown only. */
export const CGROUP_GUARD_SCRIPT = `
cg=$1 ticks=$2
trap '' TERM INT HUP QUIT USR1 USR2 ALRM PIPE VTALRM PROF XCPU XFSZ TRAP SYS ABRT IO PWR
while IFS= read -r line; do [ "$line" = release ] && exit 0; done
populated() { while read -r k v; do [ "$k" = populated ] && [ "$v" = 1 ] && return 0; done < "$cg/cgroup.events"; return 1; } 2>/dev/null
frozen() { while read -r k v; do [ "$k" = frozen ] && [ "$v" = 1 ] && return 0; done < "$cg/cgroup.events"; return 1; } 2>/dev/null
if sleep 0.0 2>/dev/null; then tick=0.1 per=1; else tick=1 per=10; fi
nap() { sleep $tick; }
each() { [ -f "$2/cgroup.procs" ] && while read -r p; do kill -"$1" "$p" 2>/dev/null; done < "$2/cgroup.procs"; for d in "$2"/*/ "$2"/.[!.]*/ "$2"/..?*/; do [ -d "$d" ] && (each "$1" "\${d%/}"); done; }
prune() { for d in "$1"/*/ "$1"/.[!.]*/ "$1"/..?*/; do [ -d "$d" ] && (prune "\${d%/}"); done; rmdir "$1" 2>/dev/null; }
freeze() { echo 1 > "$cg/cgroup.freeze" 2>/dev/null || return 1; i=0; while ! frozen && [ $i -lt 20 ]; do nap; i=$((i+1)); done; }
thaw() { echo 0 > "$cg/cgroup.freeze" 2>/dev/null; }
if populated; then
  freeze; each TERM "$cg"; thaw
  i=0; while populated && [ $i -lt "$ticks" ]; do nap; i=$((i+per)); done
  if populated; then
    if ! { echo 1 > "$cg/cgroup.kill"; } 2>/dev/null; then
      i=0; while populated && [ $i -lt 50 ]; do freeze; each KILL "$cg"; thaw; nap; i=$((i+1)); done
    fi
  fi
fi
i=0; while populated && [ $i -lt 50 ]; do nap; i=$((i+1)); done
prune "$cg"
exit 0
`;

const SHELL = existsSync('/bin/sh') ? '/bin/sh' : 'sh';
/** At most this many starts within RESTART_WINDOW_MS; the next waits RESTART_BACKOFF_MS. */
export const RESTARTS_PER_WINDOW = 5;
export const RESTART_WINDOW_MS = 10_000;
export const RESTART_BACKOFF_MS = 1000;

export class CgroupGuard {
  private child: ChildProcess | undefined;
  private released = false;
  /** When each start of the last window happened (performance.now()). */
  private recentStarts: number[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  /** Every guard process started, by pid: leash (a subreaper) must leave their reaping to libuv. */
  private readonly pids = new Set<number>();

  constructor(
    private readonly cgroup: TreeCgroup,
    private readonly graceMs: number,
    private readonly warn: (message: string) => void,
  ) {}

  /** Starts the guard; false when it could not be started (then it is tried again after a pause). */
  start(): boolean {
    if (this.released) return false;
    this.recentStarts.push(performance.now());
    let child: ChildProcess;
    try {
      // detached-spawn: ok — the guard must outlive leash: it ends the tree's cgroup when leash dies.
      child = spawn(SHELL, ['-c', CGROUP_GUARD_SCRIPT, 'leash-guard', this.cgroup.directory, String(Math.ceil(this.graceMs / 100))], {
        // Its own session: the terminal's signals and a signal to leash's group do not reach it.
        detached: true,
        // stdin is the pipe; Node's end is close-on-exec, so the tree never holds it. Fd 3 is the
        // cgroup's locked directory (the same open file description: the lock is shared).
        stdio: ['pipe', 'ignore', 'inherit', this.cgroup.lockFd ?? 'ignore'],
        env: { PATH: process.env.PATH || '/usr/bin:/bin', LC_ALL: 'C' },
      });
    } catch (error) {
      this.warn(`cannot start the cgroup guard: ${(error as Error).message}; trying again in ${RESTART_BACKOFF_MS} ms`);
      this.retryLater();
      return false;
    }
    if (child.pid === undefined) {
      child.on('error', () => undefined);
      this.warn(`cannot start the cgroup guard (${SHELL}); trying again in ${RESTART_BACKOFF_MS} ms`);
      this.retryLater();
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
      if (!this.released) this.replace();
    });
    return true;
  }

  /**
   * The guard was killed (SIGKILL, or a signal a shell cannot name): another takes its place at once, for as long as leash
   * lives; past RESTARTS_PER_WINDOW starts in RESTART_WINDOW_MS (something kills each one), after
   * a pause, said, and then again.
   */
  private replace(): void {
    const now = performance.now();
    this.recentStarts = this.recentStarts.filter((at) => now - at < RESTART_WINDOW_MS);
    if (this.recentStarts.length >= RESTARTS_PER_WINDOW) {
      this.warn(
        `the cgroup guard was ended ${this.recentStarts.length} times within ${RESTART_WINDOW_MS / 1000} s; ` +
          `the tree is unguarded for ${RESTART_BACKOFF_MS} ms, then another starts`,
      );
      this.retryLater();
      return;
    }
    if (this.start()) this.warn(`the cgroup guard exited; another one started (pid ${this.pid})`);
  }

  private retryLater(): void {
    if (this.released || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.released && !this.child && this.start()) this.warn(`another cgroup guard started (pid ${this.pid})`);
    }, RESTART_BACKOFF_MS);
    // Never what keeps leash alive: leash lives while its tree does.
    this.retryTimer.unref();
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
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const child = this.child;
    if (!child) return;
    try {
      child.stdin?.end('release\n');
    } catch {
      // it is gone already
    }
  }
}
