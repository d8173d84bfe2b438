// Which file of the project a module specifier names: one resolution for the analyser (js-rules.ts),
// the reach test that may spare it a parse (project-reach.ts) and the spawn gate before both
// (checker.ts), so that the three never disagree on what is the project's own module.
//
// A relative specifier (`./x`, `../y`) is looked up from the importing file's folder. Any other is
// the project's only where the nearest tsconfig.json or jsconfig.json maps it to a file of the
// project (ts-config.ts: `paths`, `baseUrl`); else it is a package, whose spawns are known by its
// name (js-rules.ts: SPAWN_MODULES). Each path is tried with the candidates TypeScript and Node try
// (the name itself, `.js` written for `.ts`, each extension, then `index` in a folder of that
// name). Only a regular file (not a link) inside the root counts, never one under node_modules.
import { isBuiltin } from 'node:module';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { isInside, isRegularFile } from './regular-file.js';
import { aliasedPaths, aliasesFor, forgetConfigs } from './ts-config.js';

/** A relative module specifier: `.`, `..`, `./x`, `../x`. */
export const isRelative = (specifier: string): boolean => specifier === '.' || specifier === '..' || specifier.startsWith('./') || specifier.startsWith('../');

/** Modules larger than this are not read (for their exports, or for a spawn module's name): a generated bundle, not a wrapper. */
export const MAX_MODULE_BYTES = 1 << 20;
const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];

/**
 * The module file for `base` (an absolute path without its extension, or with the `.js` its
 * source is imported by): the first regular file among TypeScript's and Node's candidates, in
 * their order, inside `root`; undefined where there is none.
 */
function moduleFileAt(base: string, root: string): string | undefined {
  if (!isInside(root, base)) return undefined; // every candidate is `base` or under it
  const swapped = base.replace(/\.js$/, '.ts').replace(/\.jsx$/, '.tsx').replace(/\.mjs$/, '.mts').replace(/\.cjs$/, '.cts');
  if (isRegularFile(base)) return base;
  if (swapped !== base && isRegularFile(swapped)) return swapped;
  for (const ext of EXTENSIONS) if (isRegularFile(base + ext)) return base + ext;
  for (const ext of EXTENSIONS) if (isRegularFile(`${base}/index${ext}`)) return `${base}/index${ext}`;
  return undefined;
}

/**
 * Relative answers by root, importing folder and specifier: most of a project imports the same
 * few modules (aliased answers are kept with their config's aliases). Kept for the process (a run
 * of the command); a long-lived host forgets them (forgetProjectLayout), to see files as they are.
 */
const resolved = new Map<string, string | undefined>();

/**
 * The project file `specifier`, imported from the file `from`, names inside `root` (both
 * absolute, or relative to the working directory), or undefined: a package, or a module that
 * is not there.
 */
export function resolveProjectModule(from: string, specifier: string, root: string): string | undefined {
  const folder = dirname(absolute(from));
  const top = absolute(root);
  if (!isRelative(specifier)) return aliasedModule(folder, specifier, top);
  const key = `${top}\0${folder}\0${specifier}`;
  if (resolved.has(key)) return resolved.get(key);
  const found = moduleFileAt(resolve(folder, specifier), top);
  resolved.set(key, found);
  return found;
}

/**
 * A bare specifier that a config may map: not Node's own module (`fs`, `node:fs`: a project file
 * of that name under baseUrl is not what Node loads), nor a URL or another scheme's (`data:`,
 * `npm:`), nor an absolute path.
 */
const mayBeAliased = (specifier: string): boolean => specifier !== '' && !specifier.startsWith('/') && !/^[a-z][a-z\d+.-]*:/i.test(specifier) && !isBuiltin(specifier);

/** The file a bare specifier names through the aliases of the config nearest `folder`, if any. */
function aliasedModule(folder: string, specifier: string, root: string): string | undefined {
  if (!mayBeAliased(specifier)) return undefined;
  const aliases = aliasesFor(folder, root);
  if (aliases === undefined) return undefined;
  if (aliases.resolved.has(specifier)) return aliases.resolved.get(specifier);
  let found: string | undefined;
  for (const path of aliasedPaths(aliases, specifier)) {
    found = moduleFileAt(path, root);
    // `"*": ["node_modules/*"]` maps packages: an installed package is not the project's own.
    if (found !== undefined && !relative(root, found).split(sep).includes('node_modules')) break;
    found = undefined;
  }
  aliases.resolved.set(specifier, found);
  return found;
}

/** Whether the file at `path` may import project modules by bare names: a config above it sets aliases. */
export function mayImportAliased(path: string, root: string): boolean {
  return aliasesFor(dirname(absolute(path)), absolute(root)) !== undefined;
}

/**
 * A path made absolute, without normalising one that is (the modules met on the way are, as
 * resolve() made them): resolve() on every specifier of every module read was a tenth of the
 * reach test's time.
 */
const absolute = (path: string): string => (isAbsolute(path) ? path : resolve(path));

/** Forgets every answer and config: for a host that lives on while files change (the ESLint plugin, per file). */
export function forgetProjectLayout(): void {
  resolved.clear();
  forgetConfigs();
}
