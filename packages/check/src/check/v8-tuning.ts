// A `leash check` run is a short process that runs a lot of code a little: the listing, the
// tokenizers, the TypeScript parser and the Python grammar (WebAssembly) each see a few hundred
// files. V8's defaults are tuned for long-lived pages and servers, and on such a run they spend
// more CPU compiling than the compiled code saves:
// - the Python grammar's JS-to-Wasm wrappers and hot functions are compiled with TurboFan on
//   worker threads, about 0.15 s per run, more than the parses gain; Liftoff alone is cheaper;
// - JS functions are optimized far sooner than pays here; with eight times the interrupt budget
//   the typical bench tree takes 0.93-0.95 s of CPU instead of 1.15 s, every file parsed 1.32 s
//   instead of 1.54 s, and this repository's node_modules (116 MB) 5.00-5.06 s instead of 5.37 s
//   (bench/check.ts; docs/check.md).
// So the command (never the library or the ESLint plugin, which live in someone else's process)
// sets these on itself before anything is compiled. V8 keys its code caches by the flags in force:
// the TypeScript cache is kept per set of flags (typescript-cache.ts), under the set's tag, or each
// kind of process would reject the other's.
import { setFlagsFromString } from 'node:v8';

/** The flags, and their tag in cache names: a new tag whenever the flags change. */
const COMMAND = { tag: 'liftoff-budget8', flags: ['--liftoff-only', '--interrupt-budget=540672'] };
/**
 * The V8s known to have both flags under these names: Node 20 (11.3) to Node 24 (13.6). An unknown
 * flag makes V8 print a line of its own on stderr, so a later V8 is left as it is until checked.
 */
const V8_MAJORS = { min: 11, max: 13 };

let tag = '';

/** The name of the flags a command sets on this V8 ('' where it sets none). */
export function commandFlagsTag(): string {
  const major = Number(process.versions.v8.split('.')[0]);
  return major >= V8_MAJORS.min && major <= V8_MAJORS.max ? COMMAND.tag : '';
}

/** Tunes this process's V8 for one check run; call it before anything is parsed. */
export function tuneForCommand(): void {
  if (tag !== '' || commandFlagsTag() === '') return;
  for (const flag of COMMAND.flags) setFlagsFromString(flag);
  tag = commandFlagsTag();
}

/** A name for the flags this process set on itself ('' for V8's defaults), for naming code caches. */
export function v8FlagsTag(): string {
  return tag;
}
