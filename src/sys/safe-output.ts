// Writes to stderr and stdout that can never end the process. A reader may close its end of the
// pipe at any time (an MCP client does); Node then reports EPIPE as an 'error' event, which kills
// a process that has no listener. A process that must outlive its readers writes through here.
// Standard library only.

const broken = new WeakSet<NodeJS.WriteStream>();
const armed = new WeakSet<NodeJS.WriteStream>();

function arm(stream: NodeJS.WriteStream): void {
  if (armed.has(stream)) return;
  armed.add(stream);
  // Kept for the life of the process: a late EPIPE must find a listener too.
  stream.on('error', () => broken.add(stream));
}

/** Writes `text` to the stream unless it is known broken; never throws, never emits unhandled. */
export function writeSafely(stream: NodeJS.WriteStream, text: string): boolean {
  arm(stream);
  if (broken.has(stream) || stream.destroyed) return false;
  try {
    stream.write(text);
    return true;
  } catch {
    broken.add(stream);
    return false;
  }
}

/** Makes every later write to stdout and stderr safe, including Node's own (warnings). */
export function guardStandardOutput(): void {
  arm(process.stdout);
  arm(process.stderr);
}

/** Whether a write to the stream has failed (its reader went away). */
export function isBroken(stream: NodeJS.WriteStream): boolean {
  return broken.has(stream);
}
