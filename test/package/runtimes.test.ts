// Owners under other runtimes: Bun and Deno run the library (and then the supervisor) themselves,
// and proc-leash/mcp with the real SDK. Neither is a dependency of this repository, so each test
// runs only when its binary is named (scripts/test-runtimes.sh installs both from npm and does):
//   LEASH_TEST_BUN=/path/to/bun LEASH_TEST_DENO=/path/to/deno node scripts/run-tests.mjs runtimes
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isProcessAlive } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { JsonLines, killMarked, LIBRARY_ENTRY, markedEnv, markedPids, newMark, REPO_ROOT, waitForGone } from '../helpers/processes.js';
import { wrappedServer } from '../mcp/chain.js';

const MCP_ENTRY = fileURLToPath(new URL('../../src/mcp/index.js', import.meta.url));
/** The SDK's Client by path: the script lives in a scratch folder, the SDK in this repository. */
const SDK_CLIENT = join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client', 'index.js');

/** Connects to the server named in LEASH_TEST_SERVER, lists its tools, waits for a line on stdin, closes. */
const MCP_CLIENT = `
import { Client } from ${JSON.stringify(pathToFileURL(SDK_CLIENT).href)};
import { OwnedStdioClientTransport } from ${JSON.stringify(pathToFileURL(MCP_ENTRY).href)};
const transport = new OwnedStdioClientTransport({ ...JSON.parse(process.env.LEASH_TEST_SERVER), stderr: 'ignore' });
const client = new Client({ name: 'leash-runtime-test', version: '0.0.0' });
await client.connect(transport);
const { tools } = await client.listTools();
console.log(JSON.stringify({ pgid: transport.pid, tools: tools.length }));
process.stdin.once('data', async () => {
  await client.close();
  console.log(JSON.stringify({ closed: true }));
  process.exit(0);
});
`;

// The owned child leaves an escapee behind: a process in a session of its own with a scrubbed
// environment, which only the supervisor's freeze and walk can find (a runtime on which the
// freeze fails to start would leave it running).
const OWNER = `
import { spawnOwned, supervisorPid } from ${JSON.stringify(LIBRARY_ENTRY)};
const child = spawnOwned('sh', ['-c', 'setsid env -i sleep 60 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
let escapee = '';
child.stdout.on('data', (chunk) => { escapee += chunk; });
setTimeout(() => console.log(JSON.stringify({ owner: process.pid, child: child.pid, escapee: Number(escapee.trim()), supervisor: supervisorPid() ?? null })), 500);
setInterval(() => {}, 1000);
`;

const runtimes: Array<[string, string | undefined, string[]]> = [
  ['Bun', process.env.LEASH_TEST_BUN, []],
  // The repository's node_modules as it is (npm's layout), for the SDK's own imports.
  ['Deno', process.env.LEASH_TEST_DENO, ['run', '--allow-all', '--node-modules-dir=manual']],
];

for (const [name, binary, flags] of runtimes) {
  test(`an owner under ${name} SIGKILLed: its owned child dies with it, and the escapee it left`, { skip: binary ? false : `set LEASH_TEST_${name.toUpperCase()} to run it` }, async (t) => {
    const mark = newMark();
    const dir = mkdtempSync(join(tmpdir(), 'leash-runtime-test-'));
    let escapee: { pid: number; startTime: number } | undefined;
    t.after(async () => {
      await killMarked(mark);
      // The escapee carries no mark (env -i): ended by its identity, if it outlived the test.
      if (escapee && readProcStat(escapee.pid)?.startTime === escapee.startTime) process.kill(escapee.pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    writeFileSync(join(dir, 'owner.mjs'), OWNER);
    const owner = spawn(binary!, [...flags, join(dir, 'owner.mjs')], { stdio: ['ignore', 'pipe', 'pipe'], env: markedEnv(mark) });
    const lines = new JsonLines(owner);
    const info = await lines.next<{ owner: number; child: number; escapee: number; supervisor: number | null }>(20_000);
    const escapeeStat = readProcStat(info.escapee);
    assert.ok(escapeeStat && escapeeStat.ppid === info.child && escapeeStat.pgid !== info.child, `the escapee did not start: ${JSON.stringify(info)}`);
    escapee = { pid: info.escapee, startTime: escapeeStat.startTime };
    // The process the test kills is the owner itself, not a launcher script in front of it.
    assert.equal(info.owner, owner.pid, `${binary} runs the owner as a child (a wrapper script?): killing it would not kill the owner`);
    assert.equal(typeof info.supervisor, 'number', `no supervisor under ${name}: ${lines.stderr}`);
    // The supervisor runs under the same runtime, not under a node that may not exist.
    const supervisorCommand = readFileSync(`/proc/${info.supervisor}/cmdline`, 'utf8').split('\0');
    assert.ok(supervisorCommand[0]!.includes(name.toLowerCase()), supervisorCommand.join(' '));
    owner.kill('SIGKILL');
    assert.ok(await waitForGone([info.child], 10_000), `the owned child outlived its ${name} owner`);
    assert.ok(await waitForGone([info.escapee], 10_000), `the escapee outlived its ${name} owner (was the freeze off?)`);
  });
}

for (const [name, binary, flags] of runtimes) {
  test(`proc-leash/mcp under ${name} with the real SDK: connect, close, the whole server tree gone`, { skip: binary ? false : `set LEASH_TEST_${name.toUpperCase()} to run it` }, async (t) => {
    const mark = newMark();
    const dir = mkdtempSync(join(tmpdir(), 'leash-runtime-mcp-'));
    t.after(async () => {
      await killMarked(mark);
      rmSync(dir, { recursive: true, force: true });
    });
    writeFileSync(join(dir, 'client.mjs'), MCP_CLIENT);
    // server-everything behind sh -c and a launcher, run by this Node: three processes in the group.
    const server = { ...wrappedServer(), env: { LEASH_TEST_MARK: mark } };
    const client = spawn(binary!, [...flags, join(dir, 'client.mjs')], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: markedEnv(mark, { LEASH_TEST_SERVER: JSON.stringify(server) }),
    });
    const lines = new JsonLines(client);
    const connected = await lines.next<{ pgid: number; tools: number }>(60_000);
    assert.ok(connected.tools > 0, `the server answered under ${name}`);
    const tree = markedPids(mark).filter((pid) => readProcStat(pid)?.pgid === connected.pgid);
    assert.ok(tree.length >= 3, `the server's group holds sh, the launcher and the server: ${tree.join(' ')}`);
    client.stdin!.write('close\n');
    await lines.next<{ closed: boolean }>(30_000);
    assert.deepEqual(tree.filter((pid) => isProcessAlive(pid)), [], `close() under ${name} resolved with part of the tree running`);
  });
}
