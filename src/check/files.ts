// Which files a run looks at: the repository's tracked files or the named paths, minus the default
// skips (tests, fixtures, vendored and generated trees) and the project's own spawn helpers.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { languageOf } from './checker.js';
import { CheckError, type CheckConfig } from './config.js';
import type { Language } from './types.js';

/** Folder names skipped anywhere in a path unless the configuration turns default skips off. */
const SKIPPED_FOLDERS = new Set([
  'test', 'tests', '__tests__', '__mocks__', 'fixtures', '__fixtures__', 'testdata', 'evals',
  'node_modules', 'bower_components', 'vendor', 'vendored', 'third_party', 'dist', 'build', 'out',
  'generated', '__generated__', '__pycache__', '.git', '.venv', 'venv', 'site-packages',
]);
const SKIPPED_FILES = [/^test_.*\.py$/, /_test\.py$/, /^conftest\.py$/, /\.(?:test|spec)\.[^.]+$/, /\.min\.js$/, /\.(?:generated|gen)\.[^.]+$/];

export interface Target {
  /** As reported: relative to the working directory, with forward slashes. */
  path: string;
  absolute: string;
  language: Language;
  /** Listed by git: a file deleted from the work tree but not from the index is skipped, not an error. */
  fromGit: boolean;
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

  /** Skipped when found by listing or walking; a file named on the command line skips only the helper test. */
  isSkipped(path: string): boolean {
    if (this.isHelper(path) || this.skips.some((re) => re.test(path))) return true;
    if (!this.config.defaultSkips) return false;
    const parts = path.split('/');
    const name = parts.pop() ?? '';
    return parts.some((part) => SKIPPED_FOLDERS.has(part)) || SKIPPED_FILES.some((re) => re.test(name));
  }
}

function display(absolute: string, cwd: string): string {
  const rel = relative(cwd, absolute);
  return (rel === '' || rel.startsWith('..') ? absolute : rel).split(sep).join('/');
}

export function listTargets(paths: string[], cwd: string, filter: PathFilter): Target[] {
  const targets: Target[] = [];
  const add = (absolute: string, fromGit: boolean, named: boolean) => {
    const path = display(absolute, cwd);
    const language = languageOf(path);
    if (!language) return;
    if (named ? filter.isHelper(path) : filter.isSkipped(path)) return;
    targets.push({ path, absolute, language, fromGit });
  };
  if (paths.length === 0) {
    for (const rel of gitTrackedFiles(cwd)) add(join(cwd, rel), true, false);
    return targets;
  }
  for (const given of paths) {
    const absolute = resolve(cwd, given);
    let isDirectory: boolean;
    try {
      isDirectory = statSync(absolute).isDirectory();
    } catch (error) {
      throw new CheckError(`cannot read ${given}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (!isDirectory) add(absolute, false, true);
    else walk(absolute, (file) => add(file, false, false), (dir) => !filter.isSkipped(display(dir, cwd)) || dir === absolute);
  }
  return targets;
}

function walk(dir: string, onFile: (path: string) => void, enter: (dir: string) => boolean): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    throw new CheckError(`cannot list ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (enter(path)) walk(path, onFile, enter);
    } else if (entry.isFile()) onFile(path);
  }
}

function gitTrackedFiles(cwd: string): string[] {
  let out: string;
  try {
    out = execFileSync('git', ['ls-files', '-z'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    // Failing closed: an empty list would read as "no detached spawns".
    throw new CheckError(`cannot list the tracked files with git in ${cwd}: ${stderr || (error as Error).message}; name the paths to check instead`);
  }
  return out.split('\0').filter((rel) => rel !== '');
}
