// The freeze's safety net. While the teardown holds processes stopped (the registered groups, the
// escapees it found), a supervisor SIGKILLed at that instant would leave them stopped for good:
// no kernel rule continues them (the orphaned-group SIGCONT is for a group whose last outside
// parent in the same session exits; these groups sit in sessions of their own and the supervisor
// is no parent of theirs). So a small shell, started once per supervisor in a group of its own,
// waits for EOF on a pipe nobody writes (its stdin: EOF when the supervisor is gone, however),
// while the teardown writes to a second pipe (its fd 3) what it is about to stop, before stopping
// it, and "clear" once the teardown is over. Only at EOF does the shell read that list, and it
// SIGKILLs what is still on it, each only while it is provably the one listed (same start time):
// stopped, they could neither exit nor have their numbers reused meanwhile. The shell never wakes
// during the teardown, so it takes no CPU from it.
// Standard library only: child_process is loaded when the watchdog is started, off the EOF path.
import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';

// Lines on fd 3: "g PGID START" (a group; START is its leader's start time or -), "p PID START"
// (one process), "c" (nothing is stopped any more). dash, bash and busybox sh all run it; it needs
// no program but the shell (read and kill are built in) and no environment.
const SCRIPT = `
set -f
read -r _
groups= procs=
while read -r verb id start; do
  case $verb in
    g) groups="$groups $id:$start" ;;
    p) procs="$procs $id:$start" ;;
    c) groups= procs= ;;
  esac
done <&3
# The start time of process $1 (field 22 of its stat, counted after the command name), or nothing.
started() {
  line=
  { read -r line < "/proc/$1/stat"; } 2>/dev/null || return 0
  set -- \${line##*) }
  echo "\${20}"
}
for entry in $groups; do
  pgid=\${entry%%:*} start=\${entry#*:} now=$(started "\${entry%%:*}")
  # A leader with another start time: the number names another group now. No leader: its
  # members hold the number (a group number is not reused while one lives).
  if [ "$start" = - ] || [ -z "$now" ] || [ "$now" = "$start" ]; then kill -s KILL -- "-$pgid" 2>/dev/null; fi
done
for entry in $procs; do
  pid=\${entry%%:*}
  [ "$(started "$pid")" = "\${entry#*:}" ] && kill -s KILL -- "$pid" 2>/dev/null
done
exit 0
`;

/** What `argv[0]` of the watchdog shows in ps. */
export const WATCHDOG_NAME = 'leash-supervisor-watchdog';

export class Watchdog {
  private child: ChildProcess | undefined;
  private list: Writable | null = null;
  private exited = false;
  private holding = false;

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
    if (this.pid !== undefined) return true;
    let child: ChildProcess;
    try {
      const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
      // The script travels in the environment, so that ps shows a short command line.
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
    });
    this.list = child.stdio[3] as Writable | null;
    for (const stream of [child.stdin, this.list]) {
      stream?.on('error', () => {});
      // Never keeps the supervisor's event loop alive.
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    }
    child.unref();
    return true;
  }

  /** Puts groups (pgid, leader start time) on the list, in one write; call before stopping them. */
  holdGroups(groups: ReadonlyArray<readonly [number, number | undefined]>): void {
    if (groups.length === 0) return;
    this.holding = true;
    let lines = '';
    for (const [pgid, leaderStartTime] of groups) lines += `g ${pgid} ${leaderStartTime ?? '-'}\n`;
    this.send(lines);
  }

  /** Puts processes on the list, in one write; call before stopping them. */
  holdProcesses(processes: ReadonlyArray<{ pid: number; startTime: number }>): void {
    if (processes.length === 0) return;
    this.holding = true;
    let lines = '';
    for (const { pid, startTime } of processes) lines += `p ${pid} ${startTime}\n`;
    this.send(lines);
  }

  /** Empties the list: nothing is held stopped any more. */
  clear(): void {
    if (this.holding) this.send('c\n');
    this.holding = false;
  }

  /** Writes a harmless line, so that the first real one runs warm code. */
  warmUp(): void {
    this.send('c\n');
  }

  private send(line: string): void {
    if (this.pid === undefined || !this.list) return;
    // A write to a pipe with room is made at once (libuv tries the write before it queues it):
    // the lines are in the pipe before the signals that follow them. The pipe (a socket pair)
    // takes about 280 small writes or 90 KB; past that, lines wait in this process and a death
    // loses them: hence one write per batch.
    this.list.write(line);
  }
}
