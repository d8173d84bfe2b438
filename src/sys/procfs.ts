// Everything leash reads from Linux procfs lives here, so it is parsed one way only.
// Standard library only: the death supervisor imports this file.
import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { readProcText, readSmallProcText } from './proc-text.js';

/** The identity fields of one process, from /proc/<pid>/stat. */
export interface ProcStat {
  pid: number;
  /** One-letter scheduler state; 'Z' is a zombie, 'X' is dead. */
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
  /** Start time in clock ticks since boot (field 22): with the pid, it names one process. */
  startTime: number;
  /** CPU time used so far, user plus system, in clock ticks (fields 14 and 15). */
  cpuTicks: number;
}

let procfsPresent: boolean | undefined;

/** True where /proc is a Linux procfs with per-process stat files. */
export function hasProcfs(): boolean {
  if (procfsPresent === undefined) {
    try {
      procfsPresent = statSync('/proc/self/stat').isFile();
    } catch {
      procfsPresent = false;
    }
  }
  return procfsPresent;
}

/**
 * The fields of a /proc/<pid>/stat line from field 3 (the state) on: field N is fields[N - 3].
 * The command name (field 2) may hold spaces and parentheses, so they start after the last ')'.
 */
function statFields(text: string): string[] | undefined {
  const close = text.lastIndexOf(')');
  return close < 0 ? undefined : text.slice(close + 2).trimEnd().split(' ');
}

/** One read of /proc/<pid>/stat, as its fields (statFields); undefined when gone or unreadable. */
function readStatFields(pid: number): string[] | undefined {
  try {
    return statFields(readSmallProcText(`/proc/${pid}/stat`));
  } catch {
    return undefined;
  }
}

/** Parses the text of a /proc/<pid>/stat file; undefined when it is not one. */
export function parseProcStat(pid: number, text: string): ProcStat | undefined {
  const fields = statFields(text);
  return fields && statOf(pid, fields);
}

function statOf(pid: number, fields: readonly string[]): ProcStat | undefined {
  const state = fields[0];
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const sid = Number(fields[3]);
  const startTime = Number(fields[19]);
  const cpuTicks = Number(fields[11]) + Number(fields[12]);
  if (!state || !Number.isInteger(ppid) || !Number.isInteger(pgid) || !Number.isInteger(startTime)) {
    return undefined;
  }
  return { pid, state, ppid, pgid, sid, startTime, cpuTicks };
}

/** The stat of one process, or undefined when it is gone or unreadable (read through the shared reused buffer). */
export function readProcStat(pid: number | 'self'): ProcStat | undefined {
  let text: string;
  try {
    text = readSmallProcText(`/proc/${pid}/stat`); // one read(): a stat line is far under a page
  } catch {
    return undefined;
  }
  return parseProcStat(pid === 'self' ? process.pid : pid, text);
}

/** A process's stat and its thread count (field 20). */
export interface ProcStatWithThreads extends ProcStat {
  threads: number;
}

/**
 * readProcStat plus the thread count, in one read() of the file: for the supervisor's teardown,
 * where every system call sits between the owner's death and the first SIGTERM.
 */
export function readProcStatWithThreads(pid: number): ProcStatWithThreads | undefined {
  const fields = readStatFields(pid);
  const stat = fields && statOf(pid, fields);
  if (!stat) return undefined;
  const threads = Number(fields![17]); // field 20
  return { ...stat, threads: Number.isInteger(threads) && threads > 0 ? threads : 0 };
}

/**
 * Whether a process is on its way out as a whole, read as the kernel means it from its main
 * thread's exit_code (field 52; Linux 3.5+) once that thread is a zombie:
 * - a signal status (low 7 bits set): the process was killed, every thread goes (a SIGKILLed
 *   process with many threads is in that state for milliseconds to tens of ms, each thread needing
 *   a CPU to exit, before its children are reparented);
 * - an exit status: exit_group() makes every other thread leave too (each gets SIGKILL pending),
 *   but a raw exit(2) of the main thread alone leaves the others running (measured: Z with 512
 *   while two threads run on): ending only when no other thread is left that is not being killed;
 * - 0: the main thread ended alone (pthread_exit, or another thread's execve): not ending.
 * False where the field is hidden (another user's process) or missing. With `startTime`, only the
 * process that started then counts (read from the same stat line): a reused pid is false.
 */
export function processIsEnding(pid: number, startTime?: number): boolean {
  const fields = readStatFields(pid);
  if (fields?.[0] !== 'Z') return false;
  if (startTime !== undefined && Number(fields[19]) !== startTime) return false; // field 22
  const exitCode = Number(fields[49]); // field 52, the last
  if (!Number.isInteger(exitCode) || exitCode === 0) return false;
  if ((exitCode & 0x7f) !== 0) return true;
  return !hasThreadLivingOn(pid);
}

