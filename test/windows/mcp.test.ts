// leash/mcp on Windows, under Wine: the real SDK Client and the real server-everything from
// node_modules, behind cmd.exe (as npx.cmd puts it on Windows), so the server is a grandchild that
// libuv's job lets go. A busy server does not leave on stdin's end, as real servers outlive
// crashed clients; the control shows the SDK's own transport leaving it running.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { OwnedStdioClientTransport } from '../../src/mcp/index.js';
import { killFromLinux, killMarked, linuxPidsWith, newMark, waitUntil } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SERVER = `${ROOT}node_modules\\@modelcontextprotocol\\server-everything\\dist\\index.js`;
const CLIENT = `${ROOT}test\\fixtures\\mcp\\client.mjs`;
const LIBRARY = fileURLToPath(new URL('../../src/index.js', import.meta.url));
const marks: string[] = [];
after(async () => {
  for (const mark of marks) await killMarked(mark);
});

/** cmd.exe running the server; both carry `<mark>-server` in their command lines. */
function serverCommand(mark: string): { command: string; args: string[] } {
  return { command: 'cmd.exe', args: ['/d', '/s', '/c', `${process.execPath} ${SERVER} stdio ${mark}-server`] };
}
const serverNode = (mark: string) =>
  linuxPidsWith(`${mark}-server`).filter((pid) => !readFileSync(`Z:\\proc\\${pid}\\cmdline`, 'latin1').includes('cmd.exe') && !readFileSync(`Z:\\proc\\${pid}\\cmdline`, 'latin1').includes('client.mjs'));

for (const mode of ['owned', 'plain'] as const) {
  test(mode === 'owned'
    ? 'OwnedStdioClientTransport: the client killed from Linux takes cmd.exe and the busy server with it'
    : 'control: with the SDK transport the busy server outlives the client killed from Linux', async () => {
    const mark = newMark();
    marks.push(mark);
    const { command, args } = serverCommand(mark);
    const client = spawn(process.execPath, [CLIENT, mode, command, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LEASH_LIBRARY: LIBRARY },
    });
    let out = '';
    client.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    client.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    assert.ok(await waitUntil(() => out.includes('\n'), 120_000), `the client did not report: ${out}`);
    // Its first line is the report, unless the client failed: then what it printed is the message
    // (once under a doubled load the client ended within 2.5 s, printing an error where the report goes).
    const first = out.split('\n')[0] as string;
    assert.ok(first.startsWith('{'), `the client failed: ${out.slice(0, 3000)}`);
    const report = JSON.parse(first) as { tools: string[]; echo: string };
    assert.ok(report.tools.includes('echo'));
    assert.equal(report.echo, 'Echo: hello from leash');
    assert.equal(serverNode(mark).length, 1, 'the server is not running behind cmd.exe');
    const clientPid = linuxPidsWith(`${mark}-server`).find((pid) => readFileSync(`Z:\\proc\\${pid}\\cmdline`, 'latin1').includes('client.mjs'));
    assert.ok(clientPid, 'the client is not visible from Linux');
    const exited = once(client, 'exit');
    assert.ok(await killFromLinux([clientPid]));
    await exited;
    if (mode === 'owned') {
      assert.ok(await waitUntil(() => linuxPidsWith(mark).length === 0, 10_000), `left running: ${linuxPidsWith(mark).join(' ')}`);
    } else {
      assert.ok(!(await waitUntil(() => serverNode(mark).length === 0, 2000)), 'the control server died: the test proves nothing');
      await killMarked(mark);
    }
  });
}

test('close() ends the busy server behind cmd.exe and resolves once nothing of it runs', async () => {
  const mark = newMark();
  marks.push(mark);
  const transport = new OwnedStdioClientTransport({ ...serverCommand(mark), stderr: 'pipe', eofGraceMs: 300, graceMs: 1000 });
  const client = new Client({ name: 'leash-windows-test', version: '0.0.0' });
  await client.connect(transport);
  const result = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
  assert.equal((result.content as Array<{ text?: string }>)[0]?.text, 'Echo: hi');
  client
    .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 300, steps: 1 } }, undefined, { timeout: 600_000 })
    .catch(() => {});
  assert.equal(serverNode(mark).length, 1);
  await transport.close();
  assert.equal(linuxPidsWith(`${mark}-server`).length, 0, 'close() resolved with the server tree still running');
});
