// procfs parsing against tricky real inputs and real processes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { environHasEntry, parseProcStat, processIsEnding, readChildren, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, markedEnv, newMark } from '../helpers/processes.js';

test('parses a stat line whose command name holds spaces and parentheses', () => {
  const line = '4242 (evil) (name) R) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 0 0';
  const busy = '7 (w) R 1 7 7 0 -1 0 0 0 0 0 30 12 0 0 20 0 1 0 55 0 0';
  assert.equal(parseProcStat(7, busy)?.cpuTicks, 42);
  const stat = parseProcStat(4242, line);
  assert.deepEqual(stat, { pid: 4242, state: 'S', ppid: 17, pgid: 4242, sid: 4242, startTime: 987654, cpuTicks: 0 });
  assert.equal(parseProcStat(1, 'no parenthesis here'), undefined);
  assert.equal(parseProcStat(1, '1 (x) S'), undefined);
});

test('reads a live child: its stat, and its parent lists it as a child', async () => {
  const child = spawn('sleep', ['1000'], { stdio: 'ignore', env: markedEnv(newMark()) });
  try {
    const stat = readProcStat(child.pid!);
    assert.equal(stat?.ppid, process.pid);
    assert.ok((stat?.startTime ?? 0) > 0);
    assert.ok(readChildren(process.pid)?.includes(child.pid!));
  } finally {
    child.kill('SIGKILL');
    await exited(child);
  }
  assert.equal(readProcStat(child.pid!), undefined, 'reaped: gone');
});

test('environHasEntry matches whole entries only', async () => {
  const mark = newMark();
  const child = spawn('sleep', ['1000'], { stdio: 'ignore', env: { ...markedEnv(mark), ZZ_LAST: 'tail', XLEASH_T: 'abc' } });
  try {
    // The environ file is written by exec; wait for the child to have run it.
    assert.ok(await waitUntil(() => environHasEntry(child.pid!, `LEASH_TEST_MARK=${mark}`), 5000));
    assert.ok(environHasEntry(child.pid!, 'XLEASH_T=abc'));
    assert.equal(environHasEntry(child.pid!, 'LEASH_T=abc'), false, 'a suffix of another entry');
    assert.equal(environHasEntry(child.pid!, 'XLEASH_T=ab'), false, 'a prefix of a value');
    assert.equal(environHasEntry(child.pid!, `LEASH_TEST_MARK=${mark.slice(0, -1)}`), false);
  } finally {
    child.kill('SIGKILL');
    await exited(child);
  }
  assert.equal(environHasEntry(child.pid!, `LEASH_TEST_MARK=${mark}`), false, 'gone: false');
});

test('processIsEnding: a zombie that exited by a signal or with a non-zero code, never a live process, one that exited with 0 or one that started at another time', async () => {
  // Each zombie is the child of a `sleep` that never reaps it: its shell exec'd sleep before they
  // ended (a shell may reap a finished job while it still runs).
  const zombies = spawn('sh', ['-c', 'sh -c "sleep 0.5; kill -9 \\$\\$" & a=$!; (sleep 0.5; exit 3) & b=$!; (sleep 0.5; exit 0) & c=$!; echo "$a $b $c"; exec sleep 1000'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: markedEnv(newMark()),
  });
  try {
    let line = '';
    zombies.stdout!.setEncoding('utf8').on('data', (text: string) => (line += text));
    assert.ok(await waitUntil(() => line.includes('\n'), 5000));
    const [killed, failed, succeeded] = line.trim().split(' ').map(Number) as [number, number, number];
    assert.ok(await waitUntil(() => [killed, failed, succeeded].every((pid) => readProcStat(pid)?.state === 'Z'), 5000));
    assert.equal(processIsEnding(killed), true, 'SIGKILLed');
    const started = readProcStat(killed)!.startTime;
    assert.equal(processIsEnding(killed, started), true, 'SIGKILLed, the process that started then');
    assert.equal(processIsEnding(killed, started + 1), false, 'SIGKILLed, but another start time: not that process');
    assert.equal(processIsEnding(failed), true, 'exit 3');
    assert.equal(processIsEnding(succeeded), false, 'exit 0: as a main thread that ended alone');
    assert.equal(processIsEnding(zombies.pid!), false, 'alive');
  } finally {
    zombies.kill('SIGKILL');
    await exited(zombies);
  }
  assert.equal(processIsEnding(zombies.pid!), false, 'gone');
});
