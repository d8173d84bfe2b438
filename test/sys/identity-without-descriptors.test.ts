import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import test from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { exited, FIXTURES, killMarked, markedEnv, newMark } from '../helpers/processes.js';

const SRC = new URL('../../src/', import.meta.url).href;

test('with no descriptor left, a live leader is neither recorded as gone nor taken for dead', { skip: process.platform !== 'linux' && 'procfs is Linux' }, async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const target = spawn('sleep', ['30'], { env: markedEnv(mark), stdio: 'ignore', detached: true });
  const stat = readProcStat(target.pid as number);
  assert.ok(stat, 'the target runs');
  const run = spawnSync('sh', ['-c', 'ulimit -n 64 && exec "$0" "$@"', process.execPath, FIXTURES + 'identity-emfile.mjs', SRC, String(stat.pid), String(stat.startTime)], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(run.status, 0, run.stderr);
  const [held, identity, alive] = run.stdout.trim().split(' ');
  assert.ok(Number(held) > 0, 'the fixture used up its descriptors');
  // It used to record LEADER_ALREADY_GONE (0): the supervisor then took the group's own leader
  // for a stranger and spared the group. Unknown (no identity) is the honest answer.
  assert.equal(identity, 'undefined');
  assert.equal(alive, 'true');
  target.kill('SIGKILL');
  await exited(target, 5000);
});

test('a pid that names no process (undefined, NaN, 0, negative) is not alive, whatever kill(2) would say of it', () => {
  // A helper's lookup that found nothing used to pass undefined along; with the answer for an
  // unreadable stat now "alive", it must not turn into a wait that never ends.
  for (const pid of [undefined as unknown as number, Number.NaN, 0, -1, 1.5]) assert.equal(isProcessAlive(pid), false, String(pid));
});
