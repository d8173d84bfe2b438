// terminateOwned ends what escaped the group, not only the group: a child the server started
// with setsid (or `detached: true`) leads a group of its own and would otherwise run on until the
// owner dies. Found from the group's leader before the first signal, each escapee gets the same
// TERM, grace and KILL, by its identity; a group the owner guards on its own is spared. The MCP
// transport's close() finds them before stdin ends, since a server that leaves on EOF hands what
// it started to init, where no walk from the group finds it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ownProcessGroup, releaseProcessGroup, spawnOwned, terminateOwned } from '../../src/index.js';
import { DEFAULT_TERM_GRACE_MS, OwnedStdioClientTransport } from '../../src/mcp/index.js';
import { isProcessAlive } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { FIXTURES, LIBRARY_ENTRY, killMarked, markedEnv, markedPidRunning, newMark } from '../helpers/processes.js';

/** Waits for every command to run under the mark; returns their pids in the same order. */
async function pidsOf(mark: string, commands: readonly string[]): Promise<number[]> {
  assert.ok(await waitUntil(() => commands.every((command) => markedPidRunning(mark, command) !== undefined), 15_000), `not started: ${commands.join(', ')}`);
  return commands.map((command) => markedPidRunning(mark, command)!);
}

/**
 * A transport to a node server that starts `helper` (a command line for sh) detached, then
 * leaves `exitAfterEofMs` after its stdin ends; resolves once `commands` run.
 */
async function serverWithDetachedHelper(mark: string, helper: string, options: { graceMs: number; exitAfterEofMs?: number; commands: string[] }) {
  const server = [
    "const { spawn } = require('node:child_process');",
    `spawn('sh', ['-c', ${JSON.stringify(helper)}], { detached: true, stdio: 'ignore' }).unref();`,
    `process.stdin.on('end', () => setTimeout(() => process.exit(0), ${options.exitAfterEofMs ?? 0})).resume();`,
  ].join('\n');
  const transport = new OwnedStdioClientTransport({ command: process.execPath, args: ['-e', server], env: { LEASH_TEST_MARK: mark }, graceMs: options.graceMs });
  await transport.start();
  return { transport, pids: await pidsOf(mark, options.commands) };
}

test('terminateOwned ends the setsid escapees of the group too (one ignores SIGTERM); a separately owned group is spared', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  // sleep 2020 leads a session of its own with a child; sleep 2022 ignores SIGTERM (ignored
  // signals survive exec); sleep 2023 escapes too, and the owner guards its group itself; sleep
  // 2025's group the owner guards and then releases. What escaped those two (sleep 2024, 2026)
  // is theirs, not the server's: spared with them.
  const script = [
    `setsid sh -c 'sleep 2021 & exec sleep 2020' &`,
    `(trap '' TERM; exec setsid sleep 2022) &`,
    `setsid sh -c 'setsid sleep 2024 & exec sleep 2023' &`,
    `setsid sh -c 'setsid sleep 2026 & exec sleep 2025' &`,
    'exec sleep 2019',
  ].join('\n');
  const server: ChildProcess = spawnOwned('sh', ['-c', script], { stdio: 'ignore', env: markedEnv(mark) });
  const commands = ['sleep 2019', 'sleep 2020', 'sleep 2021', 'sleep 2022', 'sleep 2023', 'sleep 2024', 'sleep 2025', 'sleep 2026'];
  const [member, escapee, grandchild, stubborn, guarded, guardedsEscapee, released, releasedsEscapee] = await pidsOf(mark, commands);
  for (const pid of [escapee, grandchild, stubborn, guarded, released]) assert.notEqual(readProcStat(pid!)?.pgid, server.pid, `${pid} is still in the group`);
  assert.equal(ownProcessGroup(readProcStat(guarded!)!.pgid), true);
  assert.equal(ownProcessGroup(readProcStat(released!)!.pgid), true);
  assert.equal(releaseProcessGroup(readProcStat(released!)!.pgid), true);

  const result = await terminateOwned(server, { graceMs: 300 });
  assert.deepEqual(result, { pgid: server.pid, owned: true, escalated: true, empty: true });
  const left = [member, escapee, grandchild, stubborn].filter((pid) => isProcessAlive(pid!));
  assert.deepEqual(left, [], `outlived terminateOwned: ${left.join(' ')}`);
  const spared = { guarded, guardedsEscapee, released, releasedsEscapee };
  const ended = Object.entries(spared).filter(([, pid]) => !isProcessAlive(pid!)).map(([name]) => name);
  assert.deepEqual(ended, [], 'a group owned on its own or released, or what escaped it, was ended with another');
  assert.equal((await terminateOwned(readProcStat(guarded!)!.pgid, { graceMs: 300 })).empty, true);
  assert.equal(isProcessAlive(guardedsEscapee!), false, 'terminateOwned of the guarded group left its own escapee');
});

