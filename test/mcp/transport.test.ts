// leash/mcp end to end: the real SDK Client, the real server-everything from npm behind
// sh -c -> launcher -> node, and real signals. Every process carries the test's mark, so the
// assertions (and the cleanup) see exactly this test's processes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { OwnedStdioClientTransport } from '../../src/mcp/index.js';
import { ownedProcessGroups } from '../../src/index.js';
import { processGroupOf, isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { JsonLines, exited, killMarked, markedPids, newMark, startFixture, waitForGone } from '../helpers/processes.js';
import { CLIENT_FIXTURE, TreeReport, wrappedServer } from './chain.js';

const DEADLINE_MS = 20_000;

/** Connects, lists the tools and calls one: proof that the server behind the chain answers. */
async function exercise(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === 'echo'), 'server-everything lists its echo tool');
  const result = await client.callTool({ name: 'echo', arguments: { message: 'hi from leash' } });
  const content = result.content as Array<{ type: string; text?: string }>;
  assert.equal(content[0]?.text, 'Echo: hi from leash');
}

/** An owned transport to the wrapped server, with the test's mark (and any extra env). */
function ownedServer(mark: string, graces: { eofGraceMs: number; graceMs: number }, env: Record<string, string> = {}) {
  return new OwnedStdioClientTransport({ ...wrappedServer(), env: { LEASH_TEST_MARK: mark, ...env }, stderr: 'pipe', ...graces });
}

/** Keeps the server busy for minutes, so that stdin's end alone does not make it leave. */
function keepBusy(client: Client): void {
  client
    .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 300, steps: 1 } }, undefined, {
      timeout: 600_000,
    })
    .catch(() => {});
}

test('close() leaves no process of the server group, busy server behind sh -c and a launcher', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = ownedServer(mark, { eofGraceMs: 200, graceMs: 2000 });
  const tree = new TreeReport(transport.stderr);
  const client = new Client({ name: 'leash-test', version: '0.0.0' });
  let closedEvents = 0;
  await client.connect(transport);
  transport.onclose = ((previous) => () => {
    closedEvents += 1;
    previous?.();
  })(transport.onclose);

  await exercise(client);
  keepBusy(client);
  const leader = transport.pid;
  assert.ok(leader, 'the transport reports the pid of the command it spawned');
  assert.ok(ownedProcessGroups().includes(leader), 'the server group is owned');
  await waitUntil(() => tree.server !== undefined, 5000);
  const members = markedPids(mark);
  assert.deepEqual(
    [...members].sort(),
    [leader, tree.launcher, tree.server].sort(),
    `sh, launcher and server run (stderr: ${tree.text})`,
  );
  for (const pid of members) assert.equal(processGroupOf(pid), leader, `pid ${pid} is in the owned group`);

  await client.close();
  // No waiting here: close() itself resolves only once the group is empty.
  assert.deepEqual(markedPids(mark), [], 'nothing of the server tree is left when close() resolves');
  assert.equal(closedEvents, 1, 'onclose fired once');
  assert.ok(!ownedProcessGroups().includes(leader), 'the group is forgotten');
  assert.equal(transport.pid, null);
  await assert.rejects(transport.send({ jsonrpc: '2.0', method: 'ping', id: 99 }), /Not connected/);
});

test('a server that leaves on EOF is closed without waiting out the graces', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = ownedServer(mark, { eofGraceMs: 10_000, graceMs: 10_000 });
  const client = new Client({ name: 'leash-test', version: '0.0.0' });
  await client.connect(transport);
  await exercise(client);
  const started = Date.now();
  await client.close();
  const tookMs = Date.now() - started;
  assert.deepEqual(markedPids(mark), []);
  assert.ok(tookMs < 8000, `close() took ${tookMs} ms; an idle server leaves on stdin's end`);
});

test('close() KILLs a member that ignores SIGTERM once the grace is over', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const graceMs = 600;
  const transport = ownedServer(mark, { eofGraceMs: 100, graceMs }, { LEASH_TEST_IGNORE_TERM: '1' });
  const tree = new TreeReport(transport.stderr);
  const client = new Client({ name: 'leash-test', version: '0.0.0' });
  await client.connect(transport);
  await exercise(client);
  keepBusy(client);
  await waitUntil(() => tree.launcher !== undefined, 5000);
  const started = Date.now();
  await client.close();
  const tookMs = Date.now() - started;
  assert.deepEqual(markedPids(mark), [], 'the TERM-ignoring launcher is gone too');
  assert.ok(tookMs >= graceMs, `close() took ${tookMs} ms: it must have waited out the grace before KILL`);
});

