// The cases around the plain rewrite: files that do not parse, servers wrapped by another leash or
// by hand, servers without args, and how the file itself is replaced (mode, symlink, backups).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { backUp, ChangedMeanwhile, readConfigFile, replaceConfig } from '../../src/mcp-config/files.js';
import { ownerOf } from '../../src/mcp-config/state.js';
import { CLI_ENTRY } from '../helpers/processes.js';
import { backupFolder, backupsOf, launcherOf, leashMcp, placeFixture, PREFIX, scratch } from './cli.js';

const OLD_NODE = '/opt/node-v20.0.0/bin/node';
const OLD_SCRIPT = '/opt/node-v20.0.0/lib/node_modules/proc-leash/bin/leash.js';

describe('a config that does not parse', () => {
  it('is reported with its line and column and skipped (exit 2); the other files are still done', () => {
    const where = scratch();
    try {
      const good = join(where.home, '.cursor', 'mcp.json');
      placeFixture('cursor-mcp.json', good);
      const broken = join(where.home, '.codex', 'config.toml');
      mkdirSync(join(where.home, '.codex'));
      const brokenText = '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"\n';
      writeFileSync(broken, brokenText);
      const brokenJson = join(where.project, '.vscode', 'mcp.json');
      mkdirSync(join(where.project, '.vscode'));
      const brokenJsonText = '{\n  "servers": {\n    "a": { "command": "npx" "args": [] }\n  }\n}\n';
      writeFileSync(brokenJson, brokenJsonText);
      const goodText = readFileSync(good, 'utf8');

      const result = leashMcp(['install', '--project'], where);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`${brokenJson.replace(/[.]/g, '\\.')}:3:29: a comma is expected here: file skipped`));
      assert.match(result.stderr, new RegExp(`${broken.replace(/[.]/g, '\\.')}:\\d+:\\d+: .*file skipped`));
      assert.equal(readFileSync(broken, 'utf8'), brokenText);
      assert.equal(readFileSync(brokenJson, 'utf8'), brokenJsonText);
      assert.notEqual(readFileSync(good, 'utf8'), goodText, 'the good file is written');
      for (const path of [broken, brokenJson]) assert.deepEqual(backupsOf(where, path), []);
      const status = leashMcp(['status'], where);
      assert.equal(status.code, 2);
      assert.match(status.stdout, /does not parse: /);
    } finally {
      where.remove();
    }
  });
});

describe('a JSON config whose top level is no object', () => {
  it('is refused (exit 2, nothing written); an empty file holds no servers', () => {
    const where = scratch();
    try {
      const path = join(where.dir, 'claude_desktop_config.json');
      for (const text of ['[]\n', '"mcpServers"\n', '42\n']) {
        writeFileSync(path, text);
        const result = leashMcp(['install', '--client', 'claude-desktop', '--file', path], where);
        assert.equal(result.code, 2, result.stderr);
        assert.match(result.stderr, /:1:1: the top level is (?:a list|a string|a number), not an object of settings/);
        assert.equal(readFileSync(path, 'utf8'), text);
        assert.deepEqual(backupsOf(where, path), []);
      }
      writeFileSync(path, '');
      const empty = leashMcp(['install', '--client', 'claude-desktop', '--file', path], where);
      assert.equal(empty.code, 0, empty.stderr);
      assert.equal(readFileSync(path, 'utf8'), '');
    } finally {
      where.remove();
    }
  });
});

