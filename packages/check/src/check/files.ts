// Which files a run looks at: the repository's tracked files or the named paths, minus the default
// skips (tests, fixtures, vendored and generated trees) and the project's own spawn helpers.
import type * as ChildProcess from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import { languageOf } from './checker.js';
import { CheckError, type CheckConfig } from './config.js';
import { formatSize, readRegularFile, type RegularFileRead } from './regular-file.js';
import type { Language } from './types.js';

/** Folder names skipped anywhere in a path unless the configuration turns default skips off. */
const SKIPPED_FOLDERS = new Set([
  'test', 'tests', '__tests__', '__mocks__', 'fixtures', '__fixtures__', 'testdata', 'evals',
  'node_modules', 'bower_components', '.yarn', 'vendor', 'vendored', 'third_party', 'dist', 'build', 'out',
  'generated', '__generated__', '__pycache__', '.git', '.venv', 'venv', 'site-packages',
]);
// One expression, tried once per file name: test_*.py, *_test.py, conftest.py, *.test.*, *.spec.*,
// *.min.js, *.generated.*, *.gen.*.
const SKIPPED_FILES = /^test_.*\.py$|_test\.py$|^conftest\.py$|\.(?:test|spec)\.[^.]+$|\.min\.js$|\.(?:generated|gen)\.[^.]+$/;

export interface Target {
  /** As reported: relative to the working directory, with forward slashes. */
  path: string;
  absolute: string;
  language: Language;
  /** Listed by git: a file deleted from the work tree but not from the index is skipped, not an error. */
  fromGit: boolean;
  /** Named on the command line: followed if a symlink, and anything but a regular file is an error. */
  named: boolean;
}

/** What a run looks at, and what it met but did not look at (each one said in the report). */
export interface Listing {
  targets: Target[];
  notes: string[];
}

/** A small glob: `**` spans folders, `*` and `?` stay within one; a pattern without `/` matches any path segment. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const anchored = glob.includes('/') ? `^${source.replace(/^\\?\//, '')}` : `(?:^|/)${source}`;
  return new RegExp(`${anchored}(?:/.*)?$`);
}

export class PathFilter {
  private readonly helpers: RegExp[];
  private readonly skips: RegExp[];

  constructor(private readonly config: CheckConfig) {
    this.helpers = config.helpers.map(globToRegExp);
    this.skips = config.skip.map(globToRegExp);
  }

  isHelper(path: string): boolean {
    return this.helpers.some((re) => re.test(path));
  }

  /** Whether a configured skip glob (not a default skip) matches. */
  isConfiguredSkip(path: string): boolean {
    return this.skips.some((re) => re.test(path));
  }

  /**
   * Skipped when found by listing or walking; a file named on the command line skips only the
   * helper test. The default skips look only at `below`: the part of the path under a folder
   * named on the command line, so that `leash check build` checks what is in `build`.
   */
  isSkipped(path: string, below: string = path): boolean {
    if (this.isHelper(path) || this.isConfiguredSkip(path)) return true;
    if (!this.config.defaultSkips) return false;
    const parts = below.split('/');
    const name = parts.pop() ?? '';
    return parts.some((part) => SKIPPED_FOLDERS.has(part)) || SKIPPED_FILES.test(name);
  }
}

function display(absolute: string, cwd: string): string {
  // By slicing, not relative(): this runs for every file and folder listed, and relative() was a
  // tenth of the listing's compiled code. Both paths are resolved, so on POSIX a path not under the
  // working directory is shown whole, which is what relative()'s `../` answer led to anyway.
  if (absolute.startsWith(cwd) && absolute.charAt(cwd.length) === sep) return sep === '/' ? absolute.slice(cwd.length + 1) : absolute.slice(cwd.length + 1).split(sep).join('/');
  if (sep === '/' && cwd !== '/') return absolute;
  const rel = relative(cwd, absolute);
  return (rel === '' || rel.startsWith('..') ? absolute : rel).split(sep).join('/');
}

/**
 * `forceExclude`: the named paths are skipped as a listing would skip them (default and configured
 * skips, other languages), without a note; for a hook that names every changed file (pre-commit),
 * so that it checks what `leash check` with no paths would check of them.
 */
export function listTargets(paths: string[], cwd: string, filter: PathFilter, forceExclude = false): Listing {
  const targets: Target[] = [];
  const notes: string[] = [];
  const add = (absolute: string, origin: { fromGit?: boolean; named?: boolean; below?: string }) => {
    const path = display(absolute, cwd);
    const language = languageOf(path);
    if (!language) return;
    if (origin.named && !forceExclude ? filter.isHelper(path) : filter.isSkipped(path, origin.below)) return;
    targets.push({ path, absolute, language, fromGit: origin.fromGit === true, named: origin.named === true });
  };
  if (paths.length === 0) {
    const base = cwd.endsWith(sep) ? cwd : cwd + sep;
    for (const entry of gitTrackedFiles(cwd)) {
      // git lists normalized paths with `/`: on POSIX they only need the prefix.
      const absolute = sep === '/' ? base + entry.path : join(cwd, entry.path);
      const path = display(absolute, cwd);
      if (entry.mode === SYMLINK_MODE) {
        if ((languageOf(path) || isDirectory(absolute)) && !filter.isSkipped(path)) notes.push(`${path}: ${NOT_FOLLOWED}`);
      } else if (entry.mode === SUBMODULE_MODE) {
        if (!filter.isSkipped(path)) notes.push(`${path}: a git submodule, not checked (run leash check inside it)`);
      } else add(absolute, { fromGit: true });
    }
    return { targets, notes };
  }
  for (const given of paths) {
    const absolute = resolve(cwd, given);
    let stats;
    try {
      stats = statSync(absolute); // a named path is taken as given: a symlink named here is followed
    } catch (error) {
      throw new CheckError(`cannot read ${given}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (stats.isDirectory()) {
      const shown = display(absolute, cwd);
      // Judged as a path inside it, so that its own name counts as a folder's (`tests`, `vendor`).
      if (forceExclude && filter.isSkipped(`${shown}/`)) continue;
      if (filter.isHelper(shown) || filter.isConfiguredSkip(shown)) {
        notes.push(`${given}: skipped, it matches the configuration's "helpers" or "skip"`);
        continue;
      }
      walk(absolute, cwd, filter, add, notes);
    } else if (stats.isFile()) {
      if (!languageOf(display(absolute, cwd)) && !forceExclude) notes.push(`${given}: not checked, not a Python or JS/TS file`);
      add(absolute, { named: true });
    } else {
      throw new CheckError(`cannot check ${given}: not a regular file or a folder`);
    }
  }
  return { targets, notes };
}

