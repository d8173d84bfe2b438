// `leash run --die-with-parent`: the tree goes down when leash's parent is SIGKILLed, and not
// when merely the parent's thread that started leash ends.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { CLI_ENTRY, JsonLines, exited, killMarked, markedPids, newMark, startFixture } from '../helpers/processes.js';
import { liveDescendantsOf, scratchDir } from '../helpers/leash-run.js';

// A tree with a SIGTERM-ignoring member, a setsid daemon and an orphan.
const TREE = [
  `sh -c 'trap "" TERM; exec sleep 60' &`,
  'setsid sleep 60 &',
  '(sleep 60 &)',
  'sleep 60 & wait',
].join('\n');

async function startTree(mode: 'main' | 'worker', mark: string, state = '') {
  // A state document tells the worker that leash has armed its parent-death signal (run/parent.mjs).
  const parent = startFixture('run/parent.mjs', [mode, CLI_ENTRY, 'run', '--die-with-parent', '--grace', '0.3', '--', 'sh', '-c', TREE], mark, {
    extraEnv: { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: state },
  });
  const lines = new JsonLines(parent);
  const { leash } = await lines.next<{ leash: number }>();
  assert.ok(await waitUntil(() => liveDescendantsOf(leash).length >= 5, 5000), lines.stderr);
  return { parent, lines, leash };
}

test('the tree is gone soon after the parent is SIGKILLed', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const { parent, lines, leash } = await startTree('main', mark);
  const tree = liveDescendantsOf(leash);
  parent.kill('SIGKILL');
  await exited(parent);
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 5000),
    `left: ${markedPids(mark)}; stderr: ${lines.stderr}`);
  assert.ok(tree.every((pid) => !isProcessAlive(pid)));
  // leash's last lines may still be in the pipe when its process is already gone.
  await waitUntil(() => /phase=exited/.test(lines.stderr), 5000);
  assert.match(lines.stderr, /reason="parent died"/);
  assert.match(lines.stderr, /phase=killing/);
});

test('the end of the thread that started leash is not the death of its parent', async (t) => {
  const mark = newMark();
  const scratch = scratchDir();
  t.after(async () => {
    await killMarked(mark);
    scratch.remove();
  });
  const { parent, lines, leash } = await startTree('worker', mark, join(scratch.dir, 'state.json'));
  const ended = await lines.next<{ workerExited?: boolean }>();
  assert.equal(ended.workerExited, true);
  // The kernel sends the parent-death signal now; leash must see that its parent still lives.
  assert.equal(await waitUntil(() => !isProcessAlive(leash), 1500), false, `leash stopped: ${lines.stderr}`);
  assert.ok(liveDescendantsOf(leash).length >= 5);
  parent.kill('SIGKILL');
  await exited(parent);
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 5000),
    `left: ${markedPids(mark)}; stderr: ${lines.stderr}`);
});

test('--parent-death-signal: the tree gets that signal when the parent dies (tini -p)', async (t) => {
  const mark = newMark();
  const scratch = scratchDir();
  t.after(async () => {
    await killMarked(mark);
    scratch.remove();
  });
  const record = join(scratch.dir, 'got');
  // Records the first of INT and TERM it gets, then exits: SIGTERM would be the default.
  const runner = `trap 'echo INT > "$0"; exit 0' INT; trap 'echo TERM > "$0"; exit 0' TERM; echo ready > "$0.ready"; while :; do sleep 0.05; done`;
  const parent = startFixture('run/parent.mjs', ['main', CLI_ENTRY, 'run', '--die-with-parent', '--parent-death-signal', 'INT', '--grace', '5', 'sh', '-c', runner, record], mark, {
    extraEnv: { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' },
  });
  const lines = new JsonLines(parent);
  await lines.next<{ leash: number }>();
  assert.ok(await waitUntil(() => existsSync(`${record}.ready`), 10_000), lines.stderr);
  parent.kill('SIGKILL');
  await exited(parent);
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 10_000), `left: ${markedPids(mark)}; stderr: ${lines.stderr}`);
  assert.equal(readFileSync(record, 'utf8').trim(), 'INT', lines.stderr);
});
