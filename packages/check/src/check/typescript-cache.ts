// Loads TypeScript's parser from a V8 code cache, so that a run does not compile it again.
//
// The parser is packages/check/dist/vendor/typescript-parser.cjs: TypeScript's own code, cut by the
// build to what createSourceFile reaches (scripts/build-typescript-parser.mjs; 1.9 MB where the
// whole typescript.js is 9 MB). It is compiled once through `vm.Script`, wrapped as Node wraps a
// CommonJS module, and put into require's cache under its own file name: the
// `require('../vendor/typescript-parser.cjs')` in js-rules.ts then finds it there. (`module.
// enableCompileCache` does not exist on Node 20, and `v8.setFlagsFromString` comes too late.)
// The code cache is written when the process ends, after the run, so it holds the functions the
// parser compiled lazily as well. It lives in node_modules/.cache/proc-leash-check (the
// node_modules that holds this package, or the workspace's: owned by whoever installed it, not a
// shared temporary folder), named by the parser file's size and mtime, Node's version, the
// architecture and the V8 flags the command set on itself (v8-tuning.ts);
// it is written atomically (a temporary file renamed), the caches of other versions are removed
// when it is, and V8 itself rejects data that does not
// match (its version, flags and the source), in which case the source is compiled as usual and
// the cache rewritten. Cached data is run as code, so a cache file or folder that another user
// could have written (not ours or root's, writable by group or others, a link) is not used. Any
// failure here (a read-only install, an odd layout) just means no cache.
import { isAscii } from 'node:buffer';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { commandFlagsTag, v8FlagsTag } from './v8-tuning.js';

let done = false;

/** The parser's file: dist/vendor/ of this package, from dist/check/ or dist/command/ alike. */
const PARSER = fileURLToPath(new URL('../vendor/typescript-parser.cjs', import.meta.url));

/**
 * The cache folder: .cache/proc-leash-check in the node_modules that holds this package, or, in a
 * workspace (packages/check), in the first node_modules above it.
 */
function cacheFolder(): string | undefined {
  const packageRoot = dirname(dirname(dirname(PARSER)));
  for (let at = dirname(packageRoot); ; at = dirname(at)) {
    if (basename(at) === 'node_modules') return join(at, '.cache', 'proc-leash-check');
    try {
      if (statSync(join(at, 'node_modules')).isDirectory()) return join(at, 'node_modules', '.cache', 'proc-leash-check');
    } catch {
      // none here: look further up
    }
    if (dirname(at) === at) return undefined;
  }
}

/** Puts TypeScript's parser into require's cache, compiled from the code cache when there is a valid one. */
export function preloadTypeScript(): void {
  if (done) return;
  done = true;
  try {
    const require = createRequire(import.meta.url);
    const path = PARSER;
    if (require.cache[path]) return;
    const stat = statSync(path);
    const folder = cacheFolder();
    // One file per set of V8 flags this process set on itself: V8 rejects a cache made under others.
    const base = `typescript-parser-${stat.size}-${Math.trunc(stat.mtimeMs)}-node${process.version}-${process.arch}`;
    const flags = v8FlagsTag();
    const cacheFile = folder === undefined ? undefined : join(folder, `${base}${flags === '' ? '' : `-${flags}`}.v8cache`);
    // The cache is run as code: it is used, and written, only where no one else could write it.
    const usable = folder !== undefined && cacheFile !== undefined && [join(folder, '..'), folder].every(trustedIfPresent);
    const cachedData = usable ? readTrusted(cacheFile) : undefined;
    const source = readSource(path);
    const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: path, ...(cachedData ? { cachedData } : {}) });
    const module = new Module(path);
    module.filename = path;
    module.paths = (Module as unknown as { _nodeModulePaths(from: string): string[] })._nodeModulePaths(dirname(path));
    const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
    wrapper.call(module.exports, module.exports, leanRequire(createRequire(path)), module, path, dirname(path));
    module.loaded = true;
    require.cache[path] = module;
    if (usable && (cachedData === undefined || script.cachedDataRejected === true)) {
      process.once('exit', () => writeCache(folder, cacheFile, base, script));
    }
  } catch {
    // No cache: js-rules.ts requires the parser the ordinary way.
  }
}

