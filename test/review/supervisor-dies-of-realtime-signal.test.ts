// Review finding: the death supervisor holds every signal Node can name, but the real-time
// signals (SIGRTMIN..SIGRTMAX, 34..64 on Linux) keep their default action, which is death. The
// README says "EOF on stdin is the only way to stop it" and issue #8 asks it of every catchable
// signal: `kill -s RTMIN <supervisor>` ends it with no teardown, and a bare-protocol owner's
// registered group then outlives the owner.
// Fails on e654987: the supervisor is dead after signal 34.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { markedEnv, newMark, killMarked } from '../helpers/processes.js';

const SUPERVISOR = fileURLToPath(new URL('../../src/supervisor/supervisor.cjs', import.meta.url));

test('a real-time signal does not end the supervisor', async (t) => {
  const mark = newMark();
  const supervisor = spawn(process.execPath, [SUPERVISOR, '--parent-pgid', '1', '--grace-ms', '500'], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
    env: markedEnv(mark),
  });
  t.after(async () => {
    supervisor.stdin?.end();
    await killMarked(mark);
  });
  const pid = supervisor.pid as number;
  // Its signal listeners are its first act: wait until /proc shows SIGXCPU (24) caught.
  const holding = () => {
    try {
      const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('SigCgt:'));
      return line !== undefined && (BigInt(`0x${line.split(/\s+/)[1]}`) & (1n << 23n)) !== 0n;
    } catch {
      return false;
    }
  };
  assert.ok(await waitUntil(holding, 10_000), 'the supervisor never installed its listeners');
  assert.ok(isProcessAlive(pid));
  process.kill(pid, 34); // SIGRTMIN
  const died = await waitUntil(() => !isProcessAlive(pid), 1500);
  assert.ok(!died, 'the supervisor died of SIGRTMIN, without EOF and without a teardown');
});
