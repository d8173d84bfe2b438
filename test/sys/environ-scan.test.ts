// A process in the middle of an execve shows an empty environment for an instant. A carrier scan
// that reads it then must look again rather than call it a stranger: the owner lets its
// supervisor go on the scan's word. Shown with a shell started with no environment that, once
// told, execs into a carrier: the "instant" held open as long as the test likes.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { findEnvironmentCarriersInSlices, recheckEmptyEnvirons } from '../../src/sys/environ-scan.js';
import { environmentCarrierOrEmpty } from '../../src/sys/processes.js';
import { environEntryState, hasProcfs } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, MARK_VARIABLE, markedEnv, newMark } from '../helpers/processes.js';

const skip = !hasProcfs() && 'environments are read from /proc';

test('environEntryState: present, absent, empty (no environment at all) and unreadable (gone)', { skip }, async (t) => {
  const mark = newMark();
  const marked = spawn('sleep', ['1031'], { stdio: 'ignore', env: markedEnv(mark) });
  const bare = spawn('env', ['-i', 'sleep', '1032'], { stdio: 'ignore' });
  t.after(async () => {
    for (const child of [marked, bare]) {
      child.kill('SIGKILL');
      await exited(child);
    }
  });
  const entry = `${MARK_VARIABLE}=${mark}`;
  assert.ok(await waitUntil(() => environEntryState(marked.pid!, entry) === 'present', 5000), 'the marked sleep never showed its mark');
  assert.equal(environEntryState(marked.pid!, `${MARK_VARIABLE}=${newMark()}`), 'absent');
  // env -i becomes sleep with nothing in its environment (wait for the exec).
  assert.ok(await waitUntil(() => environEntryState(bare.pid!, entry) === 'empty', 5000), 'env -i sleep never read empty');
  assert.equal(environmentCarrierOrEmpty(bare.pid!, entry, process.getuid?.()), 'empty');
  assert.equal(environmentCarrierOrEmpty(2, entry, undefined), undefined, 'a kernel thread is never "empty": it has no environment to come');
  marked.kill('SIGKILL');
  await exited(marked);
  assert.equal(environEntryState(marked.pid!, entry), 'unreadable');
});

/**
 * A shell with no environment at all until `go()`; then it execs into `sleep` carrying `entry`:
 * the instant of an execve, held open as long as the test likes. Ended after the test.
 */
function shellThatBecomesCarrier(t: { after: (fn: () => Promise<void>) => void }, entry: string, seconds: number) {
  const dir = mkdtempSync(join(tmpdir(), 'leash-environ-'));
  const fifo = join(dir, 'go');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo failed');
  const child = spawn('env', ['-i', '/bin/sh', '-c', `read x < '${fifo}'; exec /usr/bin/env ${entry} sleep ${seconds}`], { stdio: 'ignore' });
  t.after(async () => {
    child.kill('SIGKILL');
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
  });
  // Blocks until the shell opens its end; then the shell execs twice (env, then sleep).
  return { pid: child.pid!, go: () => writeFileSync(fifo, 'go\n') };
}

test('a process whose environment read empty is looked at again: one that execs into a carrier is found, one that stays empty is not', { skip }, async (t) => {
  const entry = `${MARK_VARIABLE}=${newMark()}`;
  const execing = shellThatBecomesCarrier(t, entry, 1033);
  const bare = spawn('env', ['-i', 'sleep', '1034'], { stdio: 'ignore' });
  t.after(async () => {
    bare.kill('SIGKILL');
    await exited(bare);
  });
  const uid = process.getuid?.();
  assert.ok(
    await waitUntil(() => [execing.pid, bare.pid!].every((pid) => environmentCarrierOrEmpty(pid, entry, uid) === 'empty'), 5000),
    'both should read empty first',
  );
  const scan = recheckEmptyEnvirons([execing.pid, bare.pid!], entry, uid, [20, 50, 100, 200, 400, 800, 1600]);
  execing.go();
  const found = await scan;
  assert.deepEqual(found.map((m) => m.pid), [execing.pid], 'the shell that became a carrier, and only it');
  assert.equal(environEntryState(execing.pid, entry), 'present');
  assert.equal(environEntryState(bare.pid!, entry), 'empty');
});

test('the owner\'s sliced scan looks again at a process it read empty: one that became a carrier meanwhile is found', { skip }, async (t) => {
  const entry = `${MARK_VARIABLE}=${newMark()}`;
  const execing = shellThatBecomesCarrier(t, entry, 1035);
  assert.ok(await waitUntil(() => environEntryState(execing.pid, entry) === 'empty', 5000), 'the shell should read empty first');
  // The first pass (every process once, ~20 ms here) reads the shell empty; the shell becomes a
  // carrier at 200 ms, before the first look again at 400 ms. Were the pass slower than 200 ms,
  // it would read the carrier itself and the test would prove less, never fail wrongly.
  const scan = findEnvironmentCarriersInSlices(entry, [400, 800, 1600]);
  await sleep(200);
  execing.go();
  const found = await scan;
  assert.deepEqual(found.map((m) => m.pid), [execing.pid]);
});
