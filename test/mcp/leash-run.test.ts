// (c) The fix for clients whose code cannot change: the SDK's own, unmodified
// StdioClientTransport, with `leash run --die-with-parent --` put in front of the server command,
// as a user would write it in a client's JSON config.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { isProcessAlive } from '../../src/sys/processes.js';
import { hasProcfs } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { CLI_ENTRY, JsonLines, exited, killMarked, markedPids, newMark, startFixture, waitForGone } from '../helpers/processes.js';
import { CLIENT_FIXTURE, TreeReport, wrappedServer } from './chain.js';

const DEADLINE_MS = 20_000;

/** `leash run --die-with-parent --grace 2 -- sh -c ... launcher ... server`, as a config would say. */
function throughLeashRun(): { command: string; args: string[] } {
  const chain = wrappedServer();
  return {
    command: process.execPath,
    args: [CLI_ENTRY, 'run', '--die-with-parent', '--grace', '2', '--', chain.command, ...chain.args],
  };
}

test('leash run --die-with-parent: client SIGKILLed, nothing of the server tree is left', { skip: !hasProcfs() && 'the group fallback (no /proc, no subreaper) does not support --die-with-parent (docs/run.md)' }, async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const server = throughLeashRun();
  const child = startFixture(CLIENT_FIXTURE, ['plain', server.command, ...server.args], mark);
  const lines = new JsonLines(child);
  const line = await lines.next<{ client: number; leader: number; launcher: number; server: number; echo: string }>(
    DEADLINE_MS,
  );
  assert.equal(line.echo, 'Echo: hello from leash', `the server answered (stderr: ${lines.stderr})`);
  const tree = markedPids(mark).filter((pid) => pid !== line.client);
  // leash run, sh, the launcher and the server, at least.
  assert.ok(tree.length >= 4, `the tree runs: ${tree.join(' ')}`);
  for (const pid of [line.leader, line.launcher, line.server]) assert.ok(tree.includes(pid), `pid ${pid} runs`);

  child.kill('SIGKILL');
  await exited(child);
  assert.ok(await waitForGone(tree, DEADLINE_MS), `left running: ${markedPids(mark).join(' ')}`);
  assert.deepEqual(markedPids(mark), []);
});

test('leash run --die-with-parent: the SDK close() now ends the real server too', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = new StdioClientTransport({ ...throughLeashRun(), env: { LEASH_TEST_MARK: mark }, stderr: 'pipe' });
  const report = new TreeReport(transport.stderr);
  const client = new Client({ name: 'leash-test', version: '0.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === 'echo'));
  // Busy for minutes: stdin's end alone does not stop it.
  client
    .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 300, steps: 1 } }, undefined, {
      timeout: 600_000,
    })
    .catch(() => {});
  await waitUntil(() => report.server !== undefined, 5000);
  const tree = markedPids(mark);
  assert.ok(report.server && tree.includes(report.server), `the server runs (stderr: ${report.text})`);

  await client.close();
  assert.ok(await waitForGone(tree, DEADLINE_MS), `left running: ${markedPids(mark).join(' ')}`);
  assert.ok(!isProcessAlive(report.server));
});
