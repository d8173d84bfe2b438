// Output that can never end or stall the process that writes it. Standard library only: the death
// supervisor imports this file.
//
// Two kinds of output, two rules:
// - Diagnostics (log lines, warnings, usage errors on stderr) are dropped when the reader does not
//   keep up: a full pipe must never block the process's only thread (leash run's grace timer, the
//   supervisor's teardown). process.stderr on a pipe would block (libuv's blocking writes for stdio)
//   and throw EPIPE as an uncaught 'error' once the reader is gone. Instead: a pipe or FIFO is
//   reopened through /proc/self/fd as a new, non-blocking description of its own (the shared one,
//   which the children inherit, is left as it was), and every write is a single attempt whose
//   failure is swallowed. A socket cannot be reopened: it goes through a libuv stream
//   (non-blocking), and a message is dropped while an earlier one still waits. Files and
//   terminals are written directly.
// - Data (`leash status --json`, `leash reap`'s report, help) is written whole, however slow the
//   reader, but a reader that is gone (EPIPE) only ends the writing, never the process.
import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { retryTransient } from './wait.js';

export interface StderrWriter {
  /** Writes `text` whole or not at all (up to PIPE_BUF); false when it was dropped (pipe full, reader gone). */
  write(text: string): boolean;
  /** True once the reader is known to be gone: later writes are dropped without a syscall. */
  readonly broken: boolean;
  /** True while a message is queued in this process (a socket whose reader is slow), not yet in the kernel. */
  readonly pending: boolean;
}

/** Opens a diagnostics writer for `fd` (2 by default). Never throws. */
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
    // Every write is synchronous: nothing ever waits here.
    pending: false,
    write(text: string): boolean {
      if (broken || target === undefined) return false;
      try {
        // Messages up to PIPE_BUF go into a pipe whole or not at all; a longer one (a usage
        // text) is written on as long as the pipe takes it.
        const bytes = Buffer.from(text);
        let done = 0;
        while (done < bytes.length) done += writeSync(target, bytes, done);
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
  let socket: import('node:net').Socket | undefined;
  try {
    // Loaded only for a socket: `net` costs the death supervisor about 0.5 MB of private memory.
    const { Socket } = createRequire(import.meta.url)('node:net') as typeof import('node:net');
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
    get pending() {
      return !broken && socket !== undefined && !socket.destroyed && socket.writableLength > 0;
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

let diagnostics: StderrWriter | undefined;

/** Whether a diagnostic line is still queued in this process (stderr a socket with a slow reader). */
export function diagnosticsPending(): boolean {
  return diagnostics?.pending ?? false;
}

/** Writes a diagnostic line to stderr; dropped (false) when the pipe is full or its reader gone. */
export function writeDiagnostic(text: string): boolean {
  diagnostics ??= openStderrWriter(2);
  return diagnostics.write(text);
}

const brokenData = new Set<number>();

/**
 * Writes `text` whole to `fd` (stdout by default), waiting as long as a slow reader needs; false,
 * without a throw, once the reader is gone (EPIPE: Node ignores SIGPIPE) or the descriptor is
 * unusable. Synchronous: for commands whose job is this output.
 */
export function writeData(text: string, fd = 1): boolean {
  if (brokenData.has(fd)) return false;
  const bytes = Buffer.from(text);
  let done = 0;
  try {
    while (done < bytes.length) done += retryTransient(() => writeSync(fd, bytes, done));
  } catch {
    brokenData.add(fd);
    return false;
  }
  return true;
}

const armed = new WeakSet<NodeJS.WriteStream>();

/**
 * Makes Node's own writes to process.stdout and process.stderr (warnings, anything a library
 * prints) survive a reader that is gone: an EPIPE 'error' with no listener would end the process.
 */
export function guardStandardOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (armed.has(stream)) continue;
    armed.add(stream);
    // Kept for the life of the process: a late EPIPE must find a listener too.
    stream.on('error', () => undefined);
  }
}
