// The death supervisor cannot hold the real-time signals (SIGRTMIN..SIGRTMAX): Node offers no
// listener for them, and Node resets every signal disposition at start-up, so one ignored by the
// launcher is not inherited (measured: `trap '' RTMIN; exec node ...` shows SigIgn without bit 33,
// and `kill -s RTMIN` ends it). What covers that, and SIGKILL and faults alike, is the owner
// library: it replaces a dead supervisor and replays its set. Proven here: a supervisor ended by
// SIGRTMIN, then its replacement by SIGRTMAX, and the owner's group still goes when the owner dies.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readCommandLine, scanAllStats } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { LIBRARY_ENTRY, exited, killMarked, markedEnv, markedPids, newMark, waitForGone } from '../helpers/processes.js';

const SIGRTMIN = 34;
const SIGRTMAX = 64;

/**
 * The live supervisor started by `owner` (a child running the supervisor's file), if any. While
 * its launcher (setpriv) execs Node, the command line reads empty for an instant: callers keep the
 * pid a wait found rather than asking again.
 */
function supervisorOf(owner: number): number | undefined {
  return scanAllStats().find(
    (stat) =>
      stat.ppid === owner &&
      stat.state !== 'Z' &&
      (readCommandLine(stat.pid) ?? []).some((arg) => /supervisor\.cjs$|supervisor[\\/]entry\.js$/.test(arg)),
  )?.pid;
}

test('a supervisor ended by a real-time signal is replaced, and the owner\'s group still goes with the owner', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const owner = spawn(process.execPath, ['--input-type=module', '-e', [
    `import { spawnOwned } from ${JSON.stringify(LIBRARY_ENTRY)};`,
    `spawnOwned('sh', ['-c', 'sleep 1020 & exec sleep 1021'], { stdio: 'ignore' });`,
    'setInterval(() => {}, 1000);',
  ].join('\n')], { stdio: 'ignore', env: markedEnv(mark, { LEASH_GRACE_MS: '500' }) });
  const ownerPid = owner.pid as number;
  const children = () => markedPids(mark).filter((pid) => pid !== ownerPid);
  let found: number | undefined;
  assert.ok(await waitUntil(() => children().length === 2 && (found = supervisorOf(ownerPid)) !== undefined, 10_000), 'no owned group or no supervisor');
  const tree = children();

  let supervisor = found as number;
  for (const signal of [SIGRTMIN, SIGRTMAX]) {
    process.kill(supervisor, signal);
    assert.ok(await waitForGone([supervisor], 5000), `supervisor ${supervisor} survived signal ${signal}`);
    const ended = supervisor;
    assert.ok(
      await waitUntil(() => (found = supervisorOf(ownerPid)) !== undefined && found !== ended, 10_000),
      `no supervisor replaced the one ended by signal ${signal}`,
    );
    supervisor = found as number;
  }
  for (const pid of tree) assert.ok(isProcessAlive(pid), `owned pid ${pid} was not running`);

  signalProcess(ownerPid, 'SIGKILL');
  await exited(owner);
  assert.ok(await waitForGone([...tree, supervisor], 10_000), `the owned group outlived its owner: ${children().join(' ')}`);
});
