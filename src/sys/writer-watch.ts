// Watching the far side of an inherited input descriptor (leash run's stdin) without reading it:
// the kernel reports POLLHUP on a pipe's read end once no writer is left, unread data or not,
// and POLLHUP/POLLRDHUP on a stream socket once the peer closed or shut down its writing side.
// poll(2) is asked for no input event at all (only POLLRDHUP), so data waiting for the reader
// never wakes it. The call blocks on libuv's threadpool, next to a wake-up pipe of our own.
// Linux only (needs the native calls); measured here: POLLHUP with unread data in the pipe.
import { fstatSync, writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { closeFd, makePipe, pollBlockingAsync } from './native.js';

const POLLIN = 0x001;
const POLLERR = 0x008;
const POLLHUP = 0x010;
const POLLNVAL = 0x020;
const POLLRDHUP = 0x2000;
/** A poll that fails this many times in a row (EINTR storms aside) is given up. */
const MAX_FAILED_POLLS = 100;

/** What kind of file a descriptor is, as far as a writer watch is concerned. */
export type InputKind = 'pipe' | 'socket' | 'terminal' | 'null device' | 'file' | 'character device' | 'closed' | 'other';

export function describeInput(fd: number): InputKind {
  let stats;
  try {
    stats = fstatSync(fd);
  } catch {
    return 'closed';
  }
  if (stats.isFIFO()) return 'pipe';
  if (stats.isSocket()) return 'socket';
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
