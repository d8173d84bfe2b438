// The syscalls Node lacks, through koffi. This is the only file that loads koffi, and it does so
// lazily (dynamic import on first use), so commands that never need a syscall never pay for it.
// Linux only: every wrapper reports "unsupported" rather than throwing elsewhere.
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { pauseSync } from './wait.js';

const PR_SET_PDEATHSIG = 1;
const PR_SET_CHILD_SUBREAPER = 36;
const PR_GET_CHILD_SUBREAPER = 37;
const WNOHANG = 1;
// x86-64 and arm64 (asm-generic) share these numbers; pidfds arrived in Linux 5.3.
const SYS_PIDFD_SEND_SIGNAL = 424;
const SYS_PIDFD_OPEN = 434;

/** What a failed call left in errno, by name (EPERM, ESRCH, ...), or 'unsupported'. */
export class NativeError extends Error {
  constructor(readonly call: string, readonly code: string, readonly errno: number) {
    super(`${call} failed: ${code}`);
  }
}

interface Bindings {
  errno: () => number;
  prctl: (option: number, a2: number, a3: number, a4: number, a5: number) => number;
  prctlGet: (option: number, out: number[], a3: number, a4: number, a5: number) => number;
  getppid: () => number;
  waitpid: (pid: number, status: number[], options: number) => number;
  syscall3: (nr: number, a: number, b: number, c: number) => number;
  syscall4: (nr: number, a: number, b: number, c: number, d: number) => number;
  close: (fd: number) => number;
  socket: (domain: number, type: number, protocol: number) => number;
  send: (fd: number, buffer: Buffer, length: number, flags: number) => number;
  recv: (fd: number, buffer: Buffer, length: number, flags: number) => number;
  pipe2: (fds: Buffer, flags: number) => number;
  tee: (fdIn: number, fdOut: number, length: number, flags: number) => number;
  poll: ((fds: Buffer, count: number, timeoutMs: number) => number) & {
    async: (fds: Buffer, count: number, timeoutMs: number, done: (error: unknown, result: number) => void) => void;
  };
  getxattr: (path: string, name: string, value: Buffer, size: number) => number;
  exit: (status: number) => void;
  fcntl: (fd: number, cmd: number, arg: number) => number;
}

let bindings: Bindings | undefined;
let loadFailure: string | undefined;
/** libc as koffi loaded it: the calls few runs need are bound on their first use (lazyCall). */
let libc: { func: (declaration: string) => unknown } | undefined;
const lazyCalls = new Map<string, unknown>();

const errnoNames = new Map<number, string>(
  Object.entries(constants.errno).map(([name, number]) => [number, name]),
);

function errnoName(errno: number): string {
  return errnoNames.get(errno) ?? `errno ${errno}`;
}

type Koffi = typeof import('koffi');

/** Loads koffi and binds libc once. Resolves false (with a reason) where that is impossible. */
export async function loadNative(): Promise<boolean> {
  if (bindings) return true;
  if (loadFailure !== undefined || !nativePlatform()) return false;
  try {
    bindLibc((await import('koffi')) as Koffi & { default?: Koffi });
    return true;
  } catch (error) {
    loadFailure = error instanceof Error ? error.message : String(error);
    return false;
  }
}

/**
 * loadNative without the event loop: require() reads the files on this thread. For a process
 * whose only thread-pool thread sits in a blocking read (the death supervisor), where import()
 * would wait behind that read.
 */
export function loadNativeSync(): boolean {
  if (bindings) return true;
  if (loadFailure !== undefined || !nativePlatform()) return false;
  try {
    bindLibc(createRequire(import.meta.url)('koffi') as Koffi & { default?: Koffi });
    return true;
  } catch (error) {
    loadFailure = error instanceof Error ? error.message : String(error);
    return false;
  }
}

function nativePlatform(): boolean {
  if (process.platform === 'linux') return true;
  loadFailure = `no native calls on ${process.platform}`;
  return false;
}

