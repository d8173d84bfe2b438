// `leash mcp status` says which servers are containers (docker/podman/nerdctl run), wrapped or not.
import assert from 'node:assert/strict';
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { leashMcp, scratch } from './cli.js';

test('status marks container servers, before and after the wrap, and nothing else', () => {
  const where = scratch();
  try {
    const path = join(where.home, '.config', 'Claude', 'claude_desktop_config.json');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify({
      mcpServers: {
        github: { command: 'docker', args: ['run', '-i', '--rm', '-e', 'TOKEN', 'ghcr.io/github/github-mcp-server'] },
        pg: { command: '/usr/bin/podman', args: ['--remote', 'container', 'run', '-i', 'localhost/pg-mcp'] },
        build: { command: 'docker', args: ['build', '.'] },
        plain: { command: 'npx', args: ['-y', 'some-server'] },
      },
    }, null, 2));
    const before = leashMcp(['status', '--client', 'claude-desktop', '--file', path], where);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /github\s+not wrapped \[container\]/);
    assert.match(before.stdout, /pg\s+not wrapped \[container\]/);
    assert.match(before.stdout, /build\s+not wrapped\n/);
    assert.match(before.stdout, /plain\s+not wrapped\n/);
    const install = leashMcp(['install', '--client', 'claude-desktop', '--file', path], where);
    assert.equal(install.code, 0, install.stderr);
    const after = leashMcp(['status', '--client', 'claude-desktop', '--file', path, '--json'], where);
    const servers = JSON.parse(after.stdout).files[0].servers as { name: string; state: string; container?: boolean }[];
    const byName = new Map(servers.map((server) => [server.name, server]));
    assert.equal(byName.get('github')?.state, 'wrapped');
    assert.equal(byName.get('github')?.container, true);
    assert.equal(byName.get('pg')?.container, true);
    assert.equal(byName.get('build')?.container, undefined);
    assert.equal(byName.get('plain')?.state, 'wrapped');
    assert.equal(byName.get('plain')?.container, undefined);
  } finally {
    where.remove();
  }
});
