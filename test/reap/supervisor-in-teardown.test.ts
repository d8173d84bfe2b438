// A death supervisor whose owner just died is orphaned with a stdin nobody writes to: it looks
// cut off, but it is in the middle of its job (SIGTERM sent, the grace running, SIGKILL to come).
// reap used to list it, and --kill would have ended it before its SIGKILL round, leaving a
// SIGTERM-ignoring child to run for ever. A live supervisor is never listed, nor what it guards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OWNER_TOKEN_VARIABLE } from '../../src/supervisor/protocol.js';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readEnvironVariable, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { JsonLines, exited, killMarked, newMark, startFixture } from '../helpers/processes.js';
import { runReap } from './harness.js';

test('a supervisor in its teardown grace, and the child it guards, are never listed', async (t) => {
  const mark = newMark();
  let supervisor: number | undefined;
  t.after(async () => {
    await killMarked(mark);
    // Its environment is scrubbed (no mark): ended by pid, it is this test's own.
    if (supervisor !== undefined && isProcessAlive(supervisor)) signalProcess(supervisor, 'SIGKILL');
  });
  const owner = startFixture('owner.mjs', ['term-ignoring', 'self-sigkill'], mark, { extraEnv: { LEASH_GRACE_MS: '60000' } });
  const line = await new JsonLines(owner).next<{ supervisor: number; pids: number[] }>(20_000);
  supervisor = line.supervisor;
  const child = line.pids[0]!;
  await exited(owner);
  const token = readEnvironVariable(child, OWNER_TOKEN_VARIABLE);
  assert.ok(token, 'the child carries its owner token');
  // The owner is gone: the supervisor is orphaned and in its grace.
  assert.ok(await waitUntil(() => readProcStat(supervisor!)?.ppid !== owner.pid, 10_000), 'the supervisor was reparented');
  assert.ok(isProcessAlive(supervisor) && isProcessAlive(child), 'the supervisor waits out the grace; the child ignores SIGTERM');

  // Its command line holds the token: --match confines the listing to it (listing only).
  const listed = runReap(['--match', token!]);
  assert.deepEqual(listed.report.trees.map((tree) => [tree.pid, tree.reasons, tree.command]), [], 'the supervisor at work is not a leak');
  const child_ = runReap(['--match', '^sleep 1000$']);
  assert.ok(!child_.report.trees.some((tree) => tree.pid === child), 'nor is the child it is about to SIGKILL');
});