function bindLibc(loaded: Koffi & { default?: Koffi }): void {
  const koffi = loaded.default ?? loaded;
  let library;
  try {
    library = koffi.load('libc.so.6');
  } catch {
    library = koffi.load(null as unknown as string); // musl: the process's own symbols
  }
  // Kept for the calls bound on first use (flock, setxattr, inotify: cgroup ownership).
  libc = library as unknown as { func: (declaration: string) => unknown };
  bindings = {
    errno: () => koffi.errno(),
    prctl: library.func('int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)'),
    prctlGet: library.func('int prctl(int option, _Out_ int *out, unsigned long a3, unsigned long a4, unsigned long a5)'),
    getppid: library.func('int getppid()'),
    waitpid: library.func('int waitpid(int pid, _Out_ int *status, int options)'),
    syscall3: library.func('long syscall(long nr, long a, long b, long c)'),
    syscall4: library.func('long syscall(long nr, long a, long b, long c, long d)'),
    close: library.func('int close(int fd)'),
    socket: library.func('int socket(int domain, int type, int protocol)'),
    send: library.func('long send(int fd, void *buf, size_t len, int flags)'),
    recv: library.func('long recv(int fd, _Inout_ void *buf, size_t len, int flags)'),
    pipe2: library.func('int pipe2(_Inout_ void *fds, int flags)'),
    tee: library.func('long tee(int fd_in, int fd_out, size_t len, unsigned int flags)'),
    poll: library.func('int poll(_Inout_ void *fds, unsigned long nfds, int timeout)'),
    getxattr: library.func('long getxattr(const char *path, const char *name, _Inout_ void *value, size_t size)'),
    exit: library.func('void _exit(int status)'),
    fcntl: library.func('int fcntl(int fd, int cmd, int arg)'),
  } as unknown as Bindings;
}

/** Whether loadNative() has succeeded. */
export function nativeLoaded(): boolean {
  return bindings !== undefined;
}

/** Why loadNative() failed, for a warning. */
export function nativeLoadFailure(): string | undefined {
  return loadFailure;
}

function native(call: string): Bindings {
  if (!bindings) throw new NativeError(call, 'unsupported', 0);
  return bindings;
}

/** A libc call bound on first use (each binding costs start-up time that most runs never need). */
function lazyCall<T>(call: string, declaration: string): T {
  native(call);
  let bound = lazyCalls.get(declaration);
  if (bound === undefined) {
    bound = libc!.func(declaration);
    lazyCalls.set(declaration, bound);
  }
  return bound as T;
}

function check(call: string, result: number): number {
  if (result < 0) {
    const errno = native(call).errno();
    throw new NativeError(call, errnoName(errno), errno);
  }
  return result;
}

/** Makes orphans below this process come to it rather than to init. Not inherited by children. */
export function setChildSubreaper(): void {
  check('prctl(PR_SET_CHILD_SUBREAPER)', native('prctl').prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
}

export function isChildSubreaper(): boolean {
  const out = [0];
  check('prctl(PR_GET_CHILD_SUBREAPER)', native('prctl').prctlGet(PR_GET_CHILD_SUBREAPER, out, 0, 0, 0));
  return out[0] !== 0;
}

/**
 * Asks the kernel to send `signal` when our parent goes away. The kernel ties this to the parent
 * *thread* that forked us, and sends it again on every reparenting: callers must confirm with
 * getppid() that the parent process really is gone.
 */
export function setParentDeathSignal(signal: number): void {
  check('prctl(PR_SET_PDEATHSIG)', native('prctl').prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0));
}

/** The live parent pid (as Node's process.ppid, which calls getppid() at each read). */
export function getParentPid(): number {
  return native('getppid').getppid();
}

/** The outcome of waitpid(pid, WNOHANG) on one specific child. */
export type WaitResult =
  | { state: 'running' }
  | { state: 'exited'; code: number }
  | { state: 'signaled'; signal: number }
  | { state: 'not-a-child' };

/** Reaps `pid` if it has ended. Only ever for a pid we know libuv does not own. */
export function reapChild(pid: number): WaitResult {
  const status = [0];
  const calls = native('waitpid');
  for (;;) {
    const result = calls.waitpid(pid, status, WNOHANG);
    if (result === 0) return { state: 'running' };
    if (result > 0) {
      const raw = status[0] ?? 0;
      const low = raw & 0x7f;
      if (low === 0) return { state: 'exited', code: (raw >> 8) & 0xff };
      if (low !== 0x7f) return { state: 'signaled', signal: low };
      return { state: 'running' }; // stopped: not an end
    }
    const errno = calls.errno();
    if (errnoName(errno) === 'EINTR') continue;
    if (errnoName(errno) === 'ECHILD') return { state: 'not-a-child' };
    throw new NativeError('waitpid', errnoName(errno), errno);
  }
}

let pidfdUnavailable = false;

