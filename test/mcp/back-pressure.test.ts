// send() at the pace the server reads: a real server that stops reading its stdin while the client
// fires sends without awaiting them (as the SDK's Client does with requests). The client's stdin
// stream must hold no more than about one message; the sends wait, in order, and all complete once
// the server reads again. Before, every message was serialized into the stream's buffer at once.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { test } from 'node:test';
import { OwnedStdioClientTransport } from '../../src/mcp/index.js';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { killMarked, markedPids, newMark } from '../helpers/processes.js';

const SENDS = 100;
const PAYLOAD = 256 * 1024;

// Reads nothing until SIGUSR2, then counts the lines (messages) it gets and reports the count.
const SLOW_READER = `
process.stdin.pause();
let lines = 0;
process.on('SIGUSR2', () => {
  process.stdin.on('data', (chunk) => {
    for (const byte of chunk) if (byte === 10) lines += 1;
    process.stderr.write('lines ' + lines + '\\n');
  });
  process.stdin.resume();
});
setInterval(() => {}, 1 << 30);
process.stderr.write('ready\\n');
`;

test('a server that stops reading: the client buffers about one message, sends wait in order, then all complete', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = new OwnedStdioClientTransport({
    command: process.execPath,
    args: ['-e', SLOW_READER],
    env: { LEASH_TEST_MARK: mark },
    stderr: 'pipe',
    eofGraceMs: 200,
    graceMs: 500,
  });
  let text = '';
  (transport.stderr as Readable).on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  await transport.start();
  assert.ok(await waitUntil(() => text.includes('ready'), 15_000), `the server did not start: ${text}`);
  // The private child is read here only to measure what the transport buffers.
  const stdin = (transport as unknown as { child: ChildProcess }).child.stdin!;

  const message = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'x'.repeat(PAYLOAD) } };
  const settled: number[] = [];
  const sends = Array.from({ length: SENDS }, (_, index) =>
    transport.send(message).then(() => {
      settled.push(index);
    }),
  );
  // Let the pipe and the server's paused stream take what they will.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const buffered = stdin.writableLength;
  assert.ok(buffered <= PAYLOAD + stdin.writableHighWaterMark + 1024, `the client buffered ${buffered} bytes for a server that reads nothing`);
  assert.ok(settled.length < 5, `${settled.length} sends resolved though the server reads nothing`);

  signalProcess(transport.pid!, 'SIGUSR2');
  assert.ok(await waitUntil(() => settled.length === SENDS, 30_000), `only ${settled.length} of ${SENDS} sends completed once the server read`);
  await Promise.all(sends);
  assert.deepEqual(settled, [...settled].sort((a, b) => a - b), 'the sends completed in order');
  assert.ok(await waitUntil(() => text.includes(`lines ${SENDS}\n`), 10_000), 'the server got every message');
  await transport.close();
  assert.deepEqual(markedPids(mark), []);
});

test('close() while sends wait their turn: every one settles, none hangs', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = new OwnedStdioClientTransport({
    command: process.execPath,
    args: ['-e', SLOW_READER],
    env: { LEASH_TEST_MARK: mark },
    stderr: 'pipe',
    eofGraceMs: 100,
    graceMs: 300,
  });
  let text = '';
  (transport.stderr as Readable).on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  await transport.start();
  assert.ok(await waitUntil(() => text.includes('ready'), 15_000), `the server did not start: ${text}`);
  const message = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'x'.repeat(PAYLOAD) } };
  const outcomes = Array.from({ length: 20 }, () => transport.send(message).then(() => 'resolved', () => 'rejected'));
  await transport.close();
  let all: string[] | undefined;
  void Promise.all(outcomes).then((values) => (all = values));
  assert.ok(await waitUntil(() => all !== undefined, 5000), 'a send never settled after close()');
  assert.ok(all!.filter((outcome) => outcome === 'rejected').length >= 15, `outcomes: ${all!.join(', ')}`);
  await assert.rejects(transport.send(message), /Not connected/);
  assert.deepEqual(markedPids(mark), []);
});
