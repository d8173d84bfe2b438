// The module aliases of a project's tsconfig.json or jsconfig.json: `compilerOptions.baseUrl` and
// `compilerOptions.paths`, through which a project imports its own modules by bare names
// (`import { spawnAsync } from 'backend/utils'`, `from '@/lib/run'`). module-resolution.ts
// resolves such a specifier with them; only a file found so makes it the project's own.
//
// Read as TypeScript reads them, in what matters here: the nearest config above the file (a
// tsconfig.json before a jsconfig.json in one folder), `extends` followed to relative files (a
// list of them too, later ones winning), `baseUrl` relative to the config that sets it, `paths`
// relative to the baseUrl, or without one to the config that sets them. Never TypeScript's own
// reader: the check loads TypeScript only to parse a file that needs it, and a config is read
// before that is known. What is not read so (a config outside the root, a package's config named
// by `extends`, one that is not JSON even with comments) is as if absent.
import { dirname, join, resolve } from 'node:path';
import { isInside, isRegularFile, readRegularFile } from './regular-file.js';

/** A config is a few KiB; a monorepo's generated `paths` some hundred. Larger is no config. */
const MAX_CONFIG_BYTES = 256 << 10;
/** How deep an `extends` chain is read, and how many configs one extends: real ones are one or two. */
const MAX_EXTENDS_DEPTH = 5;
/** Targets tried for one `paths` key: real ones list one to three. */
const MAX_TARGETS = 8;
const CONFIG_NAMES = ['tsconfig.json', 'jsconfig.json'];

/** The options that place modules, with their paths made absolute. */
interface PlacingOptions {
  baseUrl?: string;
  paths?: Record<string, unknown>;
  /** The folder of the config that set `paths`: their base when no baseUrl is set. */
  pathsBase?: string;
}

/** A `paths` key with a `*`: what it matches, and the targets its match fills in. */
interface Wildcard {
  prefix: string;
  suffix: string;
  targets: string[];
}

/** A config's aliases, ready to resolve with. */
export interface Aliases {
  /** The folder a bare specifier is also looked up in. */
  baseUrl: string | undefined;
  /** `paths` keys without a `*`, to their absolute targets. */
  exact: Map<string, string[]>;
  wildcards: Wildcard[];
  /** Resolutions made with these aliases, by specifier (module-resolution.ts keeps them here). */
  resolved: Map<string, string | undefined>;
}

/**
 * tsconfig's JSON: comments and trailing commas allowed, as TypeScript allows them. Undefined
 * when it is not JSON even so.
 */
export function parseConfigJson(text: string): unknown {
  try {
    return JSON.parse(plainJson(text));
  } catch {
    return undefined;
  }
}

