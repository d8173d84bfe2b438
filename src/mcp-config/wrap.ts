// The wrapping rule. A wrapped server's command is the launcher (launcher.ts) and its args are
// [...prefix, 'run', ...options, '--', original command, ...original args]. Every form of wrap
// `leash run` accepts is recognised, so a server is never wrapped twice: leash's own (`node
// leash.js run ...`), a hand-made one (`/usr/local/bin/leash run ...`, with or without `--`), and
// `npx [-y] proc-leash run ...`. What each wrap replaced is kept in a record (record.ts) for undo.
import { basename } from 'node:path';
import type { Launcher } from './launcher.js';

export type { Launcher } from './launcher.js';

/** The option every wrap carries: the tree dies with the client. */
export const DIE_WITH_PARENT = '--die-with-parent';

export type Wrapping =
  | { wrapped: false }
  | {
      wrapped: true;
      /** leash's options between `run` and the command (`--` left out). */
      options: string[];
      /** Index in args of the original command. */
      inner: number;
      /** Whether it is exactly this launcher's wrap, --die-with-parent included. */
      current: boolean;
      /** The leash it runs through, for people. */
      via: string;
    };

const LEASH_NAMES = new Set(['leash', 'leash.js', 'leash.cmd', 'leash.ps1', 'leash.exe']);
const NPX_NAMES = new Set(['npx', 'npx.cmd', 'npx.exe']);
/** `leash run`'s options that take a value, and those that do not (src/run/main.ts). */
const VALUE_OPTIONS = new Set(['--grace', '--state', '--parent-death-signal']);
const FLAG_OPTIONS = new Set(['--die-with-parent', '--no-stdin-watch', '--ignore-hangup', '--quiet', '-q', '--keep-terminal']);

function base(path: string): string {
  return basename(path.replaceAll('\\', '/')).toLowerCase();
}

function isLeashPath(path: string): boolean {
  return LEASH_NAMES.has(base(path));
}

/** After `run` at `runIndex`: leash's options and where the command starts, as `leash run` reads them. */
function runArguments(args: readonly string[], runIndex: number): { options: string[]; inner: number } | undefined {
  if (args[runIndex] !== 'run') return undefined;
  const options: string[] = [];
  let i = runIndex + 1;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    if (!arg.startsWith('-') || arg === '-') break;
    if (FLAG_OPTIONS.has(arg)) options.push(arg);
    else if (VALUE_OPTIONS.has(arg) && i + 1 < args.length) options.push(arg, args[++i]!);
    else return undefined; // leash run would refuse it: no wrap of ours
  }
  return i < args.length ? { options, inner: i } : undefined;
}

/** Index of `run` in `npx [npx options] proc-leash[@version] run ...`. */
function npxRunIndex(args: readonly string[]): number {
  let i = 0;
  while (i < args.length && /^(-y|--yes|-q|--quiet|--no-install|--prefer-offline|--prefer-online)$/.test(args[i]!)) i++;
  if (!/^proc-leash(@[^/\s]+)?$/.test(args[i] ?? '')) return -1;
  return args[i + 1] === 'run' ? i + 1 : -1;
}

/** How a server's command and args are wrapped, in any of the forms above. */
export function wrappingOf(command: string, args: readonly string[], launcher: Launcher): Wrapping {
  let runIndex = -1;
  let via = command;
  if (args.length > 0 && isLeashPath(args[0]!) && args[1] === 'run') {
    runIndex = 1;
    via = args[0]!;
  } else if (isLeashPath(command)) runIndex = 0;
  else if (NPX_NAMES.has(base(command))) {
    runIndex = npxRunIndex(args);
    via = `${command} ${args.slice(0, runIndex).join(' ')}`;
  }
  if (runIndex === -1) return { wrapped: false };
  const run = runArguments(args, runIndex);
  if (!run) return { wrapped: false };
  const ours = [...launcher.prefix, 'run', ...run.options, '--'];
  const current =
    command === launcher.command &&
    run.options.includes(DIE_WITH_PARENT) &&
    run.inner === ours.length &&
    ours.every((value, index) => args[index] === value);
  return { wrapped: true, options: run.options, inner: run.inner, current, via };
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
  const prefix = [...launcher.prefix, 'run', ...kept, '--'].map((value) => ({ value }));
  return { command: { value: launcher.command }, args: [...prefix, inner.command, ...inner.args] };
}

/** The original command and args inside a wrap, with their text as written. */
export function innerOf(args: readonly Item[], wrapping: Wrapping & { wrapped: true }): Invocation {
  return { command: args[wrapping.inner]!, args: args.slice(wrapping.inner + 1) };
}