/** A file descriptor naming one process (Linux 5.3+), or undefined where pidfds do not exist. */
export function openPidfd(pid: number): number | undefined {
  if (pidfdUnavailable || !bindings) return undefined;
  const fd = bindings.syscall3(SYS_PIDFD_OPEN, pid, 0, 0);
  if (fd >= 0) return fd;
  const code = errnoName(bindings.errno());
  if (code === 'ENOSYS' || code === 'EPERM') {
    // EPERM here means a seccomp filter forbids the call: fall back for good.
    pidfdUnavailable = true;
    return undefined;
  }
  throw new NativeError('pidfd_open', code, bindings.errno());
}

/** PIDFD_GET_INFO (Linux 6.15): _IOWR(0xFF, 11, struct pidfd_info), the struct's first version being 64 bytes. */
const PIDFD_GET_INFO = 0xc040ff0b;
const PIDFD_INFO_SIZE = 64;
const PIDFD_INFO_EXIT = 8n;
/** Where the wait status lies in struct pidfd_info (after mask, cgroupid and eleven 32-bit ids). */
const PIDFD_INFO_EXIT_CODE_OFFSET = 60;

/**
 * The wait status (as waitpid gives it) of the exited process a pidfd names, kept by the kernel
 * after the process was reaped (by anyone: libuv, for its children). Undefined while it runs, and
 * on kernels before 6.15 (no PIDFD_GET_INFO, or no exit information in it).
 */
export function pidfdExitStatus(fd: number): number | undefined {
  const info = Buffer.alloc(PIDFD_INFO_SIZE);
  info.writeBigUInt64LE(PIDFD_INFO_EXIT, 0);
  const ioctl = lazyCall<(fd: number, request: number, buffer: Buffer) => number>('ioctl', 'int ioctl(int fd, unsigned long request, _Inout_ uint8_t *info)');
  if (ioctl(fd, PIDFD_GET_INFO, info) < 0) return undefined;
  if ((info.readBigUInt64LE(0) & PIDFD_INFO_EXIT) === 0n) return undefined;
  return info.readInt32LE(PIDFD_INFO_EXIT_CODE_OFFSET);
}

/** pidfd_send_signal: delivers only to the process the descriptor names, never to a reused pid. */
export function signalPidfd(fd: number, signal: number): 'sent' | 'gone' | 'denied' {
  const result = native('pidfd_send_signal').syscall4(SYS_PIDFD_SEND_SIGNAL, fd, signal, 0, 0);
  if (result === 0) return 'sent';
  const code = errnoName(native('pidfd_send_signal').errno());
  return code === 'ESRCH' ? 'gone' : 'denied';
}

// Linux 6.9: with this flag a leader's pidfd signals the whole group that leader's pid names,
// for as long as that group has a member, even after the leader was reaped; ESRCH once it emptied.
const PIDFD_SIGNAL_PROCESS_GROUP = 4;
/** Forces the fallback (witnesses) even where the kernel has group signals: tests and old-kernel lanes. */
export const GROUP_HANDLES_VARIABLE = 'LEASH_GROUP_HANDLES';
let groupSignalRefused = false;

/** Whether group handles may be tried: native calls loaded, not switched off, not refused before. */
export function groupHandlesEnabled(): boolean {
  return bindings !== undefined && !pidfdUnavailable && !groupSignalRefused && process.env[GROUP_HANDLES_VARIABLE] !== 'off';
}

/**
 * pidfd_send_signal(fd, sig, NULL, PIDFD_SIGNAL_PROCESS_GROUP): signals the group whose leader the
 * descriptor names. 'unsupported' (EINVAL: a kernel before 6.9, or switched off) means the caller
 * must use its fallback; once refused, never tried again in this process.
 */
export function signalPidfdGroup(fd: number, signal: number): 'sent' | 'gone' | 'denied' | 'unsupported' {
  if (!groupHandlesEnabled()) return 'unsupported';
  const result = native('pidfd_send_signal').syscall4(SYS_PIDFD_SEND_SIGNAL, fd, signal, 0, PIDFD_SIGNAL_PROCESS_GROUP);
  if (result === 0) return 'sent';
  const code = errnoName(native('pidfd_send_signal').errno());
  if (code === 'ESRCH') return 'gone';
  if (code === 'EINVAL' || code === 'ENOSYS') {
    groupSignalRefused = true;
    return 'unsupported';
  }
  return 'denied';
}

export function closeFd(fd: number): void {
  native('close').close(fd);
}

const AF_NETLINK = 16;
const MSG_DONTWAIT = 0x40;
/** How long one netlink request may wait for its whole answer. */
export const NETLINK_REPLY_BUDGET_MS = 2000;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;

