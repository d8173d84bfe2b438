// Processes forked below a leaked tree after the scan join its end only under the scan's own
// rules: a newcomer reading a terminal (someone is at it) is never signalled, nor anything below it.
// Fails without the re-check: the newcomer on the terminal takes SIGKILL with the rest.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import type { LeakedTree } from '../../src/reap/scan.js';
import { endTrees } from '../../src/reap/terminate.js';
import { isTerminalTarget, readFdTarget } from '../../src/sys/fds.js';
import { loadNative } from '../../src/sys/native.js';
import { isProcessAlive } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { killMarked, markedEnv, markedPidRunning, newMark } from '../helpers/processes.js';

test('a newcomer below a leaked tree that reads a terminal is spared; plain newcomers end with the tree', async (t) => {
  await loadNative();
  const mark = newMark();
  t.after(() => killMarked(mark));
  // The pty's shell ignores HUP and TERM (inherited by its sleep): only SIGKILL would end it.
  const script = `script -qc "trap '' HUP TERM; sleep 1001; : ${mark}-tty" /dev/null </dev/null >/dev/null 2>&1 & sleep 1002 & wait`;
  const top = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore', env: markedEnv(mark) });
  const byCommand = (text: string) => markedPidRunning(mark, text);
  let onTerminal: number | undefined;
  let plain: number | undefined;
  assert.ok(
    await waitUntil(() => {
      onTerminal = byCommand('sleep 1001');
      plain = byCommand('sleep 1002');
      return onTerminal !== undefined && plain !== undefined && isTerminalTarget(readFdTarget(onTerminal, 0));
    }, 10_000),
    'the tree is up, one sleep on a terminal',
  );
  const stat = readProcStat(top.pid!)!;
  // The scan saw only the top: everything below it is a newcomer.
  const tree: LeakedTree = {
    pid: stat.pid,
    startTime: stat.startTime,
    command: 'sh',
    ageSeconds: 0,
    parent: { pid: 1, command: 'init' },
    reasons: ['stdin-no-writer'],
    unproven: [],
    members: [{ pid: stat.pid, startTime: stat.startTime, command: 'sh', rssKb: 0 }],
    rssKb: 0,
  };
  await endTrees([tree], 300);
  assert.ok(!isProcessAlive(plain!), 'the plain newcomer ended with the tree');
  assert.ok(isProcessAlive(onTerminal!), 'the newcomer on a terminal was never signalled');
});
