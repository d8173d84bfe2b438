#!/usr/bin/env node
// The published entry point of `leash-check` (the same as `leash check` with proc-leash installed),
// and the pre-commit hook's. It loads the command's bundle (scripts/build.mjs: a few ms less of a
// run on a handful of files than the modules), or the modules where there is no bundle (tsc alone).
const load = () =>
  import('../dist/command/main.js').catch((error) => {
    if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('command/main.js')) return import('../dist/check/main.js');
    throw error;
  });

load()
  .then(({ checkMain }) => checkMain(process.argv.slice(2)))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`leash check: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 2;
    },
  );