/**
 * Walks a named folder without recursion (its depth is the file system's) and without following
 * symlinks: a link met here is noted, never entered, so a link cannot lead the walk out of the
 * tree or round a cycle. FIFOs, sockets and devices are never opened.
 */
function walk(root: string, cwd: string, filter: PathFilter, add: (absolute: string, origin: { below: string }) => void, notes: string[]): void {
  // Each folder with its path below the root, so that neither is rebuilt per entry with join().
  const stack: Array<{ dir: string; below: string }> = [{ dir: root, below: '' }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { dir } = top;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      throw new CheckError(`cannot list ${display(dir, cwd)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    // Sorted in reverse, then popped: folders are walked in name order.
    entries.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    const prefix = dir.endsWith(sep) ? dir : dir + sep;
    const belowPrefix = top.below === '' ? '' : `${top.below}/`;
    const files: Array<{ path: string; below: string }> = [];
    for (const entry of entries) {
      const path = prefix + entry.name;
      const below = belowPrefix + entry.name;
      if (entry.isDirectory()) {
        if (!filter.isSkipped(display(path, cwd), below)) stack.push({ dir: path, below });
      } else if (entry.isFile()) files.push({ path, below });
      else if (languageOf(entry.name) || entry.isSymbolicLink()) {
        const shown = display(path, cwd);
        if (filter.isSkipped(shown, below)) continue;
        if (!entry.isSymbolicLink()) notes.push(`${shown}: not a regular file, skipped`);
        else if (languageOf(entry.name) || isDirectory(path)) notes.push(`${shown}: ${NOT_FOLLOWED}`);
      }
    }
    for (const file of files.reverse()) add(file.path, { below: file.below });
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The one symlink rule: a link met while listing (git or a walk) is never followed, and is said. */
const NOT_FOLLOWED = 'a symbolic link, not followed (name its target to check it)';
const SYMLINK_MODE = '120000';
const SUBMODULE_MODE = '160000';

function gitTrackedFiles(cwd: string): Array<{ path: string; mode: string }> {
  // Loaded here, not at the top: node:child_process (with net and dgram) is a few ms of a run that
  // names its files, as a pre-commit hook's does, and never spawns git.
  const { execFileSync } = createRequire(import.meta.url)('node:child_process') as typeof ChildProcess;
  let out: string;
  try {
    out = execFileSync('git', ['ls-files', '-z', '--stage'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    // Failing closed: an empty list would read as "no detached spawns".
    throw new CheckError(`cannot list the tracked files with git in ${cwd}: ${stderr || (error as Error).message}; name the paths to check instead`);
  }
  // `MODE OBJECT STAGE\tPATH`; a file in a merge conflict is listed once per stage.
  const seen = new Set<string>();
  const files: Array<{ path: string; mode: string }> = [];
  for (const record of out.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const path = record.slice(tab + 1);
    if (seen.has(path)) continue;
    seen.add(path);
    files.push({ path, mode: record.slice(0, record.indexOf(' ')) });
  }
  return files;
}

export type ReadResult = { text: string } | { skipped: string };

/**
 * The largest file checked by default: hand-written source is far smaller, and a parser's tree of
 * a file this size already takes hundreds of MB. A larger file fails the run (exit 2, by name)
 * rather than being skipped in silence; `--max-file-size` raises the bound.
 */
export const DEFAULT_MAX_FILE_BYTES = 16 << 20;

/**
 * Reads a target without ever blocking on it or loading more than `maxBytes` (regular-file.ts). A
 * listed file is opened without following a symlink; a named one is followed.
 */
export function readTarget(target: Target, maxBytes: number = DEFAULT_MAX_FILE_BYTES): ReadResult {
  let read: RegularFileRead;
  try {
    read = readRegularFile(target.absolute, { followSymlink: target.named, maxBytes });
  } catch (error) {
    throw new CheckError(`cannot read ${target.path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if ('text' in read) return read;
  switch (read.problem) {
    case 'unopenable':
      if (target.fromGit && read.code === 'ENOENT') return { skipped: '' }; // deleted in the work tree, still in the index
      if (read.code === 'ELOOP' && !target.named) return { skipped: `${target.path}: became a symbolic link, not followed` };
      throw new CheckError(`cannot read ${target.path}: ${read.code}`);
    case 'not-regular':
      if (target.named) throw new CheckError(`cannot check ${target.path}: not a regular file`);
      return { skipped: `${target.path}: not a regular file, skipped` };
    case 'too-large':
      throw new CheckError(
        `cannot check ${target.path}: ${formatSize(read.size)}, over the ${formatSize(maxBytes)} limit on a checked file (raise it with --max-file-size SIZE, or skip the file in the configuration)`,
      );
  }
}
