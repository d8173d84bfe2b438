// The freeze's safety net. While the teardown holds processes stopped (the registered groups, the
// escapees it found), a supervisor SIGKILLed at that instant would leave them stopped for good:
// no kernel rule continues them (the orphaned-group SIGCONT is for a group whose last outside
// parent in the same session exits; these groups sit in sessions of their own and the supervisor
// is no parent of theirs). So a small shell, started once per supervisor in a group of its own,
// waits for EOF on a pipe nobody writes (its stdin: EOF when the supervisor is gone, however),
// while the teardown writes to a second pipe (its fd 3) what it is about to stop, before stopping
// it, and during the grace what has gone (its number may be reused). Only at EOF does the shell
// read that list, and it SIGKILLs what is still on it, each only while it is provably the one
// listed (same start time): stopped, they could neither exit nor have their numbers reused
// meanwhile. The shell never wakes during the teardown, so it takes no CPU from it. Nothing is
// stopped on the strength of a line the pipe did not take (it would die with the supervisor); a
// list that can no longer be kept true, and the shell at the end of the teardown, are retired
// (SIGKILL to our own unreaped child). A shell that dies while it guards is started again.
// Standard library only: child_process is loaded when the watchdog is started, off the EOF path.
import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';

// Lines on fd 3: "g PGID START" (a group; START is its leader's start time or -), "p PID START"
// (one process), "w PGID PID START" (a group held by a member, its witness: the group while that
// process is alive with that start time and still in it, since a number is not reused while a
// member holds it; and the process itself), "G PGID" and "P PID" (gone: emptied or exited, so its
// number may be reused and must not be signalled), "c" (nothing is stopped any more). A last
// line without its line break (the writer died in the middle of it) is never acted on: read fails
// on it. dash, bash and busybox sh all run it; it needs no program but the shell (read and kill
// are built in) and no environment.
const SCRIPT = `
set -f
read -r _
groups= procs= wits= gone=" "
while read -r verb id start more; do
  case $verb in
    g) groups="$groups $id:$start" ;;
    p) procs="$procs $id:$start" ;;
    w) wits="$wits $id:$start:$more" ;;
    G) gone="$gone-$id " ;;
    P) gone="$gone$id " ;;
    c) groups= procs= wits= gone=" " ;;
  esac
done <&3
# The group and start time of process $1, "PGID:START" (fields 5 and 22 of its stat, counted
# after the command name), or nothing.
ident() {
  line=
  { read -r line < "/proc/$1/stat"; } 2>/dev/null || return 0
  set -- \${line##*) }
  echo "\$3:\${20}"
}
for entry in $groups; do
  pgid=\${entry%%:*} start=\${entry#*:} now=$(ident "\${entry%%:*}")
  now=\${now#*:}
  case $gone in *" -$pgid "*) continue ;; esac
  # By number only while the leader is the one listed: without it the number may name a
  # stranger's group (such a group is held by its members, listed as w lines).
  if [ "$start" = - ] || [ "$now" = "$start" ]; then kill -s KILL -- "-$pgid" 2>/dev/null; fi
done
for entry in $wits; do
  pgid=\${entry%%:*} rest=\${entry#*:}
  pid=\${rest%%:*} start=\${rest#*:}
  case $gone in *" $pid "*) continue ;; esac
  now=$(ident "$pid")
  [ "\${now#*:}" = "$start" ] || continue
  case $gone in *" -$pgid "*) ;; *) [ "\${now%%:*}" = "$pgid" ] && kill -s KILL -- "-$pgid" 2>/dev/null ;; esac
  kill -s KILL -- "$pid" 2>/dev/null
done
for entry in $procs; do
  pid=\${entry%%:*}
  case $gone in *" $pid "*) continue ;; esac
  now=$(ident "$pid")
  [ "\${now#*:}" = "\${entry#*:}" ] && kill -s KILL -- "$pid" 2>/dev/null
done
exit 0
`;

/** What `argv[0]` of the watchdog shows in ps. */
export const WATCHDOG_NAME = 'leash-supervisor-watchdog';

export class Watchdog {
  private child: ChildProcess | undefined;
  private list: Writable | null = null;
  private listFd: number | undefined;
  private exited = false;
  private retired = false;

  /**
   * Called when the shell ends while it was meant to run (killed by someone, or /bin/sh failed):
   * the owner may start it again. Not called once retired.
   */
  constructor(private readonly onLost: () => void = () => {}) {}

  /** The shell's pid while it runs. */
  get pid(): number | undefined {
    return this.child && !this.exited ? this.child.pid : undefined;
  }