describe('servers wrapped before', () => {
  it('another leash (gone: broken) is re-pointed at the launcher, its options kept; a hand-made wrap too; --undo puts both back as written', () => {
    const where = scratch();
    try {
      const path = join(where.dir, 'claude_desktop_config.json');
      const original = `${JSON.stringify(
        {
          mcpServers: {
            older: { command: OLD_NODE, args: [OLD_SCRIPT, 'run', '--grace', '5', '--die-with-parent', '--', 'npx', '-y', 'server-a'] },
            byhand: { command: '/usr/local/bin/leash', args: ['run', '--die-with-parent', '--', 'uvx', 'server-b'] },
            plain: { command: 'npx', args: ['server-c'] },
          },
        },
        null,
        2,
      )}\n`;
      writeFileSync(path, original);
      const status = leashMcp(['status', '--client', 'claude-desktop', '--file', path], where);
      assert.match(status.stdout, /mcpServers\.older\s+BROKEN: \/opt\/node-v20\.0\.0\/bin\/node is gone: run 'leash mcp install'/);
      assert.match(status.stdout, /mcpServers\.byhand\s+BROKEN: \/usr\/local\/bin\/leash is gone/);
      assert.match(status.stdout, /mcpServers\.plain\s+not wrapped/);

      const result = leashMcp(['install', '--client', 'claude-desktop', '--file', path], where);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /older\s+pointed at the launcher/);
      const servers = JSON.parse(readFileSync(path, 'utf8')).mcpServers;
      const launcher = launcherOf(where);
      assert.deepEqual(servers.older, { command: launcher, args: ['run', '--grace', '5', '--die-with-parent', '--', 'npx', '-y', 'server-a'] });
      assert.deepEqual(servers.byhand, { command: launcher, args: [...PREFIX, 'uvx', 'server-b'] });
      assert.deepEqual(servers.plain, { command: launcher, args: [...PREFIX, 'npx', 'server-c'] });

      const undone = leashMcp(['install', '--undo', '--client', 'claude-desktop', '--file', path], where);
      assert.equal(undone.code, 0, undone.stderr);
      assert.equal(readFileSync(path, 'utf8'), original, 'each server back as it was written, earlier wraps included');
    } finally {
      where.remove();
    }
  });
});

describe('servers without args', () => {
  it('JSON: args is added next to command; --undo gives the file back byte for byte', () => {
    const where = scratch();
    try {
      const path = join(where.dir, 'mcp.json');
      writeFileSync(path, '{\n  "mcpServers": {\n    "local": {\n      "command": "/opt/mcp/server"\n    }\n  }\n}\n');
      assert.equal(leashMcp(['install', '--client', 'cursor', '--file', path], where).code, 0);
      assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).mcpServers.local, { command: launcherOf(where), args: [...PREFIX, '/opt/mcp/server'] });
      assert.equal(leashMcp(['install', '--undo', '--client', 'cursor', '--file', path], where).code, 0);
      assert.equal(readFileSync(path, 'utf8'), '{\n  "mcpServers": {\n    "local": {\n      "command": "/opt/mcp/server"\n    }\n  }\n}\n');
    } finally {
      where.remove();
    }
  });

  it('TOML: in a table (a line after command, comment kept) and in an inline table; an mcp_servers key of another table is no server', () => {
    const where = scratch();
    try {
      const path = join(where.dir, 'config.toml');
      const original = [
        '[mcp_servers.table]',
        '  command = "/opt/mcp/table" # the one',
        '  env = { A = "1" }',
        '',
        '[mcp_servers]',
        'inline = { command = "/opt/mcp/inline" }',
        '',
        '[other]',
        'mcp_servers.x = 1',
        '',
      ].join('\n');
      writeFileSync(path, original);
      const result = leashMcp(['install', '--client', 'codex', '--file', path], where);
      assert.equal(result.code, 0, result.stderr);
      const text = readFileSync(path, 'utf8');
      const quoted = (values: string[]) => `[${values.map((value) => JSON.stringify(value)).join(', ')}]`;
      assert.ok(text.includes(`  command = ${JSON.stringify(launcherOf(where))} # the one\n  args = ${quoted([...PREFIX, '/opt/mcp/table'])}\n  env = { A = "1" }\n`), text);
      assert.ok(text.includes(`inline = { command = ${JSON.stringify(launcherOf(where))}, args = ${quoted([...PREFIX, '/opt/mcp/inline'])} }\n`), text);
      assert.ok(text.endsWith('[other]\nmcp_servers.x = 1\n'), 'a key of another table named mcp_servers is no server');
    } finally {
      where.remove();
    }
  });
});

