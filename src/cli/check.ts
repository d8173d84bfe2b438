// `leash check` lives in its own package, proc-leash-check, so that the core installs without its
// parsers (typescript, tree-sitter: ~44 MB). This finds that package — next to the core first (the
// same node_modules), then from the project the command runs in — and hands it the arguments.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const CHECK_PACKAGE = 'proc-leash-check';
/** Exit status when the check cannot run at all, the same as the check's own. */
const EXIT_CANNOT_RUN = 2;

type CheckMain = (argv: string[]) => Promise<number>;

/** Where Node finds proc-leash-check's ES entry from `bases` in order, if anywhere. */
export function locateCheck(bases: readonly string[]): string | undefined {
  for (const base of bases) {
    try {
      // require.resolve would pick the CommonJS entry: find the manifest (exported as
      // ./package.json) and take the ES entry it names.
      const manifest = createRequire(base).resolve(`${CHECK_PACKAGE}/package.json`);
      const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as { exports: { '.': { default: string } } };
      return join(dirname(manifest), exports['.'].default);
    } catch {
      // not installed there: try the next place
    }
  }
  return undefined;
}

export async function checkCommand(argv: string[]): Promise<number> {
  const entry = locateCheck([import.meta.url, join(process.cwd(), 'package.json')]);
  if (!entry) {
    process.stderr.write(
      `leash check needs the ${CHECK_PACKAGE} package (the check and its parsers are installed apart from the core):\n` +
        `  npm install -D ${CHECK_PACKAGE}\n`,
    );
    return EXIT_CANNOT_RUN;
  }
  // A package that fails to load or throws must not read as findings (exit 1): it cannot run.
  let checkMain: CheckMain;
  try {
    ({ checkMain } = (await import(pathToFileURL(entry).href)) as { checkMain: CheckMain });
  } catch (error) {
    process.stderr.write(`leash check: cannot load ${CHECK_PACKAGE} from ${entry}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CANNOT_RUN;
  }
  try {
    return await checkMain(argv);
  } catch (error) {
    process.stderr.write(`leash check: ${CHECK_PACKAGE} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CANNOT_RUN;
  }
}