/** SIGKILL's bit in a SigPnd mask: exit_group() and a fatal signal set it in every other thread. */
const SIGKILL_PENDING = 1n << 8n;

/** Whether a thread of `pid` other than its main one is alive and not being killed. */
function hasThreadLivingOn(pid: number): boolean {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  for (const tid of tids) {
    if (tid === String(pid)) continue;
    let status: string;
    try {
      status = readProcText(`/proc/${pid}/task/${tid}/status`);
    } catch {
      continue; // gone
    }
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    if (state === undefined || isDeadState(state)) continue;
    const pending = /^SigPnd:\s+([0-9a-f]+)$/m.exec(status)?.[1];
    if (pending !== undefined && (BigInt(`0x${pending}`) & SIGKILL_PENDING) !== 0n) continue;
    return true;
  }
  return false;
}

/** PF_KTHREAD in the flags of a stat line (field 9): a kernel thread. */
const PF_KTHREAD = 0x00200000;

/**
 * Whether a process runs code of its own image: alive (not a zombie) and not a kernel thread
 * (PF_KTHREAD in its stat flags; not "a child of pid 2": in a pid namespace pid 2 is an ordinary
 * process, often the one that started everything else). One read of its stat.
 */
export function isLiveUserProcess(pid: number): boolean {
  const fields = readStatFields(pid);
  if (!fields || fields[0] === undefined || isDeadState(fields[0])) return false;
  const flags = Number(fields[6]); // field 9
  return Number.isInteger(flags) && (flags & PF_KTHREAD) === 0;
}

/**
 * The file status flags of one of this process's descriptors (open(2)'s O_* bits, as fcntl
 * F_GETFL gives them), from /proc/self/fdinfo; undefined where that cannot be read.
 */
export function readOwnFdFlags(fd: number): number | undefined {
  let text: string;
  try {
    text = readSmallProcText(`/proc/self/fdinfo/${fd}`);
  } catch {
    return undefined;
  }
  const octal = /^flags:\s+([0-7]+)$/m.exec(text)?.[1];
  return octal === undefined ? undefined : parseInt(octal, 8);
}

/**
 * read(2)'s number as /proc/<pid>/task/<tid>/syscall shows it, by Node's process.arch. The
 * newer ports share the generic table (63); an architecture not listed is never proven idle.
 */
const READ_SYSCALL: Readonly<Record<string, number>> = { x64: 0, ia32: 3, arm: 3, ppc64: 3, s390x: 3, arm64: 63, riscv64: 63, loong64: 63 };

/**
 * Whether another thread of this process sleeps inside read(2) on `fd`, or on a copy of it (Deno
 * reads stdin through one), with nothing to read: then every byte that came before is out of the
 * descriptor, and nothing has come since. Three looks at the thread: its syscall line (which the
 * kernel gives only while the thread is off the CPU) names that read; its state is 'S' (a thread
 * that data has just woken is TASK_WAKING, which its stat shows as 'R' while its syscall line
 * still names the read); its syscall line names the read again. The caller (the main thread,
 * synchronously) issues no read meanwhile, so the thread cannot have left that read and entered
 * another between the looks. False where that cannot be told (no procfs, an architecture not in
 * the table).
 */
export function threadSleepsInRead(fd: number): boolean {
  const read = READ_SYSCALL[process.arch];
  if (read === undefined) return false;
  const own = String(process.pid);
  // The thread found last time, and what the descriptor named then, are looked at first: each
  // /proc path costs tens of microseconds the first time after a pause, and this check stands
  // between the owner's death and the first SIGTERM (the supervisor has one thread-pool thread).
  const cached = lastReader?.fd === fd ? lastReader : undefined;
  let target = cached?.target;
  if (cached && sleepsInRead(cached.tid, read, target!, new Map([[fd, true]]))) return true;
  let tids: string[];
  try {
    target = readlinkSync(`/proc/self/fd/${fd}`);
    tids = readdirSync('/proc/self/task');
  } catch {
    return false;
  }
  const sameFile = new Map<number, boolean>([[fd, true]]);
  for (const tid of tids) {
    if (tid === own || tid === cached?.tid) continue; // the main thread (the caller): its line names this very read
    if (sleepsInRead(tid, read, target, sameFile)) {
      lastReader = { fd, tid, target };
      return true;
    }
  }
  return false;
}

