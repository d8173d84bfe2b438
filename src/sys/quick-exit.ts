// Ending a process at once, through _exit(2), once its work is done and nothing would be lost by
// it. Node's own exit joins its worker threads one after another (15-65 ms measured after leash
// run's last line), a time that whoever waits for the process to be gone pays. What Node's exit
// does that _exit skips is done here first: O_NONBLOCK on fds 0-2 put back as it was at start
// (a pipe or socket shared with whoever started us, left non-blocking, gives the next writer
// EAGAIN). Linux with koffi loaded only; elsewhere the process exits as usual.
import { constants } from 'node:fs';
import { exitAtOnce, setFdFlags } from './native.js';
import { readOwnFdFlags } from './procfs.js';
import { nodeFlagNames } from './node-flags.js';
import { diagnosticsPending } from './safe-output.js';

const STDIO = [0, 1, 2] as const;

export class QuickExit {
  /** Read before anything can change them (create this first thing). */
  private readonly stdioAtStart = STDIO.map(readOwnFdFlags);

  /**
   * Ends the process now with `code`, unless something would be lost: words still queued for
   * others (`othersWritten` false) or for stderr, files Node was asked to write at exit, or fds
   * 0-2 that cannot be put back as they were. Returns in those cases: the caller exits as usual.
   */
  exitIfClean(code: number, othersWritten: boolean): void {
    if (writesAtExit() || !othersWritten || diagnosticsPending() || !this.restoreStdioFlags()) return;
    exitAtOnce(code);
  }

  /** True when each of fds 0-2 has O_NONBLOCK as at start (or was closed throughout). */
  private restoreStdioFlags(): boolean {
    for (const fd of STDIO) {
      const before = this.stdioAtStart[fd];
      const now = readOwnFdFlags(fd);
      if (before === undefined || now === undefined) {
        if (before !== now) return false;
        continue;
      }
      if (((before ^ now) & constants.O_NONBLOCK) === 0) continue;
      try {
        setFdFlags(fd, (now & ~constants.O_NONBLOCK) | (before & constants.O_NONBLOCK));
      } catch {
        return false;
      }
      if (((readOwnFdFlags(fd) ?? ~before) ^ before) & constants.O_NONBLOCK) return false;
    }
    return true;
  }
}

/** Node flags that have it write files as it exits, which _exit would lose. */
const WRITES_AT_EXIT = new Set(['--cpu-prof', '--heap-prof', '--prof', '--prof-cpp']);

/** Whether Node was asked to write files as it exits (a profile, a V8 log, NODE_V8_COVERAGE). */
function writesAtExit(): boolean {
  return process.env.NODE_V8_COVERAGE !== undefined || nodeFlagNames().some((name) => WRITES_AT_EXIT.has(name));
}
