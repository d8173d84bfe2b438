// Asking the kernel itself whether a pipe another process holds still has a writer (or a reader),
// without seeing who holds it: the answer stands even when the holder is a process we cannot look
// at (another user's, hidden by hidepid, outside our pid namespace). Nothing is read from or
// written to the pipe. Linux only; needs the native calls (loadNative) for tee(2) and poll(2).
import { closeSync, constants, fstatSync, openSync, readlinkSync } from 'node:fs';
import { closeFd, makePipe, pollNow, teeNonBlocking } from './native.js';

/** 'none': proven that no process holds that end; 'some': one does; 'undecided': not provable now. */
export type FarEnd = 'none' | 'some' | 'undecided';

// O_PATH is 010000000 on every architecture Node runs on (alpha, parisc and sparc differ).
const O_PATH = 0o10000000;
const POLLOUT = 0x004;
const POLLERR = 0x008;

/**
 * Opens the pipe `inode`, which `pid` holds as descriptor `fd`, as a new open file of our own:
 * first by O_PATH (which opens nothing: no device side effects should the descriptor have been
 * replaced since it was read), checked to be that very pipe, then for real through it.
 */
function reopenPipe(pid: number, fd: number, inode: number, access: number): number | undefined {
  let pathFd: number;
  try {
    pathFd = openSync(`/proc/${pid}/fd/${fd}`, O_PATH);
  } catch {
    return undefined;
  }
  try {
    // An anonymous pipe by name (a FIFO on disk reads as its path) and by inode.
    if (readlinkSync(`/proc/self/fd/${pathFd}`) !== `pipe:[${inode}]`) return undefined;
    const stats = fstatSync(pathFd);
    if (!stats.isFIFO() || stats.ino !== inode) return undefined;
    // O_NONBLOCK: opening a pipe end never waits for the other side.
    return openSync(`/proc/self/fd/${pathFd}`, access | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return undefined;
  } finally {
    closeSync(pathFd);
  }
}

/**
 * Whether anyone still holds the write end of the pipe `inode`, whose read end `pid` holds as
 * `fd`. tee(2) from a new read end of our own into a scratch pipe: 0 means empty with no writer
 * left (end of file), EAGAIN empty with a writer; bytes waiting (copied, not consumed) leave it
 * undecided, since tee then never looks at the writers.
 */
export function probePipeWriters(pid: number, fd: number, inode: number): FarEnd {
  const reader = reopenPipe(pid, fd, inode, constants.O_RDONLY);
  if (reader === undefined) return 'undecided';
  try {
    const [scratchRead, scratchWrite] = makePipe();
    try {
      const copied = teeNonBlocking(reader, scratchWrite, 1);
      if (copied === 0) return 'none';
      // The scratch pipe is new and empty, so EAGAIN can only be the writer's side.
      if (copied === 'EAGAIN' || copied === 'EWOULDBLOCK') return 'some';
      return 'undecided';
    } finally {
      closeFd(scratchRead);
      closeFd(scratchWrite);
    }
  } catch {
    return 'undecided';
  } finally {
    closeSync(reader);
  }
}

/**
 * Whether anyone still holds the read end of the pipe `inode`, whose write end `pid` holds as
 * `fd`. poll(2) on a new write end of our own reports POLLERR exactly when no reader is left;
 * nothing is written.
 */
export function probePipeReaders(pid: number, fd: number, inode: number): FarEnd {
  const writer = reopenPipe(pid, fd, inode, constants.O_WRONLY);
  if (writer === undefined) return 'undecided';
  try {
    return (pollNow(writer, POLLOUT) & POLLERR) !== 0 ? 'none' : 'some';
  } catch {
    return 'undecided';
  } finally {
    closeSync(writer);
  }
}
