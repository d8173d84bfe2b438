// Reading the control pipe until EOF through one reused buffer. A stream would allocate a fresh
// buffer per read and let a flood of garbage (say, /dev/zero) grow the heap by tens of MB before
// the collector catches up; this process must stay small whatever it is sent.
import { fstatSync, read } from 'node:fs';
import { Socket } from 'node:net';

const BUFFER_BYTES = 16 * 1024;

/**
 * Feeds fd 0 to `onChunk` until EOF (or a read error: the owner's end is unusable either way),
 * then calls `onEof` synchronously, before the promise settles (promise continuations wait for
 * Node's own end-of-stream work). A pipe or socket is watched by the event loop itself (epoll),
 * so EOF is seen on the main thread the moment it happens; anything else (a file, a terminal)
 * is read through the thread pool.
 */
export function readUntilEof(onChunk: (chunk: Buffer) => void, onEof: () => void = () => {}): Promise<void> {
  const buffer = Buffer.alloc(BUFFER_BYTES);
  let kind: 'stream' | 'other' = 'other';
  try {
    const stat = fstatSync(0);
    if (stat.isFIFO() || stat.isSocket()) kind = 'stream';
  } catch {
    onEof();
    return Promise.resolve(); // no stdin at all: nobody can ever talk to us
  }
  if (kind === 'stream') {
    try {
      return readAsSocket(buffer, onChunk, onEof);
    } catch {
      // Node would not wrap it: fall back to plain reads.
    }
  }
  return readThroughThreadPool(buffer, onChunk).then(onEof);
}

/** Throws (synchronously, for the caller's fallback) when Node will not wrap fd 0 as a socket. */
function readAsSocket(buffer: Buffer, onChunk: (chunk: Buffer) => void, onEof: () => void): Promise<void> {
  // `onread` (reads into our buffer) is accepted by the constructor since Node 12; the type
  // definitions only list it for connect().
  const socket = new Socket({
    fd: 0,
    readable: true,
    writable: false,
    // Nothing to end on our side: no shutdown work between EOF and the teardown.
    allowHalfOpen: true,
    onread: {
      buffer,
      callback: (bytes: number, chunk: Uint8Array) => {
        onChunk((chunk as Buffer).subarray(0, bytes));
        return true;
      },
    },
  } as ConstructorParameters<typeof Socket>[0]);
  return new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      onEof();
      resolve();
      // After the teardown has begun: closing the handle is not on the path to the first SIGTERM.
      setImmediate(() => socket.destroy());
    };
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', finish);
  });
}

function readThroughThreadPool(buffer: Buffer, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const next = () =>
      read(0, buffer, 0, buffer.length, null, (error, bytes) => {
        if (error && (error.code === 'EAGAIN' || error.code === 'EINTR')) {
          // A non-blocking stdin (unusual for a spawned child): poll it gently.
          setTimeout(next, error.code === 'EAGAIN' ? 5 : 0);
          return;
        }
        if (error || bytes === 0) return resolve();
        onChunk(buffer.subarray(0, bytes));
        next();
      });
    next();
  });
}
