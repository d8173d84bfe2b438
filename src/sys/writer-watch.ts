// Watching the far side of an inherited input descriptor (leash run's stdin) without reading it:
// the kernel reports POLLHUP on a pipe's read end once no writer is left, unread data or not,
// and POLLHUP/POLLRDHUP on a stream socket once the peer closed or shut down its writing side.
// poll(2) is asked for no input event at all (only POLLRDHUP), so data waiting for the reader
// never wakes it. The call blocks on libuv's threadpool, next to a wake-up pipe of our own.
// Linux only (needs the native calls); measured here: POLLHUP with unread data in the pipe.
import { fstatSync, readFileSync, writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { fdAccess } from './fds.js';
import { closeFd, makePipe, pollBlockingAsync } from './native.js';
import { readUnixSockets } from './unix-sockets.js';

const POLLIN = 0x001;
const POLLERR = 0x008;
const POLLHUP = 0x010;
const POLLNVAL = 0x020;
const POLLRDHUP = 0x2000;
/** A poll that fails this many times in a row (EINTR storms aside) is given up. */
const MAX_FAILED_POLLS = 100;

/**
 * What kind of file a descriptor is, as far as a writer watch is concerned. Only two can show a
 * client's death: a pipe's read end (all writers gone) and a connected stream socket (the peer
 * closed or shut down its writing side). A pipe's write end reports its *readers* leaving, a pipe
 * open both ways holds a writer itself, an unconnected socket reports a hang-up at once, and a
 * datagram socket never does: none of them is watched.
 */
export type InputKind =
  | 'pipe'
  | 'socket'
  | 'pipe write end'
  | 'pipe open both ways'
  | 'unconnected socket'
  | 'datagram socket'
  | 'terminal'
  | 'null device'
  | 'file'
  | 'character device'
  | 'closed'
  | 'other';

const SOCK_DGRAM = 2;
/** TCP_ESTABLISHED in /proc/net/tcp's `st` column. */
const TCP_ESTABLISHED = '01';

/** A socket that is no unix socket: its kind from /proc/net (TCP established, UDP), when it is there. */
function inetSocketKind(inode: number): InputKind | undefined {
  for (const [table, datagram] of [['tcp', false], ['tcp6', false], ['udp', true], ['udp6', true]] as const) {
    let text: string;
    try {
      text = readFileSync(`/proc/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || Number(fields[9]) !== inode) continue;
      if (datagram) return 'datagram socket';
      return fields[3] === TCP_ESTABLISHED ? 'socket' : 'unconnected socket';
    }
  }
  return undefined;
}

/** A socket's kind: connected stream (watchable), datagram, or unconnected; 'socket' when nothing tells. */
function socketKind(inode: number): InputKind {
  let info;
  try {
    info = readUnixSockets()?.get(inode);
  } catch {
    info = undefined; // netlink refused (a sandbox): /proc/net below
  }
  if (info) return info.connected ? 'socket' : info.type === SOCK_DGRAM ? 'datagram socket' : 'unconnected socket';
  // Not a unix socket of this namespace, or no native calls: /proc/net, else as before (watched).
  return inetSocketKind(inode) ?? 'socket';
}

export function describeInput(fd: number): InputKind {
  let stats;
  try {
    stats = fstatSync(fd);
  } catch {
    return 'closed';
  }
  if (stats.isFIFO()) {
    const access = fdAccess(process.pid, fd);
    return access === 'write' ? 'pipe write end' : access === 'read-write' ? 'pipe open both ways' : 'pipe';
  }
  if (stats.isSocket()) return socketKind(stats.ino);
  if (stats.isCharacterDevice()) {
    if (isatty(fd)) return 'terminal';
    // /dev/null is character device 1:3 on Linux.
    return stats.rdev === 259 ? 'null device' : 'character device';
  }
  if (stats.isFile()) return 'file';
  return 'other';
}

/** Whether a watch can tell when `kind` has no writer left. */
export function hasWatchableWriter(kind: InputKind): boolean {
  return kind === 'pipe' || kind === 'socket';
}

/** Why stdin of `kind` is not watched, for the one line that says so. */
export function unwatchableInput(kind: InputKind): string {
  switch (kind) {
    case 'closed':
      return 'stdin is closed';
    case 'pipe write end':
      return 'stdin is the write end of a pipe (a reader leaving it says nothing of the client)';
    case 'pipe open both ways':
      return 'stdin is a pipe opened for reading and writing (it is a writer of itself)';
    case 'unconnected socket':
      return 'stdin is a socket with no peer (not connected, or listening)';
    case 'datagram socket':
      return 'stdin is a datagram socket (it never shows its peer closing)';
    case 'other':
      return 'stdin is neither a pipe nor a socket';
    default:
      return `stdin is a ${kind}, not a pipe or socket`;
  }
}

export interface WriterWatch {
  /** Ends the watch (the pending poll returns at once); idempotent. */
  stop(): void;
}

/**
 * Calls `onNoWriter` once when `fd` (a pipe's read end or a stream socket) has no writer left,
 * `onFailure` if the kernel will not say. Nothing is read from `fd`.
 */
export function watchForNoWriter(fd: number, onNoWriter: () => void, onFailure: (why: string) => void): WriterWatch {
  const [wakeRead, wakeWrite] = makePipe();
  let stopped = false;
  let failures = 0;
  const entries = Buffer.alloc(16); // two struct pollfd { int fd; short events; short revents; }
  const arm = () => {
    entries.writeInt32LE(fd, 0);
    entries.writeInt16LE(POLLRDHUP, 4);
    entries.writeInt16LE(0, 6);
    entries.writeInt32LE(wakeRead, 8);
    entries.writeInt16LE(POLLIN, 12);
    entries.writeInt16LE(0, 14);
    pollBlockingAsync(entries, 2).then(
      () => {
        failures = 0;
        settle();
      },
      (error: unknown) => {
        failures += 1;
        if (stopped) return finish();
        if (failures < MAX_FAILED_POLLS) return arm();
        finish();
        onFailure(error instanceof Error ? error.message : String(error));
      },
    );
  };
  const settle = () => {
    if (stopped) return finish();
    const events = entries.readInt16LE(6);
    if (events & POLLNVAL) {
      finish();
      onFailure('the descriptor was closed');
    } else if (events & (POLLHUP | POLLRDHUP | POLLERR)) {
      finish();
      onNoWriter();
    } else {
      arm();
    }
  };
  let closed = false;
  const finish = () => {
    stopped = true;
    if (closed) return;
    closed = true;
    closeFd(wakeRead);
    closeFd(wakeWrite);
  };
  arm();
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      // The pending poll returns and finish() closes the pipe; until then it must stay open.
      try {
        writeSync(wakeWrite, Buffer.from([1]));
      } catch {
        // full or closed: the poll is waking anyway
      }
    },
  };
}
