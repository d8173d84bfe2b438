// `leash check` lives in its own package, proc-leash-check, so that the core installs without its
// parsers (tree-sitter's grammars, 22 MB, and TypeScript's parser). This finds that package in a few fixed places only —
// next to the core, then in the project the command runs in — proves nobody else could have put it
// there, and hands it the arguments. Never Node's full search: that walks node_modules in every
// parent folder, where anyone who can write /tmp or a shared parent could plant one.
import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isWithin, vetDirectoriesDown, vetTree, type TrustProblem } from '../sys/file-trust.js';

export const CHECK_PACKAGE = 'proc-leash-check';
/** Exit status when the check cannot run at all, the same as the check's own. */
const EXIT_CANNOT_RUN = 2;

type CheckMain = (argv: string[]) => Promise<number>;

/** One place the package may be: `dir` itself, and the folder its links must stay inside. */
export interface CheckPlace {
  dir: string;
  within: string;
}

/**
 * The places, in order: the core's own node_modules (a dependency, or this repository's workspace
 * link), the node_modules the core itself is installed in (its sibling), then the project of the
 * working directory — its own node_modules only, never a parent's.
 */
export function checkPlaces(leashRoot: string, cwd: string): CheckPlace[] {
  const places = [{ dir: join(leashRoot, 'node_modules', CHECK_PACKAGE), within: leashRoot }];
  const installedIn = dirname(leashRoot);
  if (basename(installedIn) === 'node_modules') places.push({ dir: join(installedIn, CHECK_PACKAGE), within: dirname(installedIn) });
  places.push({ dir: join(cwd, 'node_modules', CHECK_PACKAGE), within: cwd });
  return places;
}

export type Located = { entry: string } | { refused: TrustProblem; dir: string } | undefined;

function isAbsent(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/**
 * Where Node would find package `name` for code in `from`: the first `node_modules/NAME` in `from`
 * or a folder above it. Only the part inside `within` is ours to vouch for.
 */
function nodeModulesLookup(from: string, name: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    try {
      lstatSync(candidate);
      return candidate;
    } catch (error) {
      if (!isAbsent(error)) throw error;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The dependencies of the package at `dir` (a real path), and theirs, under the package's own
 * rules: Node resolves them from the package upwards, so each one it would find must lie inside
 * `within` and pass the same checks. A dependency installed nowhere is left to fail at import.
 */
function vetDependencies(dir: string, manifest: Manifest, within: string, uid: number, seen: Set<string>): TrustProblem | undefined {
  for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
    const found = nodeModulesLookup(dir, name);
    if (found === undefined) continue;
    const real = realpathSync(found);
    if (!isWithin(within, found) || !isWithin(within, real)) {
      return { path: found, reason: `where Node would load its dependency ${name} from, outside ${within}` };
    }
    if (seen.has(real)) continue;
    seen.add(real);
    const problem =
      vetDirectoriesDown(within, realpathSync(dirname(found)), uid) ??
      vetDirectoriesDown(within, real, uid) ??
      vetTree(real, uid, within, new Set(['node_modules'])) ??
      vetDependencies(real, JSON.parse(readFileSync(join(real, 'package.json'), 'utf8')) as Manifest, within, uid, seen);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * The package at `place`: its ES entry, a refusal, or undefined when it is not there. `uid`
 * undefined (Windows) skips the ownership and mode checks; the places stay the same.
 */
function inspectPlace(place: CheckPlace, uid: number | undefined): Located {
  try {
    lstatSync(place.dir);
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  }
  const within = realpathSync(place.within);
  const real = realpathSync(place.dir);
  // A link (an npm workspace, pnpm's store) is followed only while it stays in the project or install.
  if (!isWithin(within, real)) return { refused: { path: place.dir, reason: `a link to ${real}, outside ${within}` }, dir: place.dir };
  const manifest = join(real, 'package.json');
  if (!existsSync(manifest)) return undefined;
  if (uid !== undefined) {
    const problem =
      vetDirectoriesDown(within, realpathSync(dirname(place.dir)), uid) ??
      vetDirectoriesDown(within, real, uid) ??
      vetTree(real, uid, within, new Set(['node_modules']));
    if (problem) return { refused: problem, dir: place.dir };
  }
  // require.resolve would pick the CommonJS entry: take the ES entry the manifest names.
  const { exports, ...deps } = JSON.parse(readFileSync(manifest, 'utf8')) as Manifest & { exports: { '.': { default: string }; './command'?: unknown } };
  if (uid !== undefined) {
    const problem = vetDependencies(real, deps, within, uid, new Set([real]));
    if (problem) return { refused: problem, dir: place.dir };
  }
  // The command's own entry where the package has one (a bundle: a few ms less per run), else its main.
  const command = typeof exports['./command'] === 'string' ? join(real, exports['./command']) : undefined;
  const entry = realpathSync(command !== undefined && existsSync(command) ? command : join(real, exports['.'].default));
  if (!isWithin(real, entry)) return { refused: { path: entry, reason: `outside the package ${real}` }, dir: place.dir };
  return { entry };
}

/** The first place that holds the package: its entry or why it is refused; undefined when none does. */
export function locateCheck(places: readonly CheckPlace[], uid: number | undefined = process.getuid?.()): Located {
  for (const place of places) {
    let found: Located;
    try {
      found = inspectPlace(place, uid);
    } catch (error) {
      // Unreadable, malformed or changing under us: not proven, so not run.
      found = { refused: { path: place.dir, reason: `cannot be inspected (${error instanceof Error ? error.message : String(error)})` }, dir: place.dir };
    }
    if (found) return found;
  }
  return undefined;
}

/** The folder of the proc-leash package this module belongs to (dist/src/cli/ is three below it). */
function leashRoot(): string {
  return realpathSync(fileURLToPath(new URL('../../../', import.meta.url)));
}

export async function checkCommand(argv: string[]): Promise<number> {
  const found = locateCheck(checkPlaces(leashRoot(), process.cwd()));
  if (!found) {
    process.stderr.write(
      `leash check needs the ${CHECK_PACKAGE} package (the check and its parsers are installed apart from the core):\n` +
        `  npm install -D ${CHECK_PACKAGE}\n` +
        `(looked next to leash and in ./node_modules of the working directory: run it from the project root)\n`,
    );
    return EXIT_CANNOT_RUN;
  }
  if ('refused' in found) {
    process.stderr.write(
      `leash check: refusing to load ${CHECK_PACKAGE} from ${found.dir}: ${found.refused.path} is ${found.refused.reason}; ` +
        `another user could have put code there. Reinstall it, or make it yours (or root's) and not writable by others (chmod -R go-w).\n`,
    );
    return EXIT_CANNOT_RUN;
  }
  // A package that fails to load or throws must not read as findings (exit 1): it cannot run.
  let checkMain: CheckMain;
  try {
    ({ checkMain } = (await import(pathToFileURL(found.entry).href)) as { checkMain: CheckMain });
  } catch (error) {
    process.stderr.write(`leash check: cannot load ${CHECK_PACKAGE} from ${found.entry}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CANNOT_RUN;
  }
  try {
    return await checkMain(argv);
  } catch (error) {
    process.stderr.write(`leash check: ${CHECK_PACKAGE} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CANNOT_RUN;
  }
}
