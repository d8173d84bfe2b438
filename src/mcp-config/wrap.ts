// The wrapping rule. A wrapped server's command is the Node that runs leash, and its args are
// [leash.js, 'run', ...options, '--', original command, ...original args]: the original stays in
// the file verbatim after `--`, so undoing is dropping the prefix, and no other record is kept.
import { basename } from 'node:path';

/** The programs a wrapped server starts: Node, and leash's bin/leash.js. */
export interface Launcher {
  node: string;
  script: string;
}

/** The option every wrap carries: the tree dies with the client. */
export const DIE_WITH_PARENT = '--die-with-parent';

export type Wrapping =
  | { wrapped: false }
  | {
      wrapped: true;
      /** leash's options between `run` and `--`. */
      options: string[];
      /** Index in args of the original command (just after `--`). */
      inner: number;
      /** Whether it is exactly this launcher's wrap, --die-with-parent included. */
      current: boolean;
      /** The leash it runs through, for people: the script, or the command for a hand-made wrap. */
      via: string;
    };

const LEASH_NAMES = new Set(['leash', 'leash.js', 'leash.cmd', 'leash.ps1', 'leash.exe']);

function isLeashPath(path: string): boolean {
  return LEASH_NAMES.has(basename(path.replaceAll('\\', '/')).toLowerCase());
}

/** Index of the `--` after `run` at `runIndex`, when a command follows it. */
function separatorAfter(args: readonly string[], runIndex: number): number {
  if (args[runIndex] !== 'run') return -1;
  const separator = args.indexOf('--', runIndex + 1);
  return separator !== -1 && separator + 1 < args.length ? separator : -1;
}

/**
 * How a server's command and args are wrapped: leash's own form (`node leash.js run ... --`), or
 * a hand-made one (`/usr/local/bin/leash run ... --`, as the docs once showed).
 */
export function wrappingOf(command: string, args: readonly string[], launcher: Launcher): Wrapping {
  if (args.length > 0 && isLeashPath(args[0]!)) {
    const separator = separatorAfter(args, 1);
    if (separator !== -1) {
      const options = args.slice(2, separator);
      const current = command === launcher.node && args[0] === launcher.script && options.includes(DIE_WITH_PARENT);
      return { wrapped: true, options, inner: separator + 1, current, via: args[0]! };
    }
  }
  if (isLeashPath(command)) {
    const separator = separatorAfter(args, 0);
    if (separator !== -1) return { wrapped: true, options: args.slice(1, separator), inner: separator + 1, current: false, via: command };
  }
  return { wrapped: false };
}

/** A value to write: its text in the file when it moves from elsewhere in the same file. */
export interface Item {
  value: string;
  raw?: string;
}

export interface Invocation {
  command: Item;
  args: Item[];
}

/** The wrapped form of `inner` (the original command and args), keeping leash options already chosen. */
export function wrapped(inner: Invocation, launcher: Launcher, options: readonly string[] = []): Invocation {
  const kept = options.includes(DIE_WITH_PARENT) ? [...options] : [DIE_WITH_PARENT, ...options];
  const prefix = [launcher.script, 'run', ...kept, '--'].map((value) => ({ value }));
  return { command: { value: launcher.node }, args: [...prefix, inner.command, ...inner.args] };
}

/** The original command and args inside a wrap, with their text as written. */
export function innerOf(args: readonly Item[], wrapping: Wrapping & { wrapped: true }): Invocation {
  return { command: args[wrapping.inner]!, args: args.slice(wrapping.inner + 1) };
}
