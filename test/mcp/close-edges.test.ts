// OwnedStdioClientTransport at its edges: close() called twice at once, a send() stuck on a full
// stdin when the server goes, close() before start(). The server here is a bare node process
// that ignores SIGTERM and never reads stdin, so only the grace's SIGKILL ends it.
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { test } from 'node:test';
import { OwnedStdioClientTransport } from '../../src/mcp/index.js';
import { waitUntil } from '../../src/sys/wait.js';
import { killMarked, markedPids, newMark } from '../helpers/processes.js';

const STUBBORN =
  "process.on('SIGTERM', () => {}); process.stdin.pause(); setInterval(() => {}, 1 << 30); process.stderr.write('ready\\n');";

/** A transport to a server that ignores SIGTERM and stdin; resolves once its handler is set. */
async function startStubborn(mark: string, graceMs: number): Promise<OwnedStdioClientTransport> {
  const transport = new OwnedStdioClientTransport({
    command: process.execPath,
    args: ['-e', STUBBORN],
    env: { LEASH_TEST_MARK: mark },
    stderr: 'pipe',
    eofGraceMs: 50,
    graceMs,
  });
  let text = '';
  (transport.stderr as Readable).on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  await transport.start();
  assert.ok(await waitUntil(() => text.includes('ready'), 15_000), `the server did not start: ${text}`);
  return transport;
}

test('a second close() while the first runs resolves only once the group is empty too', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = await startStubborn(mark, 800);
  assert.equal(markedPids(mark).length, 1);
  const first = transport.close();
  const second = transport.close();
  await second;
  assert.deepEqual(markedPids(mark), [], 'the second close() resolved while the server still ran');
  await first;
  assert.deepEqual(markedPids(mark), []);
});

test('close() before start() resolves and leaves the transport startable', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = new OwnedStdioClientTransport({
    command: process.execPath,
    args: ['-e', 'process.stdin.resume(); process.stdin.on("end", () => process.exit(0));'],
    env: { LEASH_TEST_MARK: mark },
  });
  await transport.close();
  await transport.close();
  await transport.start();
  assert.ok(transport.pid);
  await transport.close();
  assert.deepEqual(markedPids(mark), []);
});
