// A `leash check` run is a short process that loads the Python grammar (WebAssembly) once and uses
// it for a few hundred small parses. By default V8 also compiles that module's JS-to-Wasm wrappers
// and hot functions with TurboFan on its worker threads: about 0.15 s of CPU per run, more than
// the parses it speeds up. Liftoff alone is the cheaper trade for a command, so the command (never
// the library or the ESLint plugin, which live in someone else's process) sets it on itself before
// anything is compiled. V8 keys its code caches by the flags in force: the TypeScript cache is kept
// per set of flags (typescript-cache.ts), or each kind of process would reject the other's.
import { setFlagsFromString } from 'node:v8';

const COMMAND_FLAGS = ['--liftoff-only'];
/**
 * The V8s known to have the flag under this name: Node 20 (11.3) to Node 24 (13.6). An unknown
 * flag makes V8 print a line of its own on stderr, so a later V8 is left as it is until checked.
 */
const V8_MAJORS = { min: 11, max: 13 };

let tag = '';

/** The name of the flags a command sets on this V8 ('' where it sets none). */
export function commandFlagsTag(): string {
  const major = Number(process.versions.v8.split('.')[0]);
  return major >= V8_MAJORS.min && major <= V8_MAJORS.max ? 'liftoff' : '';
}

/** Tunes this process's V8 for one check run; call it before anything is parsed. */
export function tuneForCommand(): void {
  if (tag !== '' || commandFlagsTag() === '') return;
  for (const flag of COMMAND_FLAGS) setFlagsFromString(flag);
  tag = commandFlagsTag();
}

/** A name for the flags this process set on itself ('' for V8's defaults), for naming code caches. */
export function v8FlagsTag(): string {
  return tag;
}
