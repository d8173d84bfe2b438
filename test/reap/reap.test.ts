// `leash reap` against real leaks: the MCP SDK's own StdioClientTransport with the real
// server-everything behind sh -c and a launcher, its client SIGKILLed. Next to it, controls that
// must never be listed. Every --kill here is confined with --match to this test's marker, and
// every process carries the test's mark so that cleanup ends exactly this test's processes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { spawn } from 'node:child_process';
import { FIXTURES, JsonLines, exited, killMarked, markedEnv, newMark, startFixture, waitForGone } from '../helpers/processes.js';
import { CLIENT_FIXTURE, LAUNCHER, SERVER_ENTRY } from '../mcp/chain.js';
import { idle, q, runReap, runShell, reapScratch } from './harness.js';

interface ClientLine {
  client: number;
  leader: number;
  launcher: number;
  server: number;
  echo: string;
}

/** An SDK client (in its own session, like an editor) with server-everything behind sh -c. */
async function startClient(mark: string, marker: string) {
  const child = startFixture(
    CLIENT_FIXTURE,
    ['plain', 'sh', '-c', '"$@"; exit $?', marker, process.execPath, LAUNCHER, SERVER_ENTRY, 'stdio'],
    mark,
    { detached: true },
  );
  const line = await new JsonLines(child).next<ClientLine>(30_000);
  assert.equal(line.echo, 'Echo: hello from leash', 'the server answers through the SDK');
  return { child, line };
}

test('leash reap lists exactly the tree a SIGKILLed SDK client leaked, never a control, and --kill ends only it', async (t) => {
  const { mark, marker, ready } = reapScratch(t);

  const leak = await startClient(mark, marker);
  const alive = await startClient(mark, marker);
  // Controls, each with the marker on its command line so that --match would take them.
  await runShell(`setsid ${idle(marker, 'daemon')} </dev/null >/dev/null 2>&1 &`, mark, ready);
  await runShell(`${idle(marker, 'writer')} </dev/null 2>/dev/null | ${idle(marker, 'reader')} >/dev/null 2>&1 &`, mark, ready);
  // On a terminal: stdin is the pty, stdout a pipe whose reader (true) is gone, parent init.
  const onTerminal =
    `exec 9<&0; ${idle(marker, 'tty')} <&9 9<&- | true & ` +
    `i=0; while [ ! -e ${q(ready.path)}/tty ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; exit 0`;
  await runShell(`script -qfec ${q(`sh -c ${q(onTerminal)}`)} /dev/null`, mark, ready);
  const controls = {
    daemon: await ready.pid('daemon'),
    writer: await ready.pid('writer'),
    reader: await ready.pid('reader'),
    tty: await ready.pid('tty'),
  };
  assert.equal(readProcStat(controls.tty)?.ppid, 1, 'the terminal control is orphaned, like a leak');
  assert.equal(readProcStat(controls.reader)?.ppid, 1, 'the idle-writer control is orphaned, like a leak');

  const before = runReap(['--match', marker]);
  assert.equal(before.code, 0, `nothing leaked yet: ${JSON.stringify(before.report.trees)}`);
  assert.deepEqual(before.report.trees, []);

  signalProcess(leak.line.client, 'SIGKILL');
  await exited(leak.child);
  await waitUntil(() => readProcStat(leak.line.leader)?.ppid !== leak.line.client, 5000);

  const listed = runReap(['--match', marker]);
  assert.equal(listed.code, 1, 'exit 1: leaked trees found');
  assert.equal(listed.report.trees.length, 1, `exactly one tree: ${JSON.stringify(listed.report.trees, null, 1)}`);
  const tree = listed.report.trees[0]!;
  assert.equal(tree.pid, leak.line.leader, 'the top is the sh the SDK spawned');
  assert.deepEqual(
    tree.processes.map((member) => member.pid).sort(),
    [leak.line.leader, leak.line.launcher, leak.line.server].sort(),
    'the tree is sh, the launcher and the server',
  );
  assert.ok(tree.reasons.includes('stdin-no-writer'), `reasons: ${tree.reasons}`);
  assert.ok(tree.reasons.includes('stdout-no-reader'), `reasons: ${tree.reasons}`);
  assert.ok(tree.rssBytes > 10 * 1024 * 1024, `two node processes weigh more than 10 MB: ${tree.rssBytes}`);
  assert.equal(listed.report.total.rssBytes, tree.rssBytes);

  // Filters that leave it out, then one that keeps it.
  assert.equal(runReap(['--match', marker, '--older-than', '1h']).report.trees.length, 0);
  assert.equal(runReap(['--match', marker, '--min-memory', '100G']).report.trees.length, 0);
  assert.equal(runReap(['--match', marker, '--min-memory', '1M', '--older-than', '0s']).report.trees.length, 1);

  const killed = runReap(['--match', marker, '--kill', '--grace', '3s']);
  assert.equal(killed.code, 1, `killed: ${killed.stderr}`);
  assert.equal(killed.report.trees[0]?.kill?.result, 'ended');
  const leaked = [leak.line.leader, leak.line.launcher, leak.line.server];
  assert.ok(await waitForGone(leaked, 5000), 'nothing of the leaked tree runs');
  for (const [role, pid] of Object.entries(controls)) assert.ok(isProcessAlive(pid), `control ${role} untouched`);
  for (const pid of [alive.line.client, alive.line.leader, alive.line.launcher, alive.line.server]) {
    assert.ok(isProcessAlive(pid), `the live client's tree is untouched (${pid})`);
  }
  const after = runReap(['--match', marker]);
  assert.equal(after.code, 0);
  assert.deepEqual(after.report.trees, []);
});

test('a Python client (real pipes, not socket pairs) SIGKILLed: its server tree is listed and ended', async (t) => {
  const mark = newMark();
  const marker = `leash-reap-${mark}`;
  t.after(() => killMarked(mark));
  const client = spawn('python3', [`${FIXTURES}reap/python-client.py`, 'sh', '-c', '"$@"; exit $?', marker, process.execPath, SERVER_ENTRY, 'stdio'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark),
  });
  const line = await new JsonLines(client).next<{ client: number; leader: number; echo: string }>(30_000);
  assert.equal(line.echo, 'Echo: from python');
  assert.deepEqual(runReap(['--match', marker]).report.trees, [], 'nothing leaked while the client lives');

  signalProcess(line.client, 'SIGKILL');
  await exited(client);
  await waitUntil(() => readProcStat(line.leader)?.ppid !== line.client, 5000);
  const listed = runReap(['--match', marker]);
  assert.equal(listed.report.trees.length, 1, JSON.stringify(listed.report.trees, null, 1));
  const tree = listed.report.trees[0]!;
  assert.equal(tree.pid, line.leader);
  assert.equal(tree.processes.length, 2, 'sh and the server');
  assert.deepEqual(tree.reasons, ['stdin-no-writer', 'stdout-no-reader', 'stderr-no-reader']);

  const killed = runReap(['--match', marker, '--kill', '--grace', '3s']);
  assert.equal(killed.report.trees[0]?.kill?.result, 'ended');
  assert.ok(await waitForGone(tree.processes.map((member) => member.pid), 5000));
});
