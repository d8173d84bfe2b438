// `leash mcp install --file` on one realistic config per client: every stdio server wrapped, every
// remote one untouched, a second run changes nothing, and --undo gives the file back byte for byte.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse as parseJsonc } from 'jsonc-parser';
import { getStaticTOMLValue, parseTOML } from 'toml-eslint-parser';
import { backupsOf, launcherOf, leashMcp, placeFixture, PREFIX, scratch } from './cli.js';

interface Case {
  fixture: string;
  client: string;
  /** Paths of the servers that must be wrapped; a trailing 'command' step means Zed's older shape. */
  stdio: string[][];
  /** Paths of entries that must stay exactly as they were (remote servers, other settings). */
  untouched: string[][];
  strictJson?: boolean;
}

const CASES: Case[] = [
  {
    fixture: 'claude_desktop_config.json',
    client: 'claude-desktop',
    stdio: [['mcpServers', 'filesystem'], ['mcpServers', 'fetch']],
    untouched: [['globalShortcut']],
    strictJson: true,
  },
  {
    fixture: 'claude.json',
    client: 'claude-code',
    stdio: [['mcpServers', 'memory'], ['projects', '/home/alice/work/api', 'mcpServers', 'postgres']],
    untouched: [['mcpServers', 'notion'], ['projects', '/home/alice/work/api', 'mcpServers', 'asana'], ['projects', '/home/alice/notes'], ['numStartups']],
    strictJson: true,
  },
  {
    fixture: 'project.mcp.json',
    client: 'claude-code',
    stdio: [['mcpServers', 'playwright'], ['mcpServers', 'airtable']],
    untouched: [['mcpServers', 'sentry']],
    strictJson: true,
  },
  {
    fixture: 'cursor-mcp.json',
    client: 'cursor',
    stdio: [['mcpServers', 'github'], ['mcpServers', 'local-tools']],
    untouched: [['mcpServers', 'linear']],
    strictJson: true,
  },
  {
    fixture: 'vscode-mcp.json',
    client: 'vscode',
    stdio: [['servers', 'Perplexity'], ['servers', 'fetch']],
    untouched: [['servers', 'github'], ['inputs']],
  },
  {
    fixture: 'vscode-settings.json',
    client: 'vscode',
    stdio: [['mcp', 'servers', 'memory']],
    untouched: [['mcp', 'servers', 'remote-docs'], ['editor.fontSize'], ['workbench.colorTheme']],
  },
  {
    fixture: 'windsurf-mcp_config.json',
    client: 'windsurf',
    stdio: [['mcpServers', 'git'], ['mcpServers', 'puppeteer']],
    untouched: [['mcpServers', 'zapier']],
    strictJson: true,
  },
  {
    fixture: 'zed-settings.json',
    client: 'zed',
    stdio: [['context_servers', 'everything'], ['context_servers', 'sqlite', 'command']],
    untouched: [['context_servers', 'postgres-context-server'], ['context_servers', 'remote'], ['theme']],
  },
  {
    fixture: 'codex-config.toml',
    client: 'codex',
    stdio: [['mcp_servers', 'context7'], ['mcp_servers', 'fs']],
    untouched: [['mcp_servers', 'figma'], ['mcp_servers', 'context7', 'env'], ['tui'], ['model']],
  },
];

function valueOf(text: string, fixture: string): unknown {
  if (fixture.endsWith('.toml')) return getStaticTOMLValue(parseTOML(text));
  const errors: unknown[] = [];
  const value = parseJsonc(text, errors as never, { allowTrailingComma: true });
  assert.deepEqual(errors, [], `${fixture} parses`);
  return value;
}

function at(value: unknown, path: readonly string[]): any {
  return path.reduce<any>((node, key) => node?.[key], value);
}

/** The command and args of a server value: `path`, or Zed's older nested shape. */
function invocation(server: any, nested: boolean): { command: string; args: string[] } {
  return nested ? { command: server.path, args: server.args ?? [] } : { command: server.command, args: server.args ?? [] };
}

