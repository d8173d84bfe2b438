// Where `leash mcp` looks: each client's documented files per platform, moved by HOME, APPDATA,
// XDG_CONFIG_HOME, CLAUDE_CONFIG_DIR and CODEX_HOME; and a plain `leash mcp install` finding
// and wrapping all of them in a scratch home.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, it } from 'node:test';
import { configLocations } from '../../src/mcp-config/clients.js';
import { leashMcp, placeFixture, scratch } from './cli.js';

function paths(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, cwd: string): string[] {
  return configLocations({ env, platform, cwd }).map((location) => `${location.client.name} ${location.scope} ${location.path}`);
}

describe('config locations', { skip: process.platform === 'win32' ? 'POSIX paths spelled out' : false }, () => {
  it('Linux: XDG_CONFIG_HOME where the apps use it, the dot folders elsewhere', () => {
    assert.deepEqual(paths('linux', { HOME: '/h' }, '/p'), [
      'claude-desktop user /h/.config/Claude/claude_desktop_config.json',
      'claude-code user /h/.claude.json',
      'claude-code project /p/.mcp.json',
      'cursor user /h/.cursor/mcp.json',
      'cursor project /p/.cursor/mcp.json',
      'vscode user /h/.config/Code/User/mcp.json',
      'vscode user /h/.config/Code/User/settings.json',
      'vscode project /p/.vscode/mcp.json',
      'windsurf user /h/.codeium/windsurf/mcp_config.json',
      'zed user /h/.config/zed/settings.json',
      'zed project /p/.zed/settings.json',
      'codex user /h/.codex/config.toml',
      'codex project /p/.codex/config.toml',
    ]);
    const moved = paths('linux', { HOME: '/h', XDG_CONFIG_HOME: '/x', CLAUDE_CONFIG_DIR: '/c', CODEX_HOME: '/k' }, '/p');
    assert.ok(moved.includes('claude-desktop user /x/Claude/claude_desktop_config.json'));
    assert.ok(moved.includes('claude-code user /c/.claude.json'));
    assert.ok(moved.includes('vscode user /x/Code/User/settings.json'));
    assert.ok(moved.includes('zed user /x/zed/settings.json'));
    assert.ok(moved.includes('codex user /k/config.toml'));
  });

  it('macOS: Application Support for Claude Desktop and VS Code, ~/.config/zed for Zed', () => {
    const mac = paths('darwin', { HOME: '/Users/a', XDG_CONFIG_HOME: '' }, '/p');
    assert.ok(mac.includes('claude-desktop user /Users/a/Library/Application Support/Claude/claude_desktop_config.json'));
    assert.ok(mac.includes('vscode user /Users/a/Library/Application Support/Code/User/mcp.json'));
    assert.ok(mac.includes('zed user /Users/a/.config/zed/settings.json'));
  });

  it('the working directory being the home folder lists each file once', () => {
    const same = paths('linux', { HOME: '/h' }, '/h');
    assert.equal(same.filter((line) => line.endsWith('/h/.cursor/mcp.json')).length, 1);
  });
});

describe('leash mcp install with no --file', () => {
  it('finds every client file of the scratch home and project, wraps them all, and --undo restores them', () => {
    const where = scratch();
    try {
      const fixtureFor: Record<string, string> = {
        'claude-desktop user': 'claude_desktop_config.json',
        'claude-code user': 'claude.json',
        'claude-code project': 'project.mcp.json',
        'cursor user': 'cursor-mcp.json',
        'cursor project': 'cursor-mcp.json',
        'windsurf user': 'windsurf-mcp_config.json',
        'zed user': 'zed-settings.json',
        'zed project': 'zed-settings.json',
        'codex user': 'codex-config.toml',
        'codex project': 'codex-config.toml',
        'vscode project': 'vscode-mcp.json',
        'vscode user mcp.json': 'vscode-mcp.json',
        'vscode user settings.json': 'vscode-settings.json',
      };
      const placed: { path: string; text: string }[] = [];
      for (const location of configLocations({ env: where.env, platform: process.platform, cwd: where.project })) {
        const key = `${location.client.name} ${location.scope}`;
        const fixture = fixtureFor[key] ?? fixtureFor[`${key} ${basename(location.path)}`];
        assert.ok(fixture, key);
        assert.ok(location.path.startsWith(where.dir), `${location.path} is in the scratch folder`);
        placeFixture(fixture, location.path);
        placed.push({ path: location.path, text: readFileSync(location.path, 'utf8') });
      }
      assert.equal(placed.length, 13);

      const result = leashMcp(['install'], where);
      assert.equal(result.code, 0, result.stderr);
      const isProject = (path: string) => path.startsWith(where.project);
      assert.equal(placed.filter(({ path }) => isProject(path)).length, 5);
      for (const { path, text } of placed) {
        if (isProject(path)) assert.equal(readFileSync(path, 'utf8'), text, `${path}: a project file, left alone without --project`);
        else assert.notEqual(readFileSync(path, 'utf8'), text, `${path} rewritten`);
      }
      const project = leashMcp(['install', '--project'], where);
      assert.equal(project.code, 0, project.stderr);
      for (const { path, text } of placed) assert.notEqual(readFileSync(path, 'utf8'), text, `${path} rewritten`);
      const status = JSON.parse(leashMcp(['status', '--json'], where).stdout) as { files: { path: string; found: boolean; servers: { state: string }[] }[] };
      assert.equal(status.files.filter((file) => file.found).length, 13);
      const states = status.files.flatMap((file) => file.servers.map((server) => server.state));
      assert.equal(states.filter((state) => state === 'not-wrapped').length, 0);
      assert.equal(states.filter((state) => state === 'wrapped').length, 25);

      const undone = leashMcp(['install', '--undo', '--project'], where);
      assert.equal(undone.code, 0, undone.stderr);
      for (const { path, text } of placed) assert.equal(readFileSync(path, 'utf8'), text, `${path} restored`);
    } finally {
      where.remove();
    }
  });
});
