// signalIfSame reads only ESRCH from pidfd_open as "gone": with no descriptor to spare (EMFILE)
// the process is still there, and it must still be signalled (it used to be reported gone).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { readProcStat } from '../../src/sys/procfs.js';
import { exited, FIXTURES, killMarked, markedEnv, newMark } from '../helpers/processes.js';

const SRC = new URL('../../src/', import.meta.url).href;

function signalWithDescriptorsLeft(pid: number, startTime: number, spare: number): string {
  const run = spawnSync('sh', ['-c', 'ulimit -n 64 && exec "$0" "$@"', process.execPath, FIXTURES + 'pidfd-emfile.mjs', SRC, String(pid), String(startTime), String(spare)], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(run.status, 0, run.stderr);
  const [held, outcome] = run.stdout.trim().split(' ');
  assert.ok(Number(held) > 0, 'the fixture used up its descriptors');
  return outcome as string;
}

test('signalIfSame never calls a live process gone for want of descriptors, and signals it once it can identify it', { skip: process.platform !== 'linux' && 'pidfds are Linux' }, async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const target = spawn('sleep', ['30'], { env: markedEnv(mark), stdio: 'ignore' });
  const stat = readProcStat(target.pid as number);
  assert.ok(stat, 'the target runs');
  // None left: pidfd_open fails with EMFILE (it used to read as "gone"). One left: the pidfd takes
  // it and the start-time read fails (that too read as "gone").
  assert.equal(signalWithDescriptorsLeft(stat.pid, stat.startTime, 0), 'denied');
  assert.equal(signalWithDescriptorsLeft(stat.pid, stat.startTime, 1), 'denied');
  assert.equal(signalWithDescriptorsLeft(stat.pid, stat.startTime, 2), 'sent');
  const end = await exited(target, 5000);
  assert.equal(end.signal, 'SIGTERM');
});
