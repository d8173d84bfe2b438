import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import test from 'node:test';
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
