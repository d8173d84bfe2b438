#!/usr/bin/env node
// The published entry point: the compiled CLI does the work.
import { main } from '../dist/src/cli/main.js';
import { writeDiagnostic } from '../dist/src/sys/safe-output.js';

/** An error no command handled: a bug. Its own code, so that it never reads as a command's answer (1 is "found" for reap and check). */
const EXIT_INTERNAL = 70;

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (error) => {
    writeDiagnostic(`leash: internal error (please report it): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = EXIT_INTERNAL;
  },
);
