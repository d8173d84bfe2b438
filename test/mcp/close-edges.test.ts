// OwnedStdioClientTransport at its edges: close() called twice at once, a send() stuck on a full
// stdin when the server goes, close() before start(). The server here is a bare node process
// that ignores SIGTERM and never reads stdin, so only the grace's SIGKILL ends it.
import assert from 'node:assert/strict';
import { hasProcfs } from '../../src/sys/procfs.js';
import { spawnSync } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { OwnedStdioClientTransport } from '../../src/mcp/index.js';
import { waitUntil } from '../../src/sys/wait.js';
import { killMarked, markedEnv, markedPids, newMark } from '../helpers/processes.js';

const MCP_ENTRY = fileURLToPath(new URL('../../src/mcp/index.js', import.meta.url));

const STUBBORN =
  "process.on('SIGTERM', () => {}); process.stdin.pause(); setInterval(() => {}, 1 << 30); process.stderr.write('ready\\n');";

/** A transport to a server that ignores SIGTERM and stdin; resolves once its handler is set. */
async function startStubborn(mark: string, graceMs: number, eofGraceMs = 50): Promise<OwnedStdioClientTransport> {
  const transport = new OwnedStdioClientTransport({
    command: process.execPath,
    args: ['-e', STUBBORN],
    env: { LEASH_TEST_MARK: mark },
    stderr: 'pipe',
    eofGraceMs,
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

/** Settles with 'pending' if `promise` has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
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

test('a send() waiting on a full stdin settles when close() ends the server', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = await startStubborn(mark, 200);
  // Far more than any pipe or socket buffer: the server reads none of it, so write() must wait.
  const big = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'x'.repeat(8 << 20) } };
  const sent = transport.send(big).then(
    () => 'resolved',
    (error: Error) => `rejected: ${error.message}`,
  );
  assert.equal(await within(sent, 200), 'pending', 'the write is waiting for the server to read');
  await transport.close();
  assert.deepEqual(markedPids(mark), []);
  const outcome = await within(sent, 5000);
  assert.notEqual(outcome, 'pending', 'send() never settled once the server was gone');
  assert.match(String(outcome), /^rejected: /, 'a message the server never got is not reported as sent');
});

test('a send() after the server closed its stdin rejects instead of hanging', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = new OwnedStdioClientTransport({
    command: process.execPath,
    args: ['-e', "require('fs').closeSync(0); setInterval(() => {}, 1 << 30); process.stderr.write('closed\\n');"],
    env: { LEASH_TEST_MARK: mark },
    stderr: 'pipe',
    eofGraceMs: 0,
    graceMs: 200,
  });
  let text = '';
  (transport.stderr as Readable).on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  await transport.start();
  assert.ok(await waitUntil(() => text.includes('closed'), 15_000), `the server did not start: ${text}`);
  const ping = { jsonrpc: '2.0' as const, method: 'ping', id: 1 };
  // The first write fails asynchronously (EPIPE, reported through onerror); later ones must not wait.
  await within(transport.send(ping).catch(() => {}), 5000);
  assert.ok(await waitUntil(() => errors.length > 0, 5000), 'the broken pipe was reported');
  const outcome = await within(
    transport.send(ping).then(
      () => 'resolved',
      (error: Error) => `rejected: ${error.message}`,
    ),
    5000,
  );
  assert.match(String(outcome), /^rejected: Not connected/);
  await transport.close();
  assert.deepEqual(markedPids(mark), []);
});

// eofGraceMs follows terminateOwned's rule for graceMs: NaN or a non-number is the default (2 s),
// the rest is clamped to 0..600000 ms. NaN used to make close() wait for the group forever.
for (const eofGraceMs of [Number.NaN, 'soon' as unknown as number]) {
  test(`close() with eofGraceMs ${String(eofGraceMs)} waits the default, then ends the server`, async (t) => {
    const mark = newMark();
    t.after(() => killMarked(mark));
    const transport = await startStubborn(mark, 100, eofGraceMs);
    const started = Date.now();
    const outcome = await within(transport.close().then(() => 'closed'), 20_000);
    assert.equal(outcome, 'closed', 'close() never resolved');
    assert.ok(Date.now() - started >= 1900, 'the default 2 s EOF grace was waited');
    assert.deepEqual(markedPids(mark), []);
  });
}

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

// A process that left the group (setsid) but inherited the server's stdout keeps that pipe open
// after close() has emptied the group: 'close' never came, so onclose never fired and the open
// pipe held the client's event loop; a client could not exit. Now close() lets go of the pipes
// and the client exits; its supervisor then sweeps the escapee (it carries the owner token).
test('an escapee holding the server stdout neither stops onclose nor keeps the client alive', { skip: !hasProcfs() && 'needs /proc: only an environment scan finds the escapee, which holds this test\'s pipe' }, async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const client = `
    const { OwnedStdioClientTransport } = await import(${JSON.stringify(MCP_ENTRY)});
    const transport = new OwnedStdioClientTransport({
      command: 'sh',
      args: ['-c', 'setsid sleep 1000 & exec "$0" -e "process.stdin.resume()"', process.execPath],
      eofGraceMs: 100,
      graceMs: 300,
    });
    let closed = false;
    transport.onclose = () => { closed = true; };
    await transport.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await transport.close();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    process.stdout.write(JSON.stringify({ closed }));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', client], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
    env: markedEnv(mark),
  });
  assert.equal(result.error, undefined, `the client never exited: ${result.stderr}`);
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { closed: true }, 'onclose fired');
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 15_000), `the escapee outlived its client: ${markedPids(mark).join(' ')}`);
});

// The server exits by itself, but a process that left its group (setsid) inherited its stdout:
// 'close' never comes, so onclose never fired and the client never learnt the server was gone.
// Once the group is empty, the pipes are let go and onclose fires.
test('a server that exits leaving an escapee on its stdout still fires onclose', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const transport = new OwnedStdioClientTransport({
    command: 'sh',
    args: ['-c', 'setsid sleep 1000 & exit 3'],
    env: { LEASH_TEST_MARK: mark },
    stderr: 'pipe',
    graceMs: 300,
  });
  let closed = false;
  transport.onclose = () => {
    closed = true;
  };
  // The stderr stream handed out ends too, as it does when the server's stderr closes.
  let stderrEnded = false;
  const stderr = transport.stderr as Readable;
  stderr.on('end', () => {
    stderrEnded = true;
  });
  stderr.resume();
  await transport.start();
  assert.ok(await waitUntil(() => closed, 15_000), 'onclose never fired');
  assert.ok(await waitUntil(() => stderrEnded, 5000), 'the stderr stream never ended');
  assert.equal(transport.pid, null);
  await transport.close();
});

// The other side: a wrapper that exits while the server it backgrounded stays in the group and
// still writes on stdout. Its output is not dropped: the pipes are let go only once the group is empty.
test('a server still running in the group after its wrapper exits is heard to the end', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const talker =
    'let n = 0; const tick = setInterval(() => { n += 1; process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "tick", params: { n } }) + "\\n"); if (n === 4) { clearInterval(tick); } }, 600);';
  const transport = new OwnedStdioClientTransport({
    command: 'sh',
    args: ['-c', `"$0" -e '${talker}' </dev/null & exit 0`, process.execPath],
    env: { LEASH_TEST_MARK: mark },
    graceMs: 300,
  });
  const ticks: number[] = [];
  let closed = false;
  transport.onmessage = (message) => ticks.push((message as unknown as { params: { n: number } }).params.n);
  transport.onclose = () => {
    closed = true;
  };
  await transport.start();
  assert.ok(await waitUntil(() => closed, 15_000), 'onclose never fired');
  assert.deepEqual(ticks, [1, 2, 3, 4], 'every message the server wrote after its wrapper left arrived');
  await transport.close();
  assert.deepEqual(markedPids(mark), []);
});

// Many sends waiting on one full stdin share one 'drain' and one 'close' listener: one listener
// pair per send made Node warn of a leak (MaxListenersExceededWarning) past ten of them.
test('fifty sends waiting on a full stdin: no listener-leak warning, and all settle', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  t.after(() => {
    process.off('warning', onWarning);
  });
  const transport = await startStubborn(mark, 200);
  const big = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'x'.repeat(1 << 20) } };
  const sends = Array.from({ length: 50 }, () => transport.send(big).then(() => 'resolved', () => 'rejected'));
  assert.equal(await within(Promise.race(sends), 200), 'pending', 'the writes wait for the server to read');
  await transport.close();
  const outcomes = await within(Promise.all(sends), 5000);
  assert.notEqual(outcomes, 'pending', 'every send settled once the server was gone');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(warnings.filter((w) => w.includes('MaxListenersExceeded')), []);
});