test('a server that exits by itself takes what it left in its group along', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  // The "server" leaves at once, leaving a background process that holds none of the pipes.
  const lingerer = `"${process.execPath}" -e "setInterval(() => {}, 1 << 30)" </dev/null >/dev/null 2>&1 &`;
  const transport = new OwnedStdioClientTransport({
    command: 'sh',
    args: ['-c', `${lingerer} echo started >&2; exit 3`],
    env: { LEASH_TEST_MARK: mark },
    stderr: 'pipe',
    graceMs: 1000,
  });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  await transport.start();
  await closed;
  assert.equal(transport.pid, null);
  // close() after the fact waits for that cleanup.
  await transport.close();
  assert.deepEqual(markedPids(mark), [], 'the background process of the dead server is gone');
});

test('a missing command rejects start() like the SDK does', async () => {
  const transport = new OwnedStdioClientTransport({ command: '/nonexistent/leash-mcp-server' });
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  await assert.rejects(transport.start(), /ENOENT/);
  assert.equal(errors.length, 1);
  await transport.close();
});

interface TreeLine {
  client: number;
  leader: number;
  supervisor: number | null;
  launcher: number;
  server: number;
  echo: string | null;
  stderr: string;
}

/** Starts the client fixture, waits for its report of the tree, and checks the server answered. */
async function startClient(mark: string, mode: 'owned' | 'plain', command: string, args: string[]) {
  const child = startFixture(CLIENT_FIXTURE, [mode, command, ...args], mark);
  const lines = new JsonLines(child);
  const line = await lines.next<TreeLine>(DEADLINE_MS);
  assert.equal(line.echo, 'Echo: hello from leash', `the server answered (stderr: ${lines.stderr})`);
  assert.ok(line.launcher && line.server, `the launcher reported the tree (server stderr: ${line.stderr})`);
  return { child, line };
}

test('client SIGKILLed: the whole server tree goes too (owned transport)', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const chain = wrappedServer();
  const { child, line } = await startClient(mark, 'owned', chain.command, chain.args);
  const tree = [line.leader, line.launcher, line.server];
  assert.ok(line.supervisor, 'the client runs a death supervisor');
  t.after(() => {
    if (line.supervisor && isProcessAlive(line.supervisor)) signalProcess(line.supervisor, 'SIGKILL');
  });
  assert.deepEqual(markedPids(mark).sort(), [line.client, ...tree].sort(), 'client, sh, launcher and server run');

  child.kill('SIGKILL');
  await exited(child);
  assert.ok(await waitForGone(tree, DEADLINE_MS), `server tree still running: ${markedPids(mark).join(' ')}`);
  assert.deepEqual(markedPids(mark), []);
  assert.ok(await waitForGone([line.supervisor], DEADLINE_MS), 'the supervisor leaves once its work is done');
});

test('control: the plain SDK transport leaves the server behind on client SIGKILL', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const chain = wrappedServer();
  const { child, line } = await startClient(mark, 'plain', chain.command, chain.args);
  child.kill('SIGKILL');
  await exited(child);
  // Expected to run out: the orphaned server is busy for minutes.
  const gone = await waitForGone([line.server], 1500);
  assert.equal(gone, false, 'the SDK alone lets the real server outlive its client');
  assert.ok(markedPids(mark).includes(line.server));
  await killMarked(mark);
  assert.deepEqual(markedPids(mark), []);
});

test('control: the plain SDK close() signals only sh; launcher and server stay', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = new StdioClientTransport({ ...wrappedServer(), env: { LEASH_TEST_MARK: mark }, stderr: 'pipe' });
  const tree = new TreeReport(transport.stderr);
  const client = new Client({ name: 'leash-test', version: '0.0.0' });
  await client.connect(transport);
  await exercise(client);
  keepBusy(client);
  await waitUntil(() => tree.server !== undefined, 5000);
  const leader = transport.pid;
  await client.close();
  assert.ok(leader && (await waitForGone([leader], 5000)), 'the SDK ended its direct child');
  assert.ok(tree.server && isProcessAlive(tree.server), 'the real server survived close()');
  assert.ok(tree.launcher && isProcessAlive(tree.launcher), 'so did the launcher');
  await killMarked(mark);
});