/**
 * The parser's require, less two built-ins its top level loads (the compiler's `sys`) for what
 * parsing never uses: `crypto` (only `createHash`, for build info) and `perf_hooks` (only `performance`, for its
 * timings). Loading them was about 8 ms of every run that parses JS. `crypto` becomes an object
 * whose `createHash` loads the real module when first called; `perf_hooks`'s `performance` is the
 * global one, the same object. Anything else goes to the real require.
 */
function leanRequire(real: NodeJS.Require): NodeJS.Require {
  const crypto = { createHash: (...args: Parameters<typeof import('node:crypto').createHash>) => (real('crypto') as typeof import('node:crypto')).createHash(...args) };
  const lean = (id: string): unknown => (id === 'crypto' ? crypto : id === 'perf_hooks' ? { performance: globalThis.performance } : real(id));
  return Object.assign(lean, real) as NodeJS.Require;
}

/**
 * The parser is plain ASCII, as typescript.js is: decoded as Latin-1 it is the same text, made in a
 * third of the time that UTF-8 validation takes. Anything else is
 * decoded as UTF-8, as require() would.
 */
function readSource(path: string): string {
  const bytes = readFileSync(path);
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

function writeCache(folder: string, cacheFile: string, base: string, script: Script): void {
  try {
    mkdirSync(folder, { recursive: true, mode: 0o755 });
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    // A new file ('wx': never through a link planted at that name), writable by its owner alone.
    writeFileSync(temporary, script.createCachedData(), { flag: 'wx', mode: 0o644 });
    renameSync(temporary, cacheFile);
  } catch {
    // A read-only install: every run compiles typescript, as it would without this file.
    return;
  }
  pruneOthers(folder, base);
}

/**
 * True for a path that is absent, or a real file or folder (not a link) owned by this user or root
 * and writable by no one else. A cache another user could have written could hold any code. Where
 * there are no Unix owners (Windows), the folder's ACLs are the install's own.
 */
function trustedIfPresent(path: string): boolean {
  let stat;
  try {
    stat = lstatSync(path);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  return !stat.isSymbolicLink() && ownedAlone(stat);
}

function ownedAlone(stat: Stats): boolean {
  const uid = process.getuid?.();
  return uid === undefined || ((stat.uid === uid || stat.uid === 0) && (stat.mode & 0o022) === 0);
}

/**
 * The cache file's bytes, if it is a regular file that passes the same test: judged on the open
 * descriptor (never through a link), so a file swapped after it was judged is never the one read.
 */
function readTrusted(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined; // absent (the first run), a link, or unreadable: compiled from source
  }
  try {
    const stat = fstatSync(fd);
    return stat.isFile() && ownedAlone(stat) ? readFileSync(fd) : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes the caches of other parser or Node versions (and those of the whole typescript.js that
 * earlier releases kept here): a cache is written only when this one's was missing or rejected,
 * which is when an upgrade has left the old one (about 1.2 MB each) for good.
 * Of this version's, the command's (under its flags' tag) and a host's (no flags set: the ESLint
 * plugin's) are kept, and those of flags no longer used are removed, with temporary files left by a
 * writer that died before renaming its own.
 */
const STALE_TEMPORARY_MS = 60_000;

function ageMs(path: string): number {
  try {
    return Date.now() - lstatSync(path).mtimeMs;
  } catch {
    return 0; // gone already
  }
}

function pruneOthers(folder: string, base: string): void {
  const tag = commandFlagsTag();
  const keep = new Set([`${base}.v8cache`, `${base}-${tag}.v8cache`]);
  try {
    for (const name of readdirSync(folder)) {
      if (!name.startsWith('typescript-')) continue;
      if (name.endsWith('.v8cache') && !keep.has(name)) rmSync(join(folder, name), { force: true });
      // A temporary file whose writer died before renaming it (a write takes milliseconds).
      else if (name.endsWith('.tmp') && ageMs(join(folder, name)) > STALE_TEMPORARY_MS) rmSync(join(folder, name), { force: true });
    }
  } catch {
    // Nothing to prune, or not ours to prune.
  }
}
