#!/usr/bin/env node
// The published entry point of `leash-check` (the same as `leash check` with proc-leash installed).
import { checkMain } from '../dist/check/main.js';

checkMain(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`leash check: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
