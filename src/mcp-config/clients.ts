// Where each MCP client keeps its servers, per platform, and under which keys. Every location is
// derived from the environment (HOME, APPDATA, XDG_CONFIG_HOME, CLAUDE_CONFIG_DIR, CODEX_HOME)
// and the working directory, so a test points them all at a scratch folder.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export type Format = 'json' | 'toml';

export interface Client {
  name: string;
  title: string;
  format: Format;
  /** The server maps in its files: `*` matches any key (Claude Code's per-project servers). */
  serverMaps: readonly (readonly string[])[];
}

export const CLIENTS: readonly Client[] = [
  { name: 'claude-desktop', title: 'Claude Desktop', format: 'json', serverMaps: [['mcpServers']] },
  { name: 'claude-code', title: 'Claude Code', format: 'json', serverMaps: [['mcpServers'], ['projects', '*', 'mcpServers']] },
  { name: 'cursor', title: 'Cursor', format: 'json', serverMaps: [['mcpServers']] },
  { name: 'vscode', title: 'VS Code', format: 'json', serverMaps: [['servers'], ['mcp', 'servers']] },
  { name: 'windsurf', title: 'Windsurf', format: 'json', serverMaps: [['mcpServers']] },
  { name: 'zed', title: 'Zed', format: 'json', serverMaps: [['context_servers']] },
  { name: 'codex', title: 'Codex CLI', format: 'toml', serverMaps: [['mcp_servers']] },
];

export function clientNamed(name: string): Client | undefined {
  return CLIENTS.find((client) => client.name === name);
}

export interface ConfigLocation {
  client: Client;
  path: string;
  /** `user` for the person's own file, `project` for the one in the working directory, `file` for --file. */
  scope: 'user' | 'project' | 'file';
}

export interface Environment {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  cwd: string;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** The home folder: HOME wins where it is set (os.homedir() reads it on POSIX, not on Windows). */
function home({ env, platform }: Environment): string {
  return nonEmpty(platform === 'win32' ? env.USERPROFILE : env.HOME) ?? homedir();
}

/** The per-user application data folder of desktop apps (Electron's appData). */
function appData(where: Environment): string {
  const { env, platform } = where;
  if (platform === 'win32') return nonEmpty(env.APPDATA) ?? join(home(where), 'AppData', 'Roaming');
  if (platform === 'darwin') return join(home(where), 'Library', 'Application Support');
  return nonEmpty(env.XDG_CONFIG_HOME) ?? join(home(where), '.config');
}

/** Every file each client reads servers from, user-level first, then the working directory's. */
export function configLocations(where: Environment, clients: readonly Client[] = CLIENTS): ConfigLocation[] {
  const { env, platform, cwd } = where;
  const user = home(where);
  const paths: Record<string, { user: string[]; project: string[] }> = {
    'claude-desktop': { user: [join(appData(where), 'Claude', 'claude_desktop_config.json')], project: [] },
    'claude-code': { user: [join(nonEmpty(env.CLAUDE_CONFIG_DIR) ?? user, '.claude.json')], project: ['.mcp.json'] },
    cursor: { user: [join(user, '.cursor', 'mcp.json')], project: [join('.cursor', 'mcp.json')] },
    // The user's mcp.json in the profile folder; older versions kept servers in settings.json's "mcp".
    vscode: {
      user: [join(appData(where), 'Code', 'User', 'mcp.json'), join(appData(where), 'Code', 'User', 'settings.json')],
      project: [join('.vscode', 'mcp.json')],
    },
    windsurf: { user: [join(user, '.codeium', 'windsurf', 'mcp_config.json')], project: [] },
    // Zed keeps ~/.config/zed on macOS too; XDG_CONFIG_HOME moves it on Linux.
    zed: {
      user: [platform === 'win32' ? join(appData(where), 'Zed', 'settings.json') : join(nonEmpty(env.XDG_CONFIG_HOME) ?? join(user, '.config'), 'zed', 'settings.json')],
      project: [join('.zed', 'settings.json')],
    },
    codex: { user: [join(nonEmpty(env.CODEX_HOME) ?? join(user, '.codex'), 'config.toml')], project: [join('.codex', 'config.toml')] },
  };
  const found: ConfigLocation[] = [];
  const seen = new Set<string>();
  for (const client of clients) {
    const entry = paths[client.name]!;
    const add = (path: string, scope: 'user' | 'project') => {
      if (seen.has(path)) return; // the working directory is the home folder: one file, listed once
      seen.add(path);
      found.push({ client, path, scope });
    };
    for (const path of entry.user) add(resolve(cwd, path), 'user');
    for (const path of entry.project) add(resolve(cwd, path), 'project');
  }
  return found;
}