describe('how the file is replaced', () => {
  it('keeps its mode, writes through a symlink to the real file, and backs it up in the leash folder', () => {
    const where = scratch();
    try {
      const real = join(where.dir, 'dotfiles', 'claude.json');
      placeFixture('claude.json', real);
      chmodSync(real, 0o600);
      const link = join(where.home, '.claude.json');
      symlinkSync(real, link);
      const result = leashMcp(['install', '--client', 'claude-code'], where);
      assert.equal(result.code, 0, result.stderr);
      assert.ok(lstatSync(link).isSymbolicLink(), 'the link is still a link');
      assert.equal(readlinkSync(link), real);
      assert.equal(statSync(real).mode & 0o777, 0o600, 'the mode is kept');
      assert.ok(readFileSync(real, 'utf8').includes(JSON.stringify(launcherOf(where))));
      const backups = backupsOf(where, real);
      assert.equal(backups.length, 1);
      assert.equal(statSync(backups[0]!).mode & 0o777, 0o600, 'the backup is private');
      assert.equal(statSync(backupFolder(where)).mode & 0o777, 0o700, 'in a private folder');
    } finally {
      where.remove();
    }
  });

  it('never reuses a backup name, and refuses a file changed since it was read', () => {
    const where = scratch();
    try {
      const path = join(where.dir, 'mcp.json');
      writeFileSync(path, '{}\n');
      const file = readConfigFile(path)!;
      const now = new Date('2026-01-02T03:04:05.678Z');
      const owner = ownerOf(undefined, { env: where.env, platform: process.platform });
      const first = backUp(file, owner, now);
      assert.match(first, new RegExp(`^${backupFolder(where)}/mcp\\.json\\.[0-9a-f]{8}\\.2026-01-02T03-04-05Z$`));
      writeFileSync(first, 'someone else\'s\n');
      const second = backUp(file, owner, now);
      assert.equal(second, `${first}-1`);
      assert.equal(readFileSync(first, 'utf8'), 'someone else\'s\n', 'the existing backup is untouched');

      writeFileSync(path, '{ "changed": true }\n'); // the client wrote it meanwhile
      assert.throws(() => replaceConfig(file, '{ "mine": true }\n'), ChangedMeanwhile);
      assert.equal(readFileSync(path, 'utf8'), '{ "changed": true }\n');
    } finally {
      where.remove();
    }
  });
});

describe('usage', () => {
  it('--file needs one --client; unknown clients and options are usage errors; help is there', () => {
    const where = scratch();
    try {
      assert.equal(leashMcp(['install', '--file', 'x.json'], where).code, 64);
      assert.equal(leashMcp(['install', '--client', 'emacs'], where).code, 64);
      assert.equal(leashMcp(['install', '--json'], where).code, 64);
      assert.equal(leashMcp(['frobnicate'], where).code, 64);
      assert.equal(leashMcp(['install', '--client', 'cursor', '--file', join(where.dir, 'missing.json')], where).code, 66);
      const help = leashMcp(['--help'], where);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /^usage: leash mcp install/);
      const topic = spawnSync(process.execPath, [CLI_ENTRY, 'help', 'mcp'], { encoding: 'utf8', env: where.env });
      assert.equal(topic.status, 0);
      assert.equal(topic.stdout, help.stdout);
      const main = spawnSync(process.execPath, [CLI_ENTRY, '--help'], { encoding: 'utf8', env: where.env });
      assert.match(main.stdout, /^  mcp install\|status/m);
      const none = leashMcp(['install'], where);
      assert.equal(none.code, 0, none.stderr);
      assert.match(none.stdout, /no such file, skipped/);
    } finally {
      where.remove();
    }
  });
});