/** The thread last proven asleep in a read of a descriptor, and the file that descriptor named. */
let lastReader: { fd: number; tid: string; target: string } | undefined;

/** Thread `tid` of this process, by the three looks threadSleepsInRead describes. */
function sleepsInRead(tid: string, read: number, target: string, sameFile: Map<number, boolean>): boolean {
  const readsTarget = (): boolean => {
    let line: string;
    try {
      line = readSmallProcText(`/proc/self/task/${tid}/syscall`);
    } catch {
      return false;
    }
    const space = line.indexOf(' ');
    if (space < 0 || Number(line.slice(0, space)) !== read) return false;
    const readFd = Number(line.slice(space + 1, line.indexOf(' ', space + 1)));
    let same = sameFile.get(readFd);
    if (same === undefined) {
      try {
        same = readlinkSync(`/proc/self/fd/${readFd}`) === target;
      } catch {
        same = false;
      }
      sameFile.set(readFd, same);
    }
    return same;
  };
  if (!readsTarget()) return false;
  let state: string | undefined;
  try {
    state = statFields(readSmallProcText(`/proc/self/task/${tid}/stat`))?.[0];
  } catch {
    return false;
  }
  return state === 'S' && readsTarget();
}

/** A zombie (or a task being torn down) runs no code and holds no resources but its pid. */
export function isDeadState(state: string): boolean {
  return state === 'Z' || state === 'X' || state === 'x';
}

/** Every numeric entry of /proc: the pids visible in this pid namespace. */
export function listPids(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const pid = Number(name);
    if (Number.isInteger(pid)) pids.push(pid);
  }
  return pids;
}

/** A snapshot of every readable process's stat. Costs ~10 ms with ~600 processes. */
export function scanAllStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const pid of listPids()) {
    const stat = readProcStat(pid);
    if (stat) stats.push(stat);
  }
  return stats;
}

/**
 * The direct children of a process, from /proc/<pid>/task/<tid>/children of every thread
 * (the file is per thread). Undefined when the kernel has no such file, so callers can fall
 * back to a full scan; an empty array when the process is gone or childless.
 */
export function readChildren(pid: number): number[] | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const tid of tids) {
    let text: string;
    try {
      text = readProcText(`/proc/${pid}/task/${tid}/children`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && tid === String(pid)) {
        // The main thread has no children file: this kernel lacks CONFIG_PROC_CHILDREN.
        try {
          statSync(`/proc/${pid}/task/${tid}`);
          return undefined;
        } catch {
          return [];
        }
      }
      continue;
    }
    for (const word of text.split(' ')) {
      if (word.length === 0) continue;
      const child = Number(word);
      if (Number.isInteger(child)) children.push(child);
    }
  }
  return children;
}

/**
 * The direct children of a process whose thread count is known (from its stat): a
 * single-threaded one has a single children file, so its task directory need not be listed.
 * Same answers as readChildren, with one read() per file. Meant for processes that cannot start
 * threads meanwhile (stopped); with a count of 0 (unknown) every thread is read.
 */
