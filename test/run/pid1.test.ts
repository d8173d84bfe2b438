// `leash run` as PID 1 of a private pid namespace: it reaps every zombie there and takes
// signals as a container init does. Needs root and unshare(1); skipped elsewhere.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { readChildren } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { CLI_ENTRY, exited, killMarked, markedEnv, newMark } from '../helpers/processes.js';
import { readJson, scratchDir } from '../helpers/leash-run.js';

function unshareWorks(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore', timeout: 5000 });
  return probe.status === 0;
}

const skip = unshareWorks() ? false : 'needs root and unshare --pid --fork --mount-proc';

test('as PID 1 it reaps every zombie in the namespace and forwards SIGTERM', { skip }, async (t) => {
  const mark = newMark();
  const scratch = scratchDir();
  t.after(async () => {
    await killMarked(mark);
    scratch.remove();
  });
  const state = join(scratch.dir, 'state.json');
  const report = join(scratch.dir, 'zombies');
  // Orphans that exit become zombies of PID 1 unless it reaps them; the runner counts them.
  const script = [
    'for i in 1 2 3 4 5; do (sleep 0.1 &); (exit 0 &); done',
    'sleep 0.8',
    `trap 'exit 5' TERM`,
    `grep -l "^State:.*Z" /proc/[0-9]*/status 2>/dev/null | wc -l > "${report}.tmp"`,
    `mv "${report}.tmp" "${report}"`,
    'sleep 60 & wait',
  ].join('\n');
  const unshare = spawn('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, CLI_ENTRY, 'run', '--state', state, '--', 'sh', '-c', script], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  let stderr = '';
  unshare.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  assert.ok(await waitUntil(() => (readJson(state)?.orphaned_children_total as number) >= 5 &&
    readJson(state) !== undefined && (readJson(state)?.reaped_orphans_total as number) >= 5, 8000), stderr);
  const { readFileSync, existsSync } = await import('node:fs');
  assert.ok(await waitUntil(() => existsSync(report), 8000), stderr);
  assert.equal(readFileSync(report, 'utf8').trim(), '0', 'zombies left in the namespace');
  // leash is unshare's only child; signal it as a container runtime would signal PID 1.
  const leashPid = readChildren(unshare.pid as number)?.[0];
  assert.ok(leashPid);
  process.kill(leashPid, 'SIGTERM');
  const { code } = await exited(unshare);
  assert.equal(code, 5, stderr);
  assert.equal(readJson(state)?.termination_signal, 15);
});