test('an owner that guards the group of a shell it descends from ends the shell, never itself', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  // The shell leads its own session; the owner, its child, leads another (setsid again).
  const shell = spawn('setsid', ['sh', '-c', `sleep 2060 & setsid "${process.execPath}" "${FIXTURES}guards-its-ancestor.mjs" $$; wait`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: markedEnv(mark, { LEASH_LIBRARY: LIBRARY_ENTRY }),
  });
  let output = '';
  shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  assert.ok(await waitUntil(() => output.includes('\n'), 20_000), 'the owner printed no result: it was ended by its own terminateOwned');
  const result = JSON.parse(output) as { owned: boolean; empty: boolean };
  assert.equal(result.owned, true);
  assert.equal(result.empty, true);
  assert.ok(await waitUntil(() => markedPidRunning(mark, 'sleep 2060') === undefined, 5000), 'the shell\'s group outlived terminateOwned');
});

test('terminateOwned with escapees: false ends the group alone', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const server = spawnOwned('sh', ['-c', 'setsid sleep 2041 &\nexec sleep 2040'], { stdio: 'ignore', env: markedEnv(mark) });
  const [member, escapee] = await pidsOf(mark, ['sleep 2040', 'sleep 2041']);
  const result = await terminateOwned(server, { graceMs: 300, escapees: false });
  assert.deepEqual(result, { pgid: server.pid, owned: true, escalated: false, empty: true });
  assert.equal(isProcessAlive(member!), false);
  assert.equal(isProcessAlive(escapee!), true, 'the escapee was ended although escapees: false');
});

test('the MCP transport\'s close(): a detached child of a server that leaves on EOF is ended too', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  // A well-behaved server: it exits when stdin ends, leaving its detached helper to init.
  const { transport, pids: [helper] } = await serverWithDetachedHelper(mark, 'exec sleep 2031', { graceMs: 300, commands: ['sleep 2031'] });
  assert.notEqual(readProcStat(helper!)?.pgid, transport.pid, 'the helper is still in the server\'s group');
  await transport.close();
  assert.equal(isProcessAlive(helper!), false, 'the server\'s detached helper outlived close()');
});

test('close() with graceMs NaN: the transport\'s default grace (2 s), by terminateOwned\'s rule, also for an escapee that ignores SIGTERM', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const { transport, pids: [helper] } = await serverWithDetachedHelper(mark, "trap '' TERM; exec sleep 2081", { graceMs: Number.NaN, commands: ['sleep 2081'] });
  const started = performance.now();
  const closed = await Promise.race([transport.close().then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 20_000, 'pending'))]);
  assert.equal(closed, 'closed', 'close() never resolved: a NaN grace was waited forever');
  assert.ok(performance.now() - started >= DEFAULT_TERM_GRACE_MS - 100, 'the TERM-ignoring helper was not given the default grace');
  assert.equal(isProcessAlive(helper!), false, 'the helper outlived close()');
});

test('close(): an escapee whose group the owner takes while the server winds down is spared, with what escaped it', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  // The helper (sleep 2090) leads a session of its own and starts another (sleep 2091); the
  // server stays 500 ms after stdin ends, time for the owner to take the helper's group.
  const { transport, pids: [helper, below] } = await serverWithDetachedHelper(mark, 'setsid sleep 2091 & exec sleep 2090', {
    graceMs: 300,
    exitAfterEofMs: 500,
    commands: ['sleep 2090', 'sleep 2091'],
  });
  const closing = transport.close();
  await new Promise((resolve) => setTimeout(resolve, 150)); // past close()'s look for escapees, before the server leaves
  assert.equal(ownProcessGroup(readProcStat(helper!)!.pgid), true);
  await closing;
  assert.deepEqual([isProcessAlive(helper!), isProcessAlive(below!)], [true, true], 'the group taken meanwhile, or what escaped it, was ended');
  assert.equal((await terminateOwned(readProcStat(helper!)!.pgid, { graceMs: 300 })).empty, true);
});

test('terminateOwned never rejects on a target or options whose getters throw', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const throwing = (): never => {
    throw new Error('getter');
  };
  const target = Object.defineProperty({}, 'pid', { get: throwing }) as ChildProcess;
  assert.deepEqual(await terminateOwned(target), { pgid: undefined, owned: false, escalated: false, empty: true });
  const server = spawnOwned('sleep', ['2099'], { stdio: 'ignore', env: markedEnv(mark) });
  await pidsOf(mark, ['sleep 2099']);
  const options = Object.defineProperty({}, 'escapees', { get: throwing });
  assert.equal((await terminateOwned(server, options)).empty, true);
});

test('100 terminateOwned calls at once, each group with an escapee: all of them ended, the event loop never held long', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const servers = Array.from({ length: 100 }, (_, i) => spawnOwned('sh', ['-c', `setsid sleep ${3000 + i} &\nexec sleep 2999`], { stdio: 'ignore', env: markedEnv(mark) }));
  const escapees = await pidsOf(mark, servers.map((_, i) => `sleep ${3000 + i}`));
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const results = await Promise.all(servers.map((server) => terminateOwned(server, { graceMs: 1000 })));
  delay.disable();
  for (const result of results) assert.equal(result.empty, true);
  const left = escapees.filter((pid) => isProcessAlive(pid));
  assert.deepEqual(left, [], `escapees outlived terminateOwned: ${left.join(' ')}`);
  // Generous for a shared, loaded machine: the stall itself is measured in bench/owner-stall.ts.
  assert.ok(delay.max / 1e6 < 250, `the event loop was held for ${(delay.max / 1e6).toFixed(1)} ms`);
});