/**
 * Sends one request on a new netlink socket of `protocol` and returns every reply datagram
 * until `done(reply)` says the answer is complete. Undefined where native calls are missing.
 */
export function netlinkExchange(protocol: number, request: Buffer, done: (reply: Buffer) => boolean): Buffer[] | undefined {
  if (!bindings) return undefined;
  const calls = bindings;
  const fd = check('socket(AF_NETLINK)', calls.socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, protocol));
  try {
    check('send(netlink)', calls.send(fd, request, request.length, 0));
    const replies: Buffer[] = [];
    // The kernel answers at once; a reply that never comes (a filtered or broken netlink) must
    // not hang the caller, so each read is non-blocking and the whole exchange has a deadline.
    const deadline = performance.now() + NETLINK_REPLY_BUDGET_MS;
    const buffer = Buffer.alloc(65536); // one buffer for every read; each reply is copied out
    for (let rounds = 0; rounds < 100_000; rounds += 1) {
      const length = calls.recv(fd, buffer, buffer.length, MSG_DONTWAIT);
      if (length < 0) {
        const code = errnoName(calls.errno());
        if (code === 'EINTR') continue;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
          if (performance.now() >= deadline) throw new NativeError('recv(netlink)', 'ETIMEDOUT', constants.errno.ETIMEDOUT);
          pauseSync(1);
          continue;
        }
        check('recv(netlink)', length);
      }
      const reply = Buffer.from(buffer.subarray(0, length));
      replies.push(reply);
      if (length === 0 || done(reply)) break;
    }
    return replies;
  } finally {
    calls.close(fd);
  }
}

const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;
const SPLICE_F_NONBLOCK = 2;

/** A new pipe of our own, non-blocking and close-on-exec: [read end, write end]. */
export function makePipe(): [number, number] {
  const fds = Buffer.alloc(8);
  check('pipe2', native('pipe2').pipe2(fds, O_NONBLOCK | O_CLOEXEC));
  return [fds.readInt32LE(0), fds.readInt32LE(4)];
}

/**
 * tee(2) without blocking: duplicates up to `length` bytes from the pipe `fdIn` into the pipe
 * `fdOut` without consuming them. The count, or the errno name when it fails (EAGAIN, which may
 * come out named EWOULDBLOCK: `fdIn` is empty and still has a writer, or `fdOut` is full).
 */
export function teeNonBlocking(fdIn: number, fdOut: number, length: number): number | string {
  const calls = native('tee');
  const result = calls.tee(fdIn, fdOut, length, SPLICE_F_NONBLOCK);
  return result >= 0 ? result : errnoName(calls.errno());
}

/** The events poll(2) reports at once (timeout 0) for one descriptor asked about `events`. */
export function pollNow(fd: number, events: number): number {
  const entry = Buffer.alloc(8); // struct pollfd { int fd; short events; short revents; }
  entry.writeInt32LE(fd, 0);
  entry.writeInt16LE(events, 4);
  check('poll', native('poll').poll(entry, 1, 0));
  return entry.readInt16LE(6);
}

/**
 * poll(2) on libuv's threadpool: resolves with poll's result once an entry of `fds` (struct
 * pollfd entries, revents written in place) has an event, or rejects with its errno. The loop
 * stays alive while the call is pending, so the caller must be able to wake it (a pipe of its own).
 */
export function pollBlockingAsync(fds: Buffer, count: number): Promise<number> {
  const calls = native('poll');
  return new Promise((resolve, reject) => {
    calls.poll.async(fds, count, -1, (error, result) => {
      if (error) reject(error);
      // errno is the worker thread's, not readable here: EINTR is the one failure to expect.
      else if (result < 0) reject(new NativeError('poll', 'failed', 0));
      else resolve(result);
    });
  });
}

/**
 * An extended attribute of a file as text (systemd marks the cgroups it delegates with one);
 * undefined when it is absent, unreadable, or native calls are not loaded.
 */
export function readExtendedAttribute(path: string, name: string): string | undefined {
  if (!bindings) return undefined;
  const value = Buffer.alloc(256);
  const length = bindings.getxattr(path, name, value, value.length);
  return length < 0 ? undefined : value.toString('utf8', 0, length);
}

/** fcntl's F_SETFL: sets a descriptor's file status flags (O_NONBLOCK among them). */
const F_SETFL = 4;

/**
 * Sets the file status flags of `fd` (fcntl F_SETFL), shared by every process that holds the same
 * open file description. Throws NativeError when the call fails or koffi is not loaded.
 */
