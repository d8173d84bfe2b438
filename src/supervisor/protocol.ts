// The control protocol between an owner and its death supervisor: newline-terminated ASCII
// lines on the supervisor's stdin. Framing and parsing are kept apart from any I/O so that
// hostile input can be tested byte by byte.

/** The environment variable that marks every process an owner spawned (and their descendants). */
export const OWNER_TOKEN_VARIABLE = 'LEASH_OWNER_TOKEN';

/** How long registered groups have between SIGTERM and SIGKILL unless told otherwise. */
export const DEFAULT_GRACE_MS = 3000;

/**
 * What the supervisor is sent when the thread that started it exits (the owner's launch arms it
 * through setpriv: sys/parent-death.ts). SIGURG, because its default action is to ignore it: one
 * that arrives while Node still boots, before the listener is in (Node resets inherited
 * dispositions at start), is lost, not fatal, and EOF still comes.
 */
export const PARENT_DEATH_SIGNAL: NodeJS.Signals = 'SIGURG';

/** Longest accepted line, newline included. A real command is under 40 bytes. */
export const MAX_LINE_BYTES = 256;

export type ControlCommand =
  | { verb: 'register'; pgid: number; startTime?: number }
  /** A group registered with an earlier supervisor (the owner's replay): nobody is recorded now; its handle or witnesses follow. */
  | { verb: 'recall'; pgid: number; startTime: number }
  /** A member of a registered group, seen by the owner while the group was proven (by its identity). */
  | { verb: 'witness'; pgid: number; pid: number; startTime: number }
  /** The inherited descriptor `fd` is the owner's pidfd of the group's leader. */
  | { verb: 'handle'; pgid: number; fd: number }
  /** Descriptors 3 to 2+count were inherited as handles (the replay's first line). */
  | { verb: 'handles'; count: number }
  | { verb: 'unregister'; pgid: number }
  | { verb: 'disown'; pgid: number; startTime?: number }
  | { verb: 'release' };

/** Largest number accepted as a pgid or a start time: no pid exceeds 2^22 on Linux. */
const MAX_DECIMAL = 2 ** 53 - 1;

function parseDecimal(word: string | undefined): number | undefined {
  if (word === undefined || !/^[0-9]{1,16}$/.test(word)) return undefined;
  const value = Number(word);
  return value <= MAX_DECIMAL ? value : undefined;
}

/**
 * Parses one line (without its newline). Undefined for anything that is not exactly a known
 * command: unknown verbs, extra words, signs, hex, empty lines.
 */
export function parseControlLine(line: string): ControlCommand | undefined {
  const words = line.trim().split(/[ \t]+/);
  const verb = words[0];
  switch (verb) {
    case 'register':
    case 'disown': {
      if (words.length !== 2 && words.length !== 3) return undefined;
      const pgid = parseDecimal(words[1]);
      if (pgid === undefined) return undefined;
      if (words.length === 2) return { verb, pgid };
      const startTime = parseDecimal(words[2]);
      return startTime === undefined ? undefined : { verb, pgid, startTime };
    }
    case 'recall': {
      if (words.length !== 3) return undefined;
      const pgid = parseDecimal(words[1]);
      const startTime = parseDecimal(words[2]);
      return pgid === undefined || startTime === undefined ? undefined : { verb, pgid, startTime };
    }
    case 'witness': {
      if (words.length !== 4) return undefined;
      const [pgid, pid, startTime] = words.slice(1).map(parseDecimal);
      return pgid === undefined || pid === undefined || startTime === undefined ? undefined : { verb, pgid, pid, startTime };
    }
    case 'handle': {
      if (words.length !== 3) return undefined;
      const pgid = parseDecimal(words[1]);
      const fd = parseDecimal(words[2]);
      // The first three descriptors are the pipe, stdout and stderr, never a handle.
      return pgid === undefined || fd === undefined || fd < 3 || fd > 65535 ? undefined : { verb, pgid, fd };
    }
    case 'handles': {
      if (words.length !== 2) return undefined;
      const count = parseDecimal(words[1]);
      return count === undefined || count > 65533 ? undefined : { verb, count };
    }
    case 'unregister': {
      if (words.length !== 2) return undefined;
      const pgid = parseDecimal(words[1]);
      return pgid === undefined ? undefined : { verb: 'unregister', pgid };
    }
    case 'release':
      return words.length === 1 ? { verb: 'release' } : undefined;
    default:
      return undefined;
  }
}

/** Formats a command as the owner writes it. */
export function formatControlLine(command: ControlCommand): string {
  switch (command.verb) {
    case 'register':
    case 'disown':
      return command.startTime === undefined
        ? `${command.verb} ${command.pgid}\n`
        : `${command.verb} ${command.pgid} ${command.startTime}\n`;
    case 'recall':
      return `recall ${command.pgid} ${command.startTime}\n`;
    case 'witness':
      return `witness ${command.pgid} ${command.pid} ${command.startTime}\n`;
    case 'handle':
      return `handle ${command.pgid} ${command.fd}\n`;
    case 'handles':
      return `handles ${command.count}\n`;
    case 'unregister':
      return `unregister ${command.pgid}\n`;
    case 'release':
      return 'release\n';
  }
}

/**
 * Splits a byte stream into lines with bounded memory. A line longer than MAX_LINE_BYTES is
 * dropped whole, up to and including its newline, so its tail can never be read as a command.
 * An unterminated tail at end of input is never delivered.
 */
export class LineFramer {
  private readonly pending = Buffer.alloc(MAX_LINE_BYTES);
  private length = 0;
  private discarding = false;
  /** Lines dropped for length; reported, never acted on. */
  overlongLines = 0;

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline < 0 ? chunk.length : newline;
      const piece = end - start;
      if (!this.discarding) {
        if (this.length + piece + (newline < 0 ? 0 : 1) > MAX_LINE_BYTES) {
          this.discarding = true;
          this.length = 0;
        } else {
          chunk.copy(this.pending, this.length, start, end);
          this.length += piece;
        }
      }
      if (newline < 0) return;
      if (this.discarding) {
        this.discarding = false;
        this.overlongLines += 1;
      } else {
        const line = this.pending.toString('latin1', 0, this.length);
        this.length = 0;
        this.onLine(line);
      }
      start = newline + 1;
    }
  }
}