  /**
   * Starts the shell unless it runs. False when it cannot be had (no /bin/sh): the freeze is then
   * uncovered. Costs a few milliseconds (loading child_process, fork and exec): never on the
   * path from EOF to the first signal.
   */
  start(): boolean {
    if (this.retired) return false;
    if (this.pid !== undefined) return true;
    let child: ChildProcess;
    try {
      const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
      // The script travels in the environment, so that ps shows a short command line.
      // detached-spawn: ok — the watchdog must survive a kill of the supervisor's group: when the supervisor dies it finishes the supervisor's work on the listed groups, then exits.
      child = spawn('/bin/sh', ['-c', 'eval "$LEASH_WATCHDOG"', WATCHDOG_NAME], {
        // Its own group: a killpg of the supervisor's group does not take it too. No environment:
        // the script alone: not the owner token, nor anything a scan might take for the owner's.
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore', 'pipe'],
        env: { LEASH_WATCHDOG: SCRIPT },
        cwd: '/',
      });
    } catch {
      return false;
    }
    if (child.pid === undefined) {
      child.on('error', () => {});
      return false;
    }
    this.child = child;
    this.exited = false;
    // Its wake-ups (a line read byte by byte at the freeze) must not take the CPU from the
    // teardown on a busy machine; it has real work only once the supervisor is gone.
    try {
      setPriority(child.pid, 19);
    } catch {
      // Not allowed here: it runs at our priority.
    }
    child.on('error', () => {});
    child.on('exit', () => {
      this.exited = true;
      if (!this.retired) this.onLost();
    });
    this.list = child.stdio[3] as Writable | null;
    // The list's descriptor, written with one write(2) while nothing waits in the stream: the
    // stream's own path runs code that never ran before, about 0.15 ms the first time, and the
    // first write comes between the owner's death and the first signal. Node exposes it on its pipe
    // handle; a runtime that does not keeps the stream.
    const fd = (this.list as unknown as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
    this.listFd = typeof fd === 'number' && fd > 2 ? fd : undefined;
    for (const stream of [child.stdin, this.list]) {
      stream?.on('error', () => {});
      // Never keeps the supervisor's event loop alive.
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    }
    // detached-spawn: ok — the supervisor's exit must not wait for its watchdog, which finishes and exits once its stdin closes.
    child.unref();
    return true;
  }

  /**
   * Puts groups (pgid, leader start time) on the list, in one write; call before stopping them.
   * False when the list did not take it all at once: what is not in the pipe dies with this
   * process, so the caller must not stop them.
   */
  holdGroups(groups: ReadonlyArray<readonly [number, number | undefined]>): boolean {
    if (groups.length === 0) return true;
    let lines = '';
    for (const [pgid, leaderStartTime] of groups) lines += `g ${pgid} ${leaderStartTime ?? '-'}\n`;
    return this.send(lines);
  }

  /**
   * Puts groups on the list by a member each (a witness: see the script), in one write; for a
   * group whose leader is gone, which a `g` line cannot hold. The member itself is held too, as by
   * holdProcesses. False as for holdGroups.
   */
  holdGroupsByWitness(witnesses: ReadonlyArray<{ pgid: number; pid: number; startTime: number }>): boolean {
    if (witnesses.length === 0) return true;
    let lines = '';
    for (const { pgid, pid, startTime } of witnesses) lines += `w ${pgid} ${pid} ${startTime}\n`;
    return this.send(lines);
  }

  /** Puts processes on the list, in one write; call before stopping them. False as for holdGroups. */
  holdProcesses(processes: ReadonlyArray<{ pid: number; startTime: number }>): boolean {
    if (processes.length === 0) return true;
    let lines = '';
    for (const { pid, startTime } of processes) lines += `p ${pid} ${startTime}\n`;
    return this.send(lines);
  }

  /**
   * Takes off the list groups that emptied and processes that exited: their numbers are free for
   * reuse, and the shell must never signal what now holds one. False when the lines did not reach
   * the pipe: the list can no longer be kept true, so the caller retires the watchdog.
   */
  forget(pgids: readonly number[], pids: readonly number[]): boolean {
    if (pgids.length === 0 && pids.length === 0) return true;
    let lines = '';
    for (const pgid of pgids) lines += `G ${pgid}\n`;
    for (const pid of pids) lines += `P ${pid}\n`;
    return this.send(lines);
  }

  /**
   * Ends the shell: for good at the end of a teardown (nothing is held stopped, nothing is left to
   * do), or when its list cannot be kept true. It is our child and not yet reaped (its exit is
   * seen only once it is), so its number is its own: the signal cannot reach anyone else.
   */
  retire(): void {
    this.retired = true;
    if (this.pid !== undefined) this.child?.kill('SIGKILL');
  }

  /** Writes a harmless line, so that the first real one runs warm code. */
  warmUp(): void {
    this.send('c\n');
  }

  /** Whether the line is in the pipe now (not waiting in this process). */
  private send(line: string): boolean {
    if (this.pid === undefined || !this.list) return false;
    // A write to a pipe with room is made at once (libuv tries the write before it queues it):
    // the lines are in the pipe before the signals that follow them. The pipe (a socket pair)
    // takes about 280 small writes or 90 KB; past that, lines wait in this process and a death
    // loses them: hence one write per batch, and the answer, so that nothing is stopped on the
    // strength of a line still queued here (a chain of escapees, one write per link, fills it).
    // Closed with the shell's death (before its exit is seen): the number may name another file now.
    if ((this.list as { destroyed?: boolean }).destroyed) return false;
    if (this.listFd !== undefined && this.list.writableLength === 0) {
      let written = -1;
      try {
        written = writeSync(this.listFd, line);
      } catch (error) {
        // A full pipe: the stream below takes the line. Anything else (Deno's fs refuses a
        // descriptor it did not open, EBADF) ends the direct path: the stream has it from now on.
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') written = 0;
        else this.listFd = undefined;
      }
      if (written === line.length) return true; // the lines are ASCII: one byte per character
      if (written >= 0) {
        // The rest waits in the stream, behind what the pipe took: the order of the lines is kept.
        this.list.write(line.slice(written));
        return false;
      }
    }
    this.list.write(line);
    return this.list.writableLength === 0;
  }
}
