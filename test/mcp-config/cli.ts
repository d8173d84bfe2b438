// Runs `leash mcp ...` as a user would, with every config location pointed into a scratch folder.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CLI_ENTRY, FIXTURES } from '../helpers/processes.js';

export const CONFIG_FIXTURES = join(FIXTURES, 'mcp-config');

/** node and bin/leash.js as `leash mcp install` run from this checkout writes them. */
export const LAUNCHER = { node: process.execPath, script: CLI_ENTRY };

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
    CLAUDE_CONFIG_DIR: '',
    CODEX_HOME: '',
  };
  return { dir, home, project, env, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function placeFixture(fixture: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  copyFileSync(join(CONFIG_FIXTURES, fixture), path);
}

export function leashMcp(args: readonly string[], where: Scratch): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI_ENTRY, 'mcp', ...args], {
    cwd: where.project,
    env: where.env,
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The backups leash left next to `path`. */
export function backupsOf(path: string): string[] {
  const name = path.slice(dirname(path).length + 1);
  return readdirSync(dirname(path)).filter((entry) => entry.startsWith(`${name}.leash-backup-`));
}
