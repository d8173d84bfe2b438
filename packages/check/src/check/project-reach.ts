// Whether a JS/TS file's project imports can bring it a spawn function, read from text alone, so
// that a file whose only way to one is a project module is not parsed when none of those modules,
// nor any module they import in turn, binds a spawn module (js-rules.ts follows them at parse
// time, parsing each one whole).
//
// A project module's exports are spawn functions or child handles only through a binding of its
// own: a spawn module (whose name is then in its text, as the spawn gate reads a checked file) or
// another project module. So the modules reachable through relative specifiers, and through bare
// ones the project's tsconfig.json or jsconfig.json maps to its files, are read, and the answer is
// no only when none of them holds a spawn module's name. It errs towards yes: every quoted
// relative string counts as a specifier (the analyser follows only imports and requires), the
// chain is followed to any depth (the analyser stops at four), and a specifier written with an
// escape is a yes. A specifier names the file the analyser's resolution picks: the same function
// (module-resolution.ts).
import { resolve } from 'node:path';
import { isRelative, MAX_MODULE_BYTES, mayImportAliased, resolveProjectModule } from './module-resolution.js';
import { readRegularFile } from './regular-file.js';

/** The spawn gate's words for a spawn module or spawn options, without its relative specifiers (checker.ts). */
// A module whose name says it spawns (`@ionic/utils-subprocess`, `@expo/spawn-async`): its
// children can be unref'd (js-rules.ts: SPAWN_FAMILY_NAMES). Bun's own `Bun.spawn`, a global with
// no import, is such a function too (`Bun.spawn(cmd).unref()`). A POSIX binding (`posix`,
// `posix-node`) gives the process `setsid` and `setpgid` for itself (js-rules.ts: checkSelfDetach).
export const SPAWN_MODULE_WORDS = /child_process|execa|cross-spawn|nano-spawn|tinyexec|node-pty|\bBun\.spawn\b|\bDeno\.Command\b|['"`]daemon['"`]|['"`](?:@[\w.-]+\/)?(?:node-)?posix(?:-node)?['"`]|(?:Spawn|Exec|Fork|Process)\w*Options|(?:from|require\s*\(|import\s*\()\s*['"`][^'"`\n]*(?:spawn|subprocess)/;
/** A quoted string that starts as a relative specifier does (`'./x'`, `"../x"`, `'.'`). */
const RELATIVE_STRING = /(['"`])(\.\.?(?:\/[^'"`\n]*)?)\1/g;
/**
 * A string in a module specifier's place (after `from`, `require(`, `import(` or `import`): where a
 * bare name the project's config maps is read. Not every string, as for relative ones: a bare
 * string is any word, and each would be looked up under the baseUrl.
 */
const IMPORTED_STRING = /(?:\bfrom|\brequire\s*\(|\bimport\s*\(?)\s*(['"`])([^'"`\n]+)\1/g;
/** A module specifier written with an escape: what it names cannot be read from the text. */
const ESCAPED_SPECIFIER = /(?:from|require|import|getBuiltinModule)\s*\(?\s*['"`][^'"`\n]*\\/;

interface ModuleFacts {
  /** Binds a spawn module, or cannot be told not to. */
  spawns: boolean;
  /** The files its relative strings and mapped imports can name. */
  imports: string[];
}

/** Text facts by root and absolute path, for the process: a module imported by many files is read once. */
const facts = new Map<string, ModuleFacts>();
/** Files (by root and path) known to reach a spawn module, or none. */
const reachesSome = new Set<string>();
const reachesNone = new Set<string>();

/** The project files `text` (the file at `file`) can import: by relative strings, and by bare names its config maps. */
function projectImports(file: string, text: string, root: string): string[] {
  const files: string[] = [];
  for (const match of text.matchAll(RELATIVE_STRING)) {
    const found = resolveProjectModule(file, match[2] as string, root);
    if (found !== undefined) files.push(found);
  }
  if (!mayImportAliased(file, root)) return files;
  for (const match of text.matchAll(IMPORTED_STRING)) {
    const specifier = match[2] as string;
    const found = isRelative(specifier) ? undefined : resolveProjectModule(file, specifier, root);
    if (found !== undefined) files.push(found);
  }
  return files;
}

/**
 * Whether `text` (the file at `path`, relative to the working directory) imports a project module
 * by a bare name its config maps (`from 'backend/utils'`): the spawn gate's word for such imports,
 * as a relative specifier is (checker.ts). Reads configs only for a file with none of its words.
 */
export function importsAliasedModule(path: string, text: string, root: string = process.cwd()): boolean {
  if (!mayImportAliased(path, root)) return false;
  for (const match of text.matchAll(IMPORTED_STRING)) {
    const specifier = match[2] as string;
    if (!isRelative(specifier) && resolveProjectModule(path, specifier, root) !== undefined) return true;
  }
  return false;
}

function factsOf(key: string, file: string, root: string): ModuleFacts {
  let known = facts.get(key);
  if (known) return known;
  const read = readRegularFile(file, { followSymlink: false, maxBytes: MAX_MODULE_BYTES });
  // A module the analyser cannot read gives it nothing.
  if (!('text' in read)) known = { spawns: false, imports: [] };
  else known = { spawns: SPAWN_MODULE_WORDS.test(read.text) || ESCAPED_SPECIFIER.test(read.text), imports: projectImports(file, read.text, root) };
  facts.set(key, known);
  return known;
}

interface Frame {
  key: string;
  imports: string[];
  next: number;
}

/**
 * Whether a module imported by project specifiers from `text` (the file at `path`, relative to
 * the working directory) can bind a spawn module, directly or through modules it imports, inside
 * `root`. False means no project binding of the file can ever be a spawn function or a handle.
 */
export function projectMayBindSpawn(path: string, text: string, root: string = process.cwd()): boolean {
  if (ESCAPED_SPECIFIER.test(text)) return true;
  const top = resolve(root);
  const seen = new Set<string>();
  // A depth-first walk by an explicit chain (an import chain can be any length): when a module
  // that binds a spawn module is met, every module on the chain to it reaches one too.
  const chain: Frame[] = [{ key: '', imports: projectImports(path, text, top), next: 0 }];
  const found = (): true => {
    for (const frame of chain) if (frame.key !== '') reachesSome.add(frame.key);
    return true;
  };
  while (chain.length > 0) {
    const frame = chain[chain.length - 1] as Frame;
    const file = frame.imports[frame.next++];
    if (file === undefined) {
      chain.pop();
      continue;
    }
    const key = `${top}\0${file}`;
    if (reachesSome.has(key)) return found();
    if (seen.has(key) || reachesNone.has(key)) continue;
    seen.add(key);
    const module = factsOf(key, file, top);
    chain.push({ key, imports: module.imports, next: 0 });
    if (module.spawns) return found();
  }
  // Every module reachable from here was read and binds none: neither do they from anywhere.
  for (const key of seen) reachesNone.add(key);
  return false;
}
