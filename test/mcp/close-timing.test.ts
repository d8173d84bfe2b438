// close() with the default graces keeps the SDK's clock (StdioClientTransport.close: stdin ended,
// 2 s, SIGTERM, 2 s, SIGKILL): a server that ignores both its stdin's end and SIGTERM, with a
// child of its own doing the same, is gone, whole tree, within the 5 s the SDK's own
// "server that hangs" test allows. The SDK's transport on the same server is the control: it
// keeps the clock but leaves the child behind.
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { test } from 'node:test';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DEFAULT_EOF_GRACE_MS, DEFAULT_TERM_GRACE_MS, OwnedStdioClientTransport } from '../../src/mcp/index.js';
import { waitUntil } from '../../src/sys/wait.js';
import { killMarked, markedPids, newMark } from '../helpers/processes.js';

/** The SDK's test gives close() 5 s for such a server. */
const SDK_BUDGET_MS = 5000;

/** Ignores SIGTERM and stdin, starts a child that does the same, says 'ready' once both ignore TERM. */
const HANGING = `
process.on('SIGTERM', () => {});
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1 << 30); process.stderr.write('child\\\\n')"], { stdio: ['ignore', 'ignore', 'inherit'] });
setInterval(() => {}, 1 << 30);
process.stderr.write('server\\n');
`;

async function startHanging<T extends { start(): Promise<void>; stderr: unknown }>(transport: T): Promise<T> {
  let text = '';
  (transport.stderr as Readable).on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  await transport.start();
  assert.ok(await waitUntil(() => text.includes('server') && text.includes('child'), 15_000), `the server did not start: ${text}`);
  return transport;
}

const parameters = (mark: string) => ({ command: process.execPath, args: ['-e', HANGING], env: { LEASH_TEST_MARK: mark }, stderr: 'pipe' as const });

test('the default graces are the SDK\'s: 2 s after stdin ends, 2 s after SIGTERM', () => {
  assert.equal(DEFAULT_EOF_GRACE_MS, 2000);
  assert.equal(DEFAULT_TERM_GRACE_MS, 2000);
});

test('close() on a server ignoring EOF and SIGTERM: whole tree gone within the SDK\'s 5 s', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = await startHanging(new OwnedStdioClientTransport(parameters(mark)));
  assert.equal(markedPids(mark).length, 2, 'the server and its child run');
  const began = performance.now();
  await transport.close();
  const tookMs = performance.now() - began;
  assert.deepEqual(markedPids(mark), [], 'close() resolved with part of the tree running');
  // It really hung: both graces were waited out before SIGKILL.
  assert.ok(tookMs >= 3900, `close() took ${tookMs.toFixed(0)} ms: the server was not made to wait out both graces`);
  assert.ok(tookMs < SDK_BUDGET_MS, `close() took ${tookMs.toFixed(0)} ms, over the SDK's ${SDK_BUDGET_MS} ms`);
});

test('control: the SDK\'s transport keeps the same clock but leaves the server\'s child running', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = await startHanging(new StdioClientTransport(parameters(mark)));
  const began = performance.now();
  await transport.close();
  const tookMs = performance.now() - began;
  assert.ok(tookMs >= 3900 && tookMs < SDK_BUDGET_MS, `the SDK's close() took ${tookMs.toFixed(0)} ms`);
  assert.ok(await waitUntil(() => markedPids(mark).length === 1, 5000), 'the server was SIGKILLed and its child left running');
});
