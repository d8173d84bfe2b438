// Runs `leash mcp ...` as a user would, with every config location pointed into a scratch folder.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { CLI_ENTRY, FIXTURES } from '../helpers/processes.js';

export const CONFIG_FIXTURES = join(FIXTURES, 'mcp-config');

/** The Node and bin/leash.js the launcher of `leash mcp install` run from this checkout points at. */
export const LEASH = { node: process.execPath, script: CLI_ENTRY };

/** The launcher a scratch home's wraps start: the command of every wrapped server. */
export function launcherOf(where: Scratch): string {
  return join(where.home, '.local', 'state', 'leash', 'bin', 'leash');
}

/** The args before the original command in a wrap of this checkout's install. */
export const PREFIX = ['run', '--die-with-parent', '--'];

export interface Scratch {
  dir: string;
  home: string;
  project: string;
  env: NodeJS.ProcessEnv;
  remove(): void;
}

/** A scratch home and project folder; HOME, XDG_CONFIG_HOME, APPDATA and friends point there. */
export function scratch(): Scratch {
  const dir = mkdtempSync(join(tmpdir(), 'leash-mcp-config-'));
  const home = join(dir, 'home');
  const project = join(dir, 'project');
  mkdirSync(home);
  mkdirSync(project);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    USERPROFILE: home,
    APPDATA: join(home, 'AppData', 'Roaming'),
    XDG_CONFIG_HOME: join(home, '.config'),
    LOCALAPPDATA: join(home, 'AppData', 'Local'),
    XDG_STATE_HOME: '',
    CLAUDE_CONFIG_DIR: '',
    CODEX_HOME: '',
  };
  return { dir, home, project, env, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function placeFixture(fixture: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  copyFileSync(join(CONFIG_FIXTURES, fixture), path);
}

/**
 * Runs `leash mcp ARGS`. install gets --force: this leash runs from a git checkout, which install
 * refuses otherwise (tested on its own with `force: false`).
 */
export function leashMcp(args: readonly string[], where: Scratch, { force = true, entry = CLI_ENTRY } = {}): { code: number | null; stdout: string; stderr: string } {
  const all = force && args[0] === 'install' ? [...args, '--force'] : args;
  const result = spawnSync(process.execPath, [entry, 'mcp', ...all], {
    cwd: where.project,
    env: where.env,
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The folder of leash's backups in a scratch home. */
export function backupFolder(where: Scratch): string {
  return join(where.home, '.local', 'state', 'leash', 'mcp', 'backups');
}

/** The backups leash keeps of files named like `path` (full paths). */
export function backupsOf(where: Scratch, path: string): string[] {
  const name = `${basename(path)}.${createHash('sha256').update(realpathSync(path)).digest('hex').slice(0, 8)}.`;
  let entries: string[];
  try {
    entries = readdirSync(backupFolder(where));
  } catch {
    return [];
  }
  return entries.filter((entry) => entry.startsWith(name)).map((entry) => join(backupFolder(where), entry));
}

/** Files whose name says leash left them (backups, temporaries) in `dir`, recursively. */
export function leashLeftovers(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((entry) => /leash-backup|\.tmp$/.test(entry));
}
