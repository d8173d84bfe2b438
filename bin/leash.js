#!/usr/bin/env node
// The published entry point: the compiled CLI does the work. `leash run` goes straight to its one
// bundled module (scripts/build.mjs), without the dispatch's modules: it lies on the start path of
// every server it wraps. A command line that may ask for help goes through the dispatch, except
// `check`'s, whose help the check package itself prints.
const argv = process.argv.slice(2);

/** An error no command handled: a bug. Its own code, so that it never reads as a command's answer (1 is "found" for reap and check). */
const EXIT_INTERNAL = 70;

async function command() {
  if (argv[0] === 'run' && !argv.includes('-h') && !argv.includes('--help')) {
    const bundle = await import('../dist/src/run/leash-run.mjs').catch((error) => {
      // Not built (tsc alone): the dispatch loads the modules themselves. A bundle that is there
      // but fails to load is an error to see.
      if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('leash-run.mjs')) return undefined;
      throw error;
    });
    if (bundle) return bundle.runMain(argv.slice(1));
  }
  // `leash check` never has help of its own here (the package prints it): straight to its loader,
  // without the dispatch and its help text, which were a tenth of a small tree's check.
  if (argv[0] === 'check') {
    const { checkCommand } = await import('../dist/src/cli/check.js');
    return checkCommand(argv.slice(1));
  }
  const { main } = await import('../dist/src/cli/main.js');
  return main(argv);
}

command().then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  async (error) => {
    const { writeDiagnostic } = await import('../dist/src/sys/safe-output.js');
    writeDiagnostic(`leash: internal error (please report it): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = EXIT_INTERNAL;
  },
);
