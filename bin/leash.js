#!/usr/bin/env node
// The published entry point: the compiled CLI does the work.
import { main } from '../dist/src/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`leash: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