const QUOTE = 34;
const BACKSLASH = 92;
const SLASH = 47;
const STAR = 42;
const COMMA = 44;
/** Text up to the next character that may start a string, a comment, or end a list or an object. */
const PLAIN_RUN = /[^"/,\]}]+/y;
const SIGNIFICANT = /\S/;

/**
 * `text` without its comments (each left as a space) and without a comma that only whitespace or
 * comments separate from the `}` or `]` after it. One pass that steps over each string whole, so a
 * `//` or `/*` in a path is kept; linear however the text is made (expressions that tried every
 * quote as a string's start took seconds on a planted `"\"\"\"...`).
 */
function plainJson(text: string): string {
  const parts: string[] = [];
  let comma = -1; // the part holding a comma nothing significant has followed yet
  for (let i = 0; i < text.length; ) {
    PLAIN_RUN.lastIndex = i;
    const run = PLAIN_RUN.exec(text);
    if (run) {
      parts.push(run[0]);
      if (SIGNIFICANT.test(run[0])) comma = -1;
      i += run[0].length;
      continue;
    }
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      while (end < text.length) {
        const d = text.charCodeAt(end);
        end += d === BACKSLASH ? 2 : 1;
        if (d === QUOTE) break;
      }
      parts.push(text.slice(i, end));
      comma = -1;
      i = end;
    } else if (c === SLASH && (text.charCodeAt(i + 1) === SLASH || text.charCodeAt(i + 1) === STAR)) {
      const end = text.charCodeAt(i + 1) === SLASH ? text.indexOf('\n', i) : text.indexOf('*/', i + 2);
      parts.push(' ');
      i = end === -1 ? text.length : text.charCodeAt(i + 1) === SLASH ? end : end + 2;
    } else if (c === COMMA) {
      comma = parts.length;
      parts.push(',');
      i++;
    } else {
      // `}` or `]` (or a lone `/`, which JSON.parse refuses): a trailing comma before a closing goes.
      if (c !== SLASH && comma !== -1) parts[comma] = ' ';
      comma = -1;
      parts.push(text.charAt(i));
      i++;
    }
  }
  return parts.join('');
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Configs read, by root and absolute path: each is read once per run, however many folders it serves. */
const configs = new Map<string, PlacingOptions | null>();

/**
 * The placing options of the config at `file` with those of what it extends, or undefined when
 * it cannot be read as a config. `chain` holds the configs being read on the way here: a cycle
 * of `extends` ends where it comes back, and a chain ends at MAX_EXTENDS_DEPTH.
 */
function readConfig(file: string, root: string, chain: readonly string[] = []): PlacingOptions | undefined {
  if (chain.includes(file) || chain.length >= MAX_EXTENDS_DEPTH || !isInside(root, file)) return undefined;
  const key = `${root}\0${file}`;
  const known = configs.get(key);
  if (known !== undefined) return known ?? undefined;
  const read = readRegularFile(file, { followSymlink: false, maxBytes: MAX_CONFIG_BYTES });
  const config = 'text' in read ? parseConfigJson(read.text) : undefined;
  if (!isRecord(config)) {
    configs.set(key, null);
    return undefined;
  }
  const options: PlacingOptions = {};
  for (const base of extendedFiles(file, config.extends)) Object.assign(options, readConfig(base, root, [...chain, file]));
  const own = config.compilerOptions;
  if (isRecord(own)) {
    if (typeof own.baseUrl === 'string') options.baseUrl = resolve(dirname(file), own.baseUrl);
    if (isRecord(own.paths)) {
      options.paths = own.paths;
      options.pathsBase = dirname(file);
    }
  }
  configs.set(key, options);
  return options;
}

/**
 * The files `extends` names that can be read here: relative or absolute paths, `.json` added
 * where the name has none and no such file is there (as TypeScript does). A package's config
 * (`@tsconfig/node20`) is left out: it sets no project's paths.
 */
function extendedFiles(file: string, value: unknown): string[] {
  const names = typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
  const files: string[] = [];
  for (const name of names.slice(0, MAX_EXTENDS_DEPTH)) {
    if (!/^(?:\.\.?(?:[/\\]|$)|\/)/.test(name)) continue;
    const path = resolve(dirname(file), name);
    files.push(path.endsWith('.json') || isRegularFile(path) ? path : `${path}.json`);
  }
  return files;
}

/** The aliases of placing options, or undefined when they set none. */
function aliasesOf(options: PlacingOptions): Aliases | undefined {
  const exact = new Map<string, string[]>();
  const wildcards: Wildcard[] = [];
  const base = options.baseUrl ?? options.pathsBase;
  for (const [key, value] of Object.entries(options.paths ?? {})) {
    if (base === undefined || !Array.isArray(value)) continue;
    const targets = value.filter((target): target is string => typeof target === 'string').slice(0, MAX_TARGETS).map((target) => resolve(base, target));
    const star = key.indexOf('*');
    if (star === -1) exact.set(key, targets);
    else if (key.indexOf('*', star + 1) === -1) wildcards.push({ prefix: key.slice(0, star), suffix: key.slice(star + 1), targets });
    // A key with two stars is an error to TypeScript: no module is found through it.
  }
  if (options.baseUrl === undefined && exact.size === 0 && wildcards.length === 0) return undefined;
  return { baseUrl: options.baseUrl, exact, wildcards, resolved: new Map() };
}

/**
 * Where `specifier` may be, by `aliases`, in TypeScript's order: the targets of the `paths` key
 * it matches (an exact key, else the `*` key with the longest prefix, its `*` filled in), then
 * the baseUrl. Paths without an extension: module-resolution.ts tries its candidates for each.
 */
export function aliasedPaths(aliases: Aliases, specifier: string): string[] {
  let targets = aliases.exact.get(specifier)?.slice();
  if (targets === undefined) {
    let best: Wildcard | undefined;
    for (const wildcard of aliases.wildcards) {
      const fits = specifier.length >= wildcard.prefix.length + wildcard.suffix.length && specifier.startsWith(wildcard.prefix) && specifier.endsWith(wildcard.suffix);
      if (fits && (best === undefined || wildcard.prefix.length > best.prefix.length)) best = wildcard;
    }
    const matched = best && specifier.slice(best.prefix.length, specifier.length - best.suffix.length);
    // resolve(): a match holding `..` is normalised, so that the root's bound reads it right.
    targets = best?.targets.map((target) => resolve(target.replace('*', () => matched as string))) ?? [];
  }
  if (aliases.baseUrl !== undefined) targets.push(join(aliases.baseUrl, specifier));
  return targets;
}

/** The aliases found for each folder (by root), or null for none: a whole run reads each config once. */
const aliasesByFolder = new Map<string, Aliases | null>();

/**
 * The aliases for a file in `folder`: those of the nearest tsconfig.json or jsconfig.json in it or
 * above it, up to `root` (both absolute). A config that sets none ends the search all the same,
 * as it does for TypeScript; one that cannot be read is passed over.
 */
export function aliasesFor(folder: string, root: string): Aliases | undefined {
  const walked: string[] = [];
  let found: Aliases | null = null;
  for (let at = folder; ; at = dirname(at)) {
    const key = `${root}\0${at}`;
    const known = aliasesByFolder.get(key);
    if (known !== undefined) {
      found = known;
      break;
    }
    if (!isInside(root, at)) break;
    walked.push(key);
    const options = configIn(at, root);
    if (options) {
      found = aliasesOf(options) ?? null;
      break;
    }
    if (at === root) break;
  }
  for (const key of walked) aliasesByFolder.set(key, found);
  return found ?? undefined;
}

function configIn(folder: string, root: string): PlacingOptions | undefined {
  for (const name of CONFIG_NAMES) {
    const options = readConfig(join(folder, name), root);
    if (options) return options;
  }
  return undefined;
}

/** Forgets every config read: for a host that lives on while they change (the ESLint plugin). */
export function forgetConfigs(): void {
  configs.clear();
  aliasesByFolder.clear();
}
