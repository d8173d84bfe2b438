// Which file of the project a module specifier names: one resolution for the analyser (js-rules.ts),
// the reach test that may spare it a parse (project-reach.ts) and the spawn gate before both
// (checker.ts), so that the three never disagree on what is the project's own module.
//
// A relative specifier (`./x`, `../y`) is looked up from the importing file's folder, with the
// candidates TypeScript and Node try (the name itself, `.js` written for `.ts`, each extension,
// then `index` in a folder of that name). Only a regular file (not a link) inside the root counts.
import { dirname, resolve } from 'node:path';
import { isInside, isRegularFile } from './regular-file.js';

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
 * Answers by root, importing folder and specifier: most of a project imports the same few
 * modules. Kept for the process (a run of the command); a long-lived host forgets them
 * (forgetProjectLayout) so that a file created meanwhile is found.
 */
const resolved = new Map<string, string | undefined>();

/**
 * The project file `specifier`, imported from the file `from`, names inside `root` (both
 * absolute, or relative to the working directory), or undefined: a package, or a module that
 * is not there.
 */
export function resolveProjectModule(from: string, specifier: string, root: string): string | undefined {
  if (!isRelative(specifier)) return undefined;
  const folder = dirname(resolve(from));
  const top = resolve(root);
  const key = `${top}\0${folder}\0${specifier}`;
  if (resolved.has(key)) return resolved.get(key);
  const found = moduleFileAt(resolve(folder, specifier), top);
  resolved.set(key, found);
  return found;
}

/** Forgets every answer: for a host that lives on while files change (the ESLint plugin, per file). */
export function forgetProjectLayout(): void {
  resolved.clear();
}
