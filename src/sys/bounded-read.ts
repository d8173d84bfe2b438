// Reading small files that anyone may have planted or pointed us at: never waiting on a FIFO,
// never reading a device or an endless stream, never more than a bound. Standard library only.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { retryTransient } from './wait.js';

export type BoundedRead =
  | { ok: true; text: string }
  | { ok: false; problem: 'not-regular' | 'too-large' | 'unreadable'; message: string };


/** Reads at most `limit` bytes from an open descriptor (a pipe, stdin); 'too-large' beyond. */
export function readDescriptorBounded(fd: number, limit: number): BoundedRead {
  const buffer = Buffer.alloc(limit + 1);
  let length = 0;
  while (length <= limit) {
    let read: number;
    try {
      read = retryTransient(() => readSync(fd, buffer, length, buffer.length - length, null));
    } catch (error) {
      return { ok: false, problem: 'unreadable', message: (error as Error).message };
    }
    if (read === 0) return { ok: true, text: buffer.toString('utf8', 0, length) };
    length += read;
  }
  return { ok: false, problem: 'too-large', message: `larger than ${limit} bytes` };
}

/**
 * Reads a regular file of at most `limit` bytes. Opened without waiting (a FIFO at the name
 * cannot block), and, with `noFollow`, never through a symbolic link; anything but a regular
 * file (a FIFO, a device such as /dev/zero, a directory) is refused unread.
 */
export function readRegularFileBounded(path: string, limit: number, options: { noFollow?: boolean } = {}): BoundedRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (options.noFollow ? constants.O_NOFOLLOW : 0));
  } catch (error) {
    return { ok: false, problem: 'unreadable', message: (error as Error).message };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, problem: 'not-regular', message: 'not a regular file' };
    if (stat.size > limit) return { ok: false, problem: 'too-large', message: `larger than ${limit} bytes` };
    return readDescriptorBounded(fd, limit);
  } catch (error) {
    return { ok: false, problem: 'unreadable', message: (error as Error).message };
  } finally {
    closeSync(fd);
  }
}
