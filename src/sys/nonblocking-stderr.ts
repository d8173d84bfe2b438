// Diagnostics that can never end or stall the process that writes them. Standard library only:
// the death supervisor imports this file.
//
// process.stderr on a pipe puts the shared pipe into non-blocking mode (the owner's end too), queues
// without bound when the reader is slow, and throws EPIPE as an uncaught 'error' once the reader is
// gone. Instead: a FIFO is reopened through /proc/self/fd as a new, non-blocking description of
// its own, and every write is a single attempt whose failure is swallowed. A socket cannot be
// reopened: it goes through a libuv stream (non-blocking), and a message is dropped while an
// earlier one still waits. Files and terminals are written directly.
import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';

export interface StderrWriter {
  /** Writes `text` whole or not at all; false when it was dropped (pipe full, reader gone). */
  write(text: string): boolean;
  /** True once the reader is known to be gone: later writes are dropped without a syscall. */
  readonly broken: boolean;
}

/** Opens a writer for `fd` (2 by default). Never throws. */
export function openStderrWriter(fd = 2): StderrWriter {
  let target: number | undefined = fd;
  let broken = false;
  try {
    const stat = fstatSync(fd);
    if (stat.isSocket()) return socketWriter(fd);
    if (stat.isFIFO()) {
      try {
        target = openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK);
      } catch (error) {
        // ENXIO: a FIFO without a reader. Anything else (no procfs): the descriptor as it is.
        if ((error as NodeJS.ErrnoException).code === 'ENXIO') broken = true;
        target = fd;
      }
    }
  } catch {
    // fd is closed: nothing to write to.
    broken = true;
  }
  return {
    get broken() {
      return broken;
    },
    write(text: string): boolean {
      if (broken || target === undefined) return false;
      try {
        // Messages are far below PIPE_BUF, so a pipe takes them whole or not at all.
        writeSync(target, text);
        return true;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EAGAIN' && code !== 'EINTR') {
          broken = true;
          if (target !== fd) {
            try {
              closeSync(target);
            } catch {
              // Already unusable.
            }
          }
        }
        return false;
      }
    },
  };
}

function socketWriter(fd: number): StderrWriter {
  let broken = false;
  let socket: Socket | undefined;
  try {
    socket = new Socket({ fd, readable: false, writable: true });
    socket.on('error', () => {
      broken = true;
      socket?.destroy();
    });
    // Never keeps the process alive for a message.
    socket.unref();
  } catch {
    broken = true;
  }
  return {
    get broken() {
      return broken;
    },
    write(text: string): boolean {
      if (broken || !socket || socket.destroyed) return false;
      // One message in flight at most: a reader that stops reading costs us nothing but messages.
      if (socket.writableLength > 0) return false;
      try {
        socket.write(text);
        return true;
      } catch {
        broken = true;
        return false;
      }
    },
  };
}
