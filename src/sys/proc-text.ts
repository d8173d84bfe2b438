// Small procfs files read without a fresh buffer per read. Standard library only: the death
// supervisor imports procfs.ts, which uses this.
import { closeSync, openSync, readSync } from 'node:fs';

/** One buffer for every small procfs read; grown (never shrunk) for the rare larger file. */
let scratch = Buffer.allocUnsafe(8192);

/**
 * Reads a procfs file as latin1 text through one reused buffer. procfs files report size 0, so
 * readFileSync allocates 64 KB per call for them: a tree walk made thousands of such buffers,
 * and malloc kept the pages (measured: 38 MB private instead of 11 MB after 60 walks). Throws
 * as readFileSync does.
 */
export function readProcText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    let length = 0;
    for (;;) {
      if (length === scratch.length) {
        const larger = Buffer.allocUnsafe(scratch.length * 2);
        scratch.copy(larger, 0, 0, length);
        scratch = larger;
      }
      const bytes = readSync(fd, scratch, length, scratch.length - length, null);
      if (bytes === 0) break;
      length += bytes;
    }
    return scratch.toString('latin1', 0, length);
  } finally {
    closeSync(fd);
  }
}

/**
 * Below this many bytes, one read() of a stat file or a task's children list is the whole file.
 * The kernel fills a page (4 KB) with records before it hands them over, and stops short of a page
 * only at the end or when the next record does not fit: with records of a few bytes (a pid) or a
 * single record (stat), a reply under half a page is the end. (Not so for files with long records:
 * one read of /proc/self/smaps returns a few KB of a larger file.)
 */
const WHOLE_BELOW_BYTES = 2048;

/**
 * readProcText with one read() instead of two for a short stat file or children list: for hot
 * paths (the supervisor's teardown), where every system call delays the first SIGTERM. Any file
 * reads whole: a longer reply is read again from the start by readProcText.
 */
export function readSmallProcText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const bytes = readSync(fd, scratch, 0, scratch.length, null);
    if (bytes < WHOLE_BELOW_BYTES) return scratch.toString('latin1', 0, bytes);
  } finally {
    closeSync(fd);
  }
  return readProcText(path);
}
