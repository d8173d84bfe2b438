// The supervisor's messages on stderr, rate-limited: whatever the owner (or anyone holding the
// pipe) sends, stderr gets at most a few lines a second, and a count of what was held back.
import { openStderrWriter, type StderrWriter } from '../sys/safe-output.js';

/** Messages allowed per window; the rest are counted and summarised. */
const BURST = 5;
const WINDOW_MS = 1000;

export class Notices {
  private windowStart = 0;
  private inWindow = 0;
  private held = 0;

  /** Opened at the first message: a socket stderr would load `net` (about 0.5 MB) for nothing. */
  private out: StderrWriter | undefined;

  constructor(
    out?: StderrWriter,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.out = out;
  }

  /** Says `message` (one line, without the prefix) unless this window's quota is spent. */
  say(message: string): void {
    const now = this.now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow >= BURST) {
      this.held += 1;
      return;
    }
    this.inWindow += 1;
    this.writer().write(`leash supervise: ${this.takeHeld()}${message}\n`);
  }

  /** Reports messages still held back (at exit). */
  flush(): void {
    if (this.held > 0) this.writer().write(`leash supervise: ${this.takeHeld().trimEnd()}\n`);
  }

  private writer(): StderrWriter {
    this.out ??= openStderrWriter();
    return this.out;
  }

  private takeHeld(): string {
    if (this.held === 0) return '';
    const text = `(${this.held} similar message${this.held === 1 ? '' : 's'} not shown) `;
    this.held = 0;
    return text;
  }
}
