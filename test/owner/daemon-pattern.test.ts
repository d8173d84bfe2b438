// The one deliberate difference from Node: a child started detached and unref'd (Node's daemon
// pattern) outlives an owner that used spawn, and not one that used spawnOwned; a daemon on
// purpose is spawnOwned then releaseProcessGroup. The owner here exits normally, its loop empty.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { exited, JsonLines, killMarked, LIBRARY_ENTRY, markedEnv, newMark, waitForGone } from '../helpers/processes.js';

const scratch = mkdtempSync(join(tmpdir(), 'leash-daemon-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const OWNER = `
import { spawn } from 'node:child_process';
import { releaseProcessGroup, spawnOwned } from ${JSON.stringify(LIBRARY_ENTRY)};
const how = process.argv[2];
const create = how === 'spawn' ? spawn : spawnOwned;
const child = create('sleep', ['300'], { detached: true, stdio: 'ignore' });
if (how === 'released') releaseProcessGroup(child.pid);
child.unref();
console.log(JSON.stringify({ child: child.pid }));
`;
writeFileSync(join(scratch, 'owner.mjs'), OWNER);

/** Runs the owner to its normal end; returns its child's pid. */
async function daemonOf(how: string, mark: string): Promise<number> {
  const owner = spawn(process.execPath, [join(scratch, 'owner.mjs'), how], { stdio: ['ignore', 'pipe', 'pipe'], env: markedEnv(mark) });
  const lines = new JsonLines(owner);
  const { child } = await lines.next<{ child: number }>(20_000);
  assert.equal((await exited(owner)).code, 0, lines.stderr);
  return child;
}

test('spawn, detached and unref\'d (the control): the child outlives its owner', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const child = await daemonOf('spawn', mark);
  assert.equal(await waitForGone([child], 2000), false, 'the detached child should have lived on');
  assert.ok(isProcessAlive(child));
});

test('spawnOwned, detached and unref\'d: the child ends with its owner', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const child = await daemonOf('owned', mark);
  assert.ok(await waitForGone([child], 10_000), 'the owned child outlived its owner');
});

test('spawnOwned then releaseProcessGroup: a daemon on purpose outlives its owner', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const child = await daemonOf('released', mark);
  assert.equal(await waitForGone([child], 2000), false, 'the released child should have lived on');
});
