// `leash run --die-with-parent` behind a waiting intermediary (sh -c, as npm exec, npx and uvx
// stand between a client and its server): leash's parent outlives the client, so only the
// server's stdin tells that the client is gone: no writer is left on it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scanAllStats } from '../../src/sys/procfs.js';
import { isProcessAlive } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { CLI_ENTRY, JsonLines, exited, killMarked, markedPids, newMark, startFixture } from '../helpers/processes.js';
import { liveDescendantsOf } from '../helpers/leash-run.js';

// A TERM-ignoring member, a setsid daemon and an orphan: none of them reads stdin.
const TREE = [`sh -c 'trap "" TERM; exec sleep 60' &`, 'setsid sleep 60 &', '(sleep 60 &)', 'sleep 60 & wait'].join('\n');
const GRACE_S = 0.3;

function startClient(mode: 'pipe' | 'socket', mark: string, command: string[]) {
  const client = startFixture(
    'run/client.mjs',
    [mode, process.execPath, CLI_ENTRY, 'run', '--die-with-parent', '--grace', String(GRACE_S), '--', ...command],
    mark,
    { stdio: ['pipe', 'pipe', 'pipe'], extraEnv: { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' } },
  );
  return { client, lines: new JsonLines(client) };
}

/** leash, the intermediary's child, once it runs. */
async function leashBelow(intermediary: number): Promise<number> {
  let leash = 0;
  assert.ok(await waitUntil(() => {
    leash = scanAllStats().find((stat) => stat.ppid === intermediary)?.pid ?? 0;
    return leash !== 0;
  }, 10_000), 'leash did not start');
  return leash;
}

for (const mode of ['pipe', 'socket'] as const) {
  test(`client SIGKILLed behind sh -c (stdin a ${mode}): the whole tree is gone, the intermediary lives on meanwhile`, async (t) => {
    const mark = newMark();
    t.after(() => killMarked(mark));
    const { client, lines } = startClient(mode, mark, ['sh', '-c', TREE]);
    const { intermediary } = await lines.next<{ intermediary: number }>();
    const leash = await leashBelow(intermediary);
    assert.ok(await waitUntil(() => liveDescendantsOf(leash).length >= 5, 10_000), lines.stderr);
    const tree = liveDescendantsOf(leash);
    client.kill('SIGKILL');
    await exited(client);
    // leash's parent is still there: only stdin can have told leash.
    assert.ok(isProcessAlive(intermediary), 'the intermediary ended with the client: the case did not happen');
    // The EOF grace, the grace after SIGTERM, and a busy machine's slack.
    assert.ok(await waitUntil(() => markedPids(mark).length === 0, 2 * GRACE_S * 1000 + 8000),
      `left: ${markedPids(mark)}; stderr: ${lines.stderr}`);
    assert.ok(tree.every((pid) => !isProcessAlive(pid)));
  });
}

test('client closes the server\'s stdin and lives: a server that exits on EOF does so unsignalled', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const { client, lines } = startClient('socket', mark, ['sh', '-c', 'cat > /dev/null; exit 7']);
  const { intermediary } = await lines.next<{ intermediary: number }>();
  await leashBelow(intermediary);
  client.stdin?.write('close\n');
  await lines.next<{ closed: boolean }>();
  assert.ok(await waitUntil(() => /leash exited with/.test(lines.stderr), 10_000), lines.stderr);
  assert.match(lines.stderr, /leash exited with 7/);
  assert.doesNotMatch(lines.stderr, /phase=stopping/);
  client.kill('SIGKILL');
});

test('client closes the server\'s stdin: a server that ignores EOF gets SIGTERM after the grace, then SIGKILL', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  // Neither reads stdin nor dies of SIGTERM; says when it got one.
  const server = `trap 'echo "server: got TERM" >&2' TERM; while :; do sleep 0.05; done`;
  const { client, lines } = startClient('pipe', mark, ['sh', '-c', server]);
  const { intermediary } = await lines.next<{ intermediary: number }>();
  const leash = await leashBelow(intermediary);
  assert.ok(await waitUntil(() => liveDescendantsOf(leash).length >= 1, 10_000), lines.stderr);
  client.stdin?.write('close\n');
  await lines.next<{ closed: boolean }>();
  const closedAt = performance.now();
  assert.ok(await waitUntil(() => /server: got TERM/.test(lines.stderr), 10_000), lines.stderr);
  // The server had the whole grace to exit by itself first.
  assert.ok(performance.now() - closedAt >= GRACE_S * 1000 * 0.9, lines.stderr);
  assert.ok(await waitUntil(() => /leash exited with/.test(lines.stderr), 10_000), lines.stderr);
  assert.match(lines.stderr, /phase=stopping .*reason="client gone/);
  // (leash names the phase after sending its signal: the server may speak first.)
  const order = [/stdin has no writer left/, /server: got TERM/, /phase=killing/, /leash exited with 137/]
    .map((pattern) => lines.stderr.search(pattern));
  assert.ok(order.every((at, index) => at >= 0 && (index === 0 || at > (order[index - 1] as number))), `${order}\n${lines.stderr}`);
  client.kill('SIGKILL');
});

test('--no-stdin-watch: a closed stdin changes nothing; a stdin that is not a pipe is said once', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const client = startFixture(
    'run/client.mjs',
    ['pipe', process.execPath, CLI_ENTRY, 'run', '--die-with-parent', '--no-stdin-watch', '--grace', String(GRACE_S), 'sleep', '30'],
    mark,
    { stdio: ['pipe', 'pipe', 'pipe'], extraEnv: { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' } },
  );
  const lines = new JsonLines(client);
  const { intermediary } = await lines.next<{ intermediary: number }>();
  const leash = await leashBelow(intermediary);
  assert.ok(await waitUntil(() => liveDescendantsOf(leash).length >= 1, 10_000), lines.stderr);
  client.stdin?.write('close\n');
  await lines.next<{ closed: boolean }>();
  // Twice the EOF grace and the stop's: a watch would have ended the tree by then.
  assert.equal(await waitUntil(() => !isProcessAlive(leash), 4 * GRACE_S * 1000 + 1000), false, lines.stderr);
  assert.doesNotMatch(lines.stderr, /no writer left|phase=stopping/);
  // (Its tree stays, as asked: the test's clean-up ends it.)
  client.kill('SIGKILL');

  // stdin /dev/null: nothing to watch, said once; the parent is still watched.
  const plainMark = newMark();
  t.after(() => killMarked(plainMark));
  const plain = startFixture('run/parent.mjs', ['main', CLI_ENTRY, 'run', '--die-with-parent', '--grace', String(GRACE_S), 'sleep', '30'], plainMark, {
    extraEnv: { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' },
  });
  const plainLines = new JsonLines(plain);
  await plainLines.next<{ leash: number }>();
  assert.ok(await waitUntil(() => /note: --die-with-parent: stdin is a null device/.test(plainLines.stderr), 10_000), plainLines.stderr);
  plain.kill('SIGKILL');
  await exited(plain);
  assert.ok(await waitUntil(() => markedPids(plainMark).length === 0, 10_000), `left: ${markedPids(plainMark)}; ${plainLines.stderr}`);
  assert.equal(plainLines.stderr.match(/note: --die-with-parent/g)?.length, 1);
  assert.match(plainLines.stderr, /reason="parent died"/);
});