export function setFdFlags(fd: number, flags: number): void {
  check('fcntl(F_SETFL)', native('fcntl').fcntl(fd, F_SETFL, flags));
}

/**
 * Ends this process with `code` now, through _exit(2): no 'exit' listeners, no closing of handles,
 * no teardown of Node's threads and heap, and none of Node's restoring of fds 0-2 either (the
 * caller must put back what was changed on them: a non-blocking flag left on a shared pipe breaks
 * the next writer). For a process whose work is done and whose every word is written: Node's own
 * exit took 15-65 ms after the last line of leash run (measured: its worker threads joined one
 * after another), a time that a client waiting for the wrapped server to be gone pays. Returns
 * (doing nothing) where the native calls are not loaded.
 */
export function exitAtOnce(code: number): void {
  if (!bindings) return;
  bindings.exit(code);
}

const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

/**
 * flock(2) on a descriptor, without waiting: 'held' once this open file description holds the
 * lock, 'busy' while another one holds it (EWOULDBLOCK). The lock belongs to the open file
 * description, so a child that inherits the descriptor holds it too, and it is released only when
 * the last descriptor naming it closes: a lock kept by a process and its heirs says, from any pid
 * namespace, that one of them still lives. Throws NativeError on other failures.
 */
export function lockFile(fd: number, mode: 'shared' | 'exclusive'): 'held' | 'busy' {
  const flock = lazyCall<(fd: number, operation: number) => number>('flock', 'int flock(int fd, int operation)');
  for (;;) {
    if (flock(fd, (mode === 'shared' ? LOCK_SH : LOCK_EX) | LOCK_NB) === 0) return 'held';
    const code = errnoName(bindings!.errno());
    if (code === 'EINTR') continue;
    if (code === 'EWOULDBLOCK' || code === 'EAGAIN') return 'busy';
    throw new NativeError('flock', code, bindings!.errno());
  }
}

/** Releases a lock taken with lockFile (closing the last descriptor releases it too). */
export function unlockFile(fd: number): void {
  lazyCall<(fd: number, operation: number) => number>('flock', 'int flock(int fd, int operation)')(fd, LOCK_UN);
}

/** fsetxattr(2): sets an extended attribute of an open file. Throws NativeError on failure. */
export function setExtendedAttribute(fd: number, name: string, value: string): void {
  const fsetxattr = lazyCall<(fd: number, name: string, value: Buffer, size: number, flags: number) => number>(
    'fsetxattr',
    'int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)',
  );
  const bytes = Buffer.from(value);
  check('fsetxattr', fsetxattr(fd, name, bytes, bytes.length, 0));
}

const IN_MODIFY = 0x2;
const POLLIN = 1;

/**
 * Waits, blocking this thread, until `done()` is true or `budgetMs` passed, waking only when the
 * file at `path` is modified (inotify: kernfs notifies cgroup.events this way): no spinning, and
 * no fixed naps that would add their length to the wait. True when `done()` became true.
 * Undefined when the watch cannot be set (no native calls, no inotify): the caller must look by
 * itself then.
 */
export function waitForFileChange(path: string, done: () => boolean, budgetMs: number): boolean | undefined {
  if (!bindings) return undefined;
  const init = lazyCall<(flags: number) => number>('inotify_init1', 'int inotify_init1(int flags)');
  const addWatch = lazyCall<(fd: number, path: string, mask: number) => number>('inotify_add_watch', 'int inotify_add_watch(int fd, const char *path, uint32_t mask)');
  const read = lazyCall<(fd: number, buffer: Buffer, size: number) => number>('read', 'long read(int fd, _Inout_ void *buf, size_t count)');
  const fd = init(O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return undefined;
  try {
    if (addWatch(fd, path, IN_MODIFY) < 0) return undefined;
    const entry = Buffer.alloc(8); // struct pollfd
    const events = Buffer.alloc(4096);
    const deadline = performance.now() + budgetMs;
    // Looked at after the watch is set: a change between the two is not missed.
    while (!done()) {
      const left = Math.ceil(deadline - performance.now());
      if (left <= 0) return false;
      entry.writeInt32LE(fd, 0);
      entry.writeInt16LE(POLLIN, 4);
      entry.writeInt16LE(0, 6);
      bindings.poll(entry, 1, left);
      while (read(fd, events, events.length) > 0); // drained: the next poll waits for a new change
    }
    return true;
  } finally {
    bindings.close(fd);
  }
}
