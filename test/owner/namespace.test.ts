// An owner whose process group reads as 0 (its leader is outside the pid namespace: `unshare
// --pid` without setsid, and some sandboxes) is still protected.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { exited, FIXTURES, JsonLines, killMarked, LIBRARY_ENTRY, markedEnv, newMark } from '../helpers/processes.js';

const canUnshare =
  process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

test('an owner that sees process group 0 still has its children reaped', { skip: canUnshare ? false : 'needs root and unshare --pid' }, async () => {
  const mark = newMark();
  try {
    const run = spawn('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, FIXTURES + 'in-namespace.mjs'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: markedEnv(mark, { LEASH_LIBRARY: LIBRARY_ENTRY, LEASH_GRACE_MS: '500' }),
    });
    const lines = new JsonLines(run);
    const result = await lines.next<{ ownPgid: number; supervisor: number | null; survivors: number[] }>(20_000);
    assert.equal(result.ownPgid, 0, 'the scenario: process group 0');
    assert.ok(result.supervisor, `no supervisor ran (stderr: ${lines.stderr})`);
    assert.deepEqual(result.survivors, []);
    assert.equal((await exited(run)).code, 0);
  } finally {
    await killMarked(mark);
  }
});