describe('leash mcp install --file: one config per client', () => {
  const where = scratch();
  after(() => where.remove());

  for (const testCase of CASES) {
    it(`${testCase.client}: ${testCase.fixture}`, () => {
      const path = join(where.dir, testCase.fixture);
      placeFixture(testCase.fixture, path);
      const original = readFileSync(path, 'utf8');
      const before = valueOf(original, testCase.fixture);
      for (const server of testCase.stdio) assert.equal(typeof at(before, server), 'object', `${server.join('.')} is in the fixture`);

      const installed = leashMcp(['install', '--client', testCase.client, '--file', path], where);
      assert.equal(installed.code, 0, installed.stderr);
      const rewritten = readFileSync(path, 'utf8');
      assert.notEqual(rewritten, original);
      if (testCase.strictJson) JSON.parse(rewritten); // still plain JSON for clients that read it so
      const afterValue = valueOf(rewritten, testCase.fixture);
      for (const server of testCase.stdio) {
        const nested = server[server.length - 1] === 'command';
        const was = invocation(at(before, server), nested);
        const now = invocation(at(afterValue, server), nested);
        assert.deepEqual(now, { command: launcherOf(where), args: [...PREFIX, was.command, ...was.args] }, server.join('.'));
      }
      for (const entry of testCase.untouched) assert.deepEqual(at(afterValue, entry), at(before, entry), `${entry.join('.')} untouched`);
      // Comments survive where the format has them.
      for (const comment of original.match(/(\/\/|#)[^\n"]*$/gm) ?? []) assert.ok(rewritten.includes(comment), `comment kept: ${comment}`);
      const backups = backupsOf(where, path);
      assert.equal(backups.length, 1);
      assert.equal(readFileSync(backups[0]!, 'utf8'), original, 'the backup is the original');
      assert.ok(installed.stdout.includes(backups[0]!), 'the backup\'s path is printed');

      const again = leashMcp(['install', '--client', testCase.client, '--file', path], where);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /already wrapped/);
      assert.equal(readFileSync(path, 'utf8'), rewritten, 'a second run changes nothing');
      assert.equal(backupsOf(where, path).length, 1, 'and writes no backup');

      const status = leashMcp(['status', '--client', testCase.client, '--file', path, '--json'], where);
      assert.equal(status.code, 0, status.stderr);
      const servers = JSON.parse(status.stdout).files[0].servers as { where: string; state: string }[];
      assert.equal(servers.filter((server) => server.state === 'wrapped').length, testCase.stdio.length, status.stdout);
      assert.ok(servers.every((server) => server.state !== 'not-wrapped'), status.stdout);

      const undone = leashMcp(['install', '--undo', '--client', testCase.client, '--file', path], where);
      assert.equal(undone.code, 0, undone.stderr);
      assert.equal(readFileSync(path, 'utf8'), original, '--undo gives the original back byte for byte');
      assert.equal(backupsOf(where, path).length, 2, '--undo backs up the wrapped file first');
    });
  }
});

describe('leash mcp install --dry-run', () => {
  it('prints a unified diff and writes nothing', () => {
    const where = scratch();
    try {
      const path = join(where.dir, 'codex.toml');
      placeFixture('codex-config.toml', path);
      const original = readFileSync(path, 'utf8');
      const mtime = statSync(path).mtimeMs;
      const result = leashMcp(['install', '--dry-run', '--client', 'codex', '--file', path], where);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^--- ${path}$`, 'm'));
      assert.match(result.stdout, /^-command = "npx"$/m);
      assert.match(result.stdout, new RegExp(`^\\+command = ${JSON.stringify(launcherOf(where)).replace(/[\\/.]/g, '\\$&')}$`, 'm'));
      assert.match(result.stdout, /^@@ -\d+,\d+ \+\d+,\d+ @@$/m);
      assert.match(result.stdout, /dry run: nothing written/);
      // The listing says what would happen, not what did.
      assert.match(result.stdout, /would be wrapped$/m);
      assert.doesNotMatch(result.stdout, /(?<!be )wrapped$/m);
      assert.equal(readFileSync(path, 'utf8'), original);
      assert.equal(statSync(path).mtimeMs, mtime);
      assert.deepEqual(backupsOf(where, path), []);
    } finally {
      where.remove();
    }
  });
});
