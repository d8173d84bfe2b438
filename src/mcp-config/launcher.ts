// The launcher: what a wrapped server's command points at. On POSIX it is a small sh script in
// the config owner's leash folder (bin/leash), written by `leash mcp install` and re-pointed at
// whichever leash last ran it, so moving or upgrading leash (or Node) needs no client edit: run
// install again. A client starts it with an absolute path, no PATH lookup (GUI clients have no
// login shell's PATH). When the Node or leash it names is gone, it fails with one line that names
// the fix, and `status` reports the wrap as broken. On Windows a script cannot be the command
// (Node refuses to spawn .cmd/.bat without a shell since 20.12.2, and a shell would stand between
// the client and leash), so the wrap there names node.exe and leash.js directly.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import type { Owner } from './state.js';

/** What a wrapped server's command and first args are. */
export interface Launcher {
  command: string;
  /** args before `run`: leash.js on Windows, none through the launcher file. */
  prefix: string[];
  /** The Node and leash script it ends up running. */
  node: string;
  script: string;
  /** The launcher file (POSIX), below the owner's leash folder. */
  file?: string;
}

export const LAUNCHER_REL = join('bin', 'leash');
const MARK = '# leash launcher';

export function launcherFor(owner: Owner, node: string, script: string, platform: NodeJS.Platform): Launcher {
  if (platform === 'win32') return { command: node, prefix: [script], node, script };
  const file = join(owner.root, LAUNCHER_REL);
  return { command: file, prefix: [], node, script, file };
}

function quoted(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function unquoted(value: string): string {
  return value.slice(1, -1).replaceAll("'\\''", "'");
}

export const REPAIR = "run 'leash mcp install' with the leash you have now (it re-points the launcher), or 'leash mcp install --undo'";

/** The launcher file's text. */
export function launcherText(node: string, script: string): string {
  return [
    '#!/bin/sh',
    `${MARK}: written by \`leash mcp install\`, which points it at the leash it runs from.`,
    '# MCP client configs start their servers through this file: after moving or upgrading leash',
    '# or Node, run `leash mcp install` again and this file follows; the configs stay as they are.',
    `node=${quoted(node)}`,
    `leash=${quoted(script)}`,
    'if [ -x "$node" ] && [ -f "$leash" ]; then exec "$node" "$leash" "$@"; fi',
    `echo "leash: the launcher $0 runs $node $leash, which is gone (leash or Node moved or was removed): ${REPAIR.replaceAll("'", '')}" >&2`,
    'exit 127',
    '',
  ].join('\n');
}

/** The Node and script a launcher file names, or undefined when it is none of leash's. */
export function launcherTarget(file: string): { node: string; script: string } | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  if (!text.includes(MARK)) return undefined;
  const node = /^node=('.*')$/m.exec(text)?.[1];
  const script = /^leash=('.*')$/m.exec(text)?.[1];
  return node && script ? { node: unquoted(node), script: unquoted(script) } : undefined;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isAbsolutePath(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}

/**
 * Why a wrap cannot start, with the fix, or undefined when it can (as far as can be seen: a bare
 * `leash` or `npx` is looked up on the client's PATH, which leash cannot see).
 */
export function brokenBecause(command: string, args: readonly string[]): string | undefined {
  if (!isAbsolutePath(command)) return undefined;
  if (!existsSync(command)) return `${command} is gone: ${REPAIR}`;
  const target = launcherTarget(command);
  if (target) {
    if (!isFile(target.node)) return `the launcher's Node ${target.node} is gone: ${REPAIR}`;
    if (!isFile(target.script)) return `the launcher's leash ${target.script} is gone: ${REPAIR}`;
    return undefined;
  }
  // node leash.js run ...: the script too must be there.
  const script = args[0];
  if (script !== undefined && /leash(\.js)?$/.test(basename(script)) && isAbsolutePath(script) && !isFile(script)) return `${script} is gone: ${REPAIR}`;
  return undefined;
}

/**
 * Why this leash is no lasting install, or undefined: its package folder is in a git checkout
 * (`npm install -g .` links the clone; a move or `git clean` breaks every wrap) or in npx's
 * cache (npm may clear it). A copy in some node_modules is an install, wherever that is.
 */
export function transientInstall(script: string): string | undefined {
  if (script.includes(`${sep}_npx${sep}`)) return `it runs from npx's cache (${script}), which npm may clear`;
  for (let dir = dirname(dirname(script)); ; dir = dirname(dir)) {
    if (basename(dir) === 'node_modules') return undefined;
    if (existsSync(join(dir, '.git'))) return `it runs from a git checkout (${dir}), which moves, changes and gets cleaned; install a copy (see docs/mcp-config.md: npm pack, then npm install -g the .tgz)`;
    if (dirname(dir) === dir) return undefined;
  }
}