export function readChildrenOfThreads(pid: number, threads: number): number[] | undefined {
  if (threads !== 1) return readChildren(pid);
  let text: string;
  try {
    text = readSmallProcText(`/proc/${pid}/task/${pid}/children`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return [];
    // No children file for a live main thread: this kernel lacks CONFIG_PROC_CHILDREN.
    return readChildren(pid);
  }
  const children: number[] = [];
  let start = 0;
  for (;;) {
    const end = text.indexOf(' ', start);
    if (end < 0) break;
    children.push(Number(text.slice(start, end)));
    start = end + 1;
  }
  return children;
}

/** A job-control or tracing stop: the thread runs no code until SIGCONT (or SIGKILL). */
export function isStoppedState(state: string): boolean {
  return state === 'T' || state === 't';
}

/**
 * The direct children of a process once every one of its threads is stopped (or dead): then no
 * fork of it is in flight, and the list is final until it is continued. 'running' while a thread
 * still runs (a SIGSTOP just sent takes effect when each thread next leaves the kernel: a fork in
 * progress completes first, and its child is listed only then). Undefined where the kernel has
 * no children files; an empty array when the process is gone.
 */
export function readChildrenOnceStopped(pid: number): number[] | 'running' | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  for (const tid of tids) {
    let text: string;
    try {
      text = readSmallProcText(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      continue; // the thread has just exited
    }
    const state = parseProcStat(Number(tid), text)?.state ?? 'X';
    if (!isStoppedState(state) && !isDeadState(state)) return 'running';
  }
  return readChildren(pid);
}

/** The uid that owns a process (the owner of its /proc directory), or undefined when gone. */
export function processUid(pid: number): number | undefined {
  try {
    return statSync(`/proc/${pid}`).uid;
  } catch {
    return undefined;
  }
}

/**
 * Whether a process has a handler installed for every one of `signals` (the SigCgt mask of
 * /proc/<pid>/status): how a caller knows that a process it just started is past installing
 * its handlers. False when the process is gone or the file cannot be read.
 */
export function catchesSignals(pid: number, signals: readonly number[]): boolean {
  let mask: bigint;
  try {
    const line = readProcText(`/proc/${pid}/status`).split('\n').find((l) => l.startsWith('SigCgt:'));
    if (!line) return false;
    mask = BigInt(`0x${line.slice('SigCgt:'.length).trim()}`);
  } catch {
    return false;
  }
  return signals.every((signal) => (mask >> BigInt(signal - 1)) & 1n);
}

/**
 * Whether the initial environment of a process holds exactly the entry `needle`
 * (for example `NAME=value`). False when it cannot be read.
 */
export function environHasEntry(pid: number, needle: string): boolean {
  return environEntryState(pid, needle) === 'present';
}

/**
 * environHasEntry, telling apart an environment that reads as nothing at all ('empty'). That is
 * what a kernel thread and a process started with no environment show, and, for an instant, a
 * process in the middle of an execve: between the switch to the new image's memory and the
 * kernel's copy of its strings, the environment reads empty (a `setsid sleep` that becomes
 * `sleep` carries its token again a moment later). 'unreadable' when gone or not ours to read.
 */
export function environEntryState(pid: number, needle: string): 'present' | 'absent' | 'empty' | 'unreadable' {
  let raw: Buffer;
  try {
    raw = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return 'unreadable';
  }
  if (raw.length === 0) return 'empty';
  const wanted = Buffer.from(needle + '\0', 'latin1');
  let at = raw.indexOf(wanted);
  while (at >= 0) {
    // Only a whole entry counts: it must start the buffer or follow a NUL.
    if (at === 0 || raw[at - 1] === 0) return 'present';
    at = raw.indexOf(wanted, at + 1);
  }
  // The last entry may lack its terminating NUL.
  const tail = Buffer.from(needle, 'latin1');
  const last = raw.length >= tail.length && raw.subarray(raw.length - tail.length).equals(tail) &&
    (raw.length === tail.length || raw[raw.length - tail.length - 1] === 0);
  return last ? 'present' : 'absent';
}

/** The argument vector of a process, or undefined when gone (kernel threads have none). */
export function readCommandLine(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (raw.length === 0) return undefined;
    return raw.replace(/\0$/, '').split('\0');
  } catch {
    return undefined;
  }
}

/**
 * Clock ticks per second of /proc/<pid>/stat times. The kernel reports them in USER_HZ, which
 * is 100 on every architecture Node runs on (Node has no sysconf to ask).
 */
export const CLOCK_TICKS_PER_SECOND = 100;

/** Seconds since boot, from /proc/uptime; undefined where it cannot be read. */
export function readUptimeSeconds(): number | undefined {
  try {
    const seconds = Number(readFileSync('/proc/uptime', 'latin1').split(' ')[0]);
    return Number.isFinite(seconds) ? seconds : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) of this process's children it has waited for (cutime + cstime of /proc/self/stat); undefined without /proc. */
export function waitedChildrenCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'latin1');
    // After the name, state is field 3: cutime (16) and cstime (17) are at 13 and 14 here.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

/** The value of one variable in the initial environment of a process, or undefined. */
export function readEnvironVariable(pid: number, name: string): string | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined;
  }
  const prefix = `${name}=`;
  for (const entry of raw.split('\0')) {
    if (entry.startsWith(prefix)) return entry.slice(prefix.length);
  }
  return undefined;
}

/** The kernel's fixed inode number of the initial pid namespace (PROC_PID_INIT_INO). */
const INITIAL_PID_NAMESPACE_INODE = 0xeffffffc;

/**
 * Whether this process runs in a pid namespace other than the machine's first one (a container,
 * a sandbox): processes of the outer namespaces, and the pipe ends they hold, are invisible here.
 * undefined where it cannot be told.
 */
export function pidNamespaceIsNested(): boolean | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid') !== `pid:[${INITIAL_PID_NAMESPACE_INODE}]`;
  } catch {
    return undefined;
  }
}

/** pidNamespaceIsNested, with a namespace that cannot be told counted as not nested. */
export function inNestedPidNamespace(): boolean {
  return pidNamespaceIsNested() === true;
}
