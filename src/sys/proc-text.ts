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
 * Like readProcText, with one read() instead of two for a file that fits the buffer: procfs
 * files built on seq_file (stat, task/<tid>/children) hand over everything that fits in one
 * call, so a short read is their end. For hot paths (the supervisor's teardown) only.
 */
export function readSmallProcText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const bytes = readSync(fd, scratch, 0, scratch.length, null);
    if (bytes < scratch.length) return scratch.toString('latin1', 0, bytes);
  } finally {
    closeSync(fd);
  }
  return readProcText(path);
}
