// Node's own command-line flags, as Node reads them. Standard library only: the death supervisor
// imports this file.

/** The names of this Node's flags (`process.execArgv`): the part before `=`, with `_` read as `-`, which Node takes as the same flag. */
export function nodeFlagNames(execArgv: readonly string[] = process.execArgv): string[] {
  return execArgv.filter((arg) => arg.startsWith('--')).map((arg) => `--${arg.slice(2).split('=')[0]!.replaceAll('_', '-')}`);
}
