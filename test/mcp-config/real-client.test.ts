// The whole path for a person who cannot change their client: a Claude Desktop config whose server
// starts through a wrapper that stays (sh -c, as npx does), rewritten by `leash mcp install`, then
// started from that config by the SDK's own unmodified StdioClientTransport. The client is
// SIGKILLed: nothing of the server tree may be left.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { configLocations } from '../../src/mcp-config/clients.js';
import { exited, JsonLines, killMarked, markedPids, newMark, startFixture, waitForGone } from '../helpers/processes.js';
import { CLIENT_FIXTURE, wrappedServer } from '../mcp/chain.js';
import { launcherOf, leashMcp, placeFixture, PREFIX, scratch } from './cli.js';

const DEADLINE_MS = 30_000;

test('a config rewritten by leash mcp install: the SDK client SIGKILLed, nothing of the server tree is left', { skip: process.platform !== 'linux' ? 'leash run owns trees on Linux' : false }, async (t) => {
  const mark = newMark();
  const where = scratch();
  t.after(async () => {
    await killMarked(mark);
    where.remove();
  });
  const path = configLocations({ env: where.env, platform: process.platform, cwd: where.project }).find((location) => location.client.name === 'claude-desktop')!.path;
  placeFixture('claude_desktop_config.json', path); // for its folder; replaced below
  const server = wrappedServer();
  writeFileSync(path, `${JSON.stringify({ mcpServers: { everything: server, docs: { type: 'http', url: 'https://example.invalid/mcp' } } }, null, 2)}\n`);

  // The control: from the config as it was, the busy server outlives the SIGKILLed client.
  const controlMark = newMark();
  t.after(() => killMarked(controlMark));
  const before = startFixture(CLIENT_FIXTURE, ['plain', server.command, ...server.args], controlMark);
  const beforeLine = await new JsonLines(before).next<{ server: number }>(DEADLINE_MS);
  before.kill('SIGKILL');
  await exited(before);
  assert.equal(await waitForGone([beforeLine.server], 3000), false, 'without leash, the server is left running');
  await killMarked(controlMark);

  const installed = leashMcp(['install', '--client', 'claude-desktop'], where);
  assert.equal(installed.code, 0, installed.stderr);
  const config = JSON.parse(readFileSync(path, 'utf8')).mcpServers;
  assert.deepEqual(config.docs, { type: 'http', url: 'https://example.invalid/mcp' });
  const { command, args } = config.everything as { command: string; args: string[] };
  // No npx and no PATH lookup between the client and leash: the launcher, by its absolute path.
  assert.equal(command, launcherOf(where));
  assert.deepEqual(args, [...PREFIX, server.command, ...server.args]);

  // The client fixture hands command and args, as read from the config, to the SDK's StdioClientTransport.
  const client = startFixture(CLIENT_FIXTURE, ['plain', command, ...args], mark);
  const lines = new JsonLines(client);
  const line = await lines.next<{ client: number; leader: number; launcher: number; server: number; echo: string }>(DEADLINE_MS);
  assert.equal(line.echo, 'Echo: hello from leash', `the server answered through leash (stderr: ${lines.stderr})`);
  const tree = markedPids(mark).filter((pid) => pid !== line.client);
  // leash run, its guard, sh, the launcher and the server, at least.
  assert.ok(tree.length >= 4, `the tree runs: ${tree.join(' ')}`);
  for (const pid of [line.leader, line.launcher, line.server]) assert.ok(tree.includes(pid), `pid ${pid} runs`);

  client.kill('SIGKILL');
  await exited(client);
  assert.ok(await waitForGone(tree, DEADLINE_MS), `left running: ${markedPids(mark).join(' ')}`);
  assert.deepEqual(markedPids(mark), []);
});
