// The one way `leash check` reads a source file (a file it checks, or a project module it follows
// through a relative import): never blocking on it, never reading more than a bound.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';

export type RegularFileRead =
  | { text: string }
  /** Could not be opened: `code` is the errno name (`ENOENT`; `ELOOP` for a symlink not followed). */
  | { problem: 'unopenable'; code: string }
  /** A FIFO, socket, device or folder: never read. */
  | { problem: 'not-regular' }
  /** Larger than `maxBytes`: `size` is what was seen (at least maxBytes + 1). */
  | { problem: 'too-large'; size: number };

export interface RegularFileOptions {
  /** Follow a symlink at `path` itself (a path the user named), or refuse it (ELOOP). */
  followSymlink: boolean;
  maxBytes: number;
}

/**
 * Opened non-blocking (a FIFO would otherwise wait for a writer forever) and checked to be a
 * regular file on the open descriptor, so a file swapped for a FIFO or a link after it was listed
 * is caught too. The size is checked before reading and again while reading, so a huge or sparse
 * file is never loaded whole, and one that grows meanwhile is still stopped at the bound. Errors
 * while reading (EIO, EISDIR, ...) are thrown.
 */
export function readRegularFile(path: string, options: RegularFileOptions): RegularFileRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (options.followSymlink ? 0 : constants.O_NOFOLLOW));
  } catch (error) {
    return { problem: 'unopenable', code: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { problem: 'not-regular' };
    if (stats.size > options.maxBytes) return { problem: 'too-large', size: stats.size };
    // One byte more than the bound is asked for: getting it means the file is over the bound.
    let buffer = scratchFor(Math.min(stats.size, options.maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > options.maxBytes) return { problem: 'too-large', size: length };
        const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, options.maxBytes + 1));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      // All the bytes fstat counted: the file as it was then, without a second read to see EOF
      // (one system call in five per file). A file that grew since is read on, to the bound.
      if (length === stats.size && length < buffer.length) break;
    }
    if (length > options.maxBytes) return { problem: 'too-large', size: length };
    return { text: buffer.toString('utf8', 0, length) };
  } finally {
    closeSync(fd);
  }
}

/** Whether `path` is a regular file: not a link, a folder, or a path through a file (ENOTDIR). */
export function isRegularFile(path: string): boolean {
  try {
    // Without an exception per absent path: most paths asked about are absent.
    return lstatSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false; // ENOTDIR (a path under a file, or under a link to one), EACCES, ...
  }
}

/** Whether `path` (absolute) lies inside `root` (absolute), or is it: the check reads nothing outside its root. */
export function isInside(root: string, path: string): boolean {
  const inside = relative(root, path);
  return !inside.startsWith('..') && !isAbsolute(inside);
}

/**
 * One buffer reused for every ordinary file (the text is copied out of it when decoded): a new
 * buffer per file was a page-faulting allocation for each of thousands of files. Files over a
 * MiB get their own, so that a long-lived host (the ESLint plugin) does not keep a large one.
 */
const SCRATCH_MAX = 1 << 20;
let scratch = Buffer.allocUnsafe(64 << 10);
function scratchFor(size: number): Buffer {
  if (size > SCRATCH_MAX) return Buffer.allocUnsafe(size);
  if (scratch.length < size) scratch = Buffer.allocUnsafe(SCRATCH_MAX);
  return scratch.subarray(0, size);
}

/** What kept a file from being read, in a few words for a message. */
export function whyUnread(read: Exclude<RegularFileRead, { text: string }>, maxBytes: number): string {
  if (read.problem === 'unopenable') return read.code;
  if (read.problem === 'not-regular') return 'not a regular file';
  return `${formatSize(read.size)}, over the ${formatSize(maxBytes)} limit`;
}

/** The most read of a configuration or baseline file: far more than any real one. */
export const SETTINGS_MAX_BYTES = 64 << 20;

/** A size as people write it: `16M`, `512k`, `2G`, or bytes. Binary units (`M` is 2^20 bytes). */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+)([kKmMgG]i?[bB]?)?$/.exec(text.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? '').charAt(0).toLowerCase();
  const bytes = Number(match[1]) * (unit === 'k' ? 1 << 10 : unit === 'm' ? 1 << 20 : unit === 'g' ? 1 << 30 : 1);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** A size for people: `16 MiB`, `1.5 GiB`, `900 bytes`. */
export function formatSize(bytes: number): string {
  for (const [unit, size] of [['GiB', 1 << 30], ['MiB', 1 << 20], ['KiB', 1 << 10]] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}
