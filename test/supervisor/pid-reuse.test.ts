// A stale registration whose number is recycled for an unrelated process: the stranger must
// survive the owner's death. Forced in a private pid namespace through ns_last_pid (root only).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { exited, FIXTURES, JsonLines, killMarked, LIBRARY_ENTRY, markedEnv, newMark } from '../helpers/processes.js';
import { SUPERVISOR_MAIN } from '../helpers/groups.js';

const canUnshare =
  process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

async function runPidReuse(mode: 'with start times' | 'bare'): Promise<void> {
  const mark = newMark();
  try {
    const run = spawn('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, FIXTURES + 'pid-reuse.mjs', SUPERVISOR_MAIN, mode === 'bare' ? 'bare' : 'full'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: markedEnv(mark, { LEASH_LIBRARY: LIBRARY_ENTRY }),
    });
    const lines = new JsonLines(run);
    const result = await lines.next<{
      victim: number; stranger: number; strangerAlive: boolean; leaderless: number; leaderlessStranger: number;
      leaderlessStrangerAlive: boolean; controlAlive: boolean; error?: string;
    }>(20_000);
    assert.equal(result.error, undefined);
    assert.equal(result.stranger, result.victim, 'the stranger got the registered number');
    assert.equal(result.leaderlessStranger, result.leaderless, 'the second stranger got the leaderless group number');
    assert.equal(result.controlAlive, false, 'the live registered group was reaped');
    assert.equal(result.strangerAlive, true, 'the stranger with the recycled number was signalled');
    assert.equal(result.leaderlessStrangerAlive, true, 'the stranger with a leaderless group number was signalled');
    assert.equal((await exited(run)).code, 0);
  } finally {
    await killMarked(mark);
  }
}

const skip = canUnshare ? false : 'needs root and unshare --pid';

test('a recycled process-group number is never signalled', { skip }, () => runPidReuse('with start times'));

test('`register <pgid>` without a start time: the supervisor records the leader itself, so a recycled number is spared', { skip }, () =>
  runPidReuse('bare'));
