// `leash run` passes on every catchable signal it has no use for, as dumb-init does (docs/run.md,
// Signals): the command, a real process, records what it got. Before, only USR1, USR2, ALRM and
// WINCH were forwarded: PWR, URG, IO, VTALRM, PROF, STKFLT and CONT never arrived.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { FIXTURES } from '../helpers/processes.js';
import { markedScratch, startLeash } from '../helpers/leash-run.js';

const FORWARDED = ['SIGUSR1', 'SIGUSR2', 'SIGALRM', 'SIGWINCH', 'SIGVTALRM', 'SIGPROF', 'SIGIO', 'SIGPWR', 'SIGURG', 'SIGSTKFLT', 'SIGCONT'] as const;
/** leash's own: the kernel sends them for leash's own writes. Never forwarded, never fatal. */
const KEPT = ['SIGPIPE', 'SIGXFSZ'] as const;

const received = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('SIG'));

for (const dieWithParent of [false, true]) {
  test(`every signal leash has no use for reaches the command${dieWithParent ? ' (--die-with-parent too)' : ''}`, async (t) => {
    const { mark } = markedScratch(t);
    const flags = dieWithParent ? ['--die-with-parent'] : [];
    // With --die-with-parent SIGSTKFLT is the kernel's parent-death prompt (nothing else sends it):
    // the one signal that is then not the command's.
    const forwarded = FORWARDED.filter((signal) => !(dieWithParent && signal === 'SIGSTKFLT'));
    const kept = dieWithParent ? [...KEPT, 'SIGSTKFLT'] : [...KEPT];
    const run = startLeash(['run', ...flags, '--grace', '1', process.execPath, FIXTURES + 'run/signal-recorder.mjs', ...FORWARDED, ...KEPT], mark);
    const leash = run.child.pid as number;
    assert.ok(await waitUntil(() => run.stdout().includes('ready'), 10_000), run.stderr());
    for (const signal of [...kept, ...forwarded]) {
      process.kill(leash, signal);
      // One at a time: a signal pending twice is delivered once.
      const arrived = await waitUntil(() => received(run.stdout()).includes(signal) || !isProcessAlive(leash), kept.includes(signal) ? 300 : 10_000);
      if (kept.includes(signal)) assert.equal(received(run.stdout()).includes(signal), false, `${signal} was forwarded`);
      else assert.ok(arrived, `${signal} did not arrive; got ${received(run.stdout())}; ${run.stderr()}`);
      assert.ok(isProcessAlive(leash), `leash ended on ${signal}: ${run.stderr()}`);
    }
    assert.deepEqual(received(run.stdout()), forwarded, run.stderr());
    assert.doesNotMatch(run.stderr(), /phase=stopping/);
    process.kill(leash, 'SIGTERM');
    assert.ok(await waitUntil(() => !isProcessAlive(leash), 10_000));
  });
}

test('--ignore-hangup: SIGHUP neither stops leash nor reaches the tree (what nohup cannot do for Node)', async (t) => {
  const { mark } = markedScratch(t);
  const run = startLeash(['run', '--ignore-hangup', '--grace', '1', process.execPath, FIXTURES + 'run/signal-recorder.mjs', 'SIGHUP', 'SIGUSR1'], mark);
  const leash = run.child.pid as number;
  assert.ok(await waitUntil(() => run.stdout().includes('ready'), 10_000), run.stderr());
  process.kill(leash, 'SIGHUP');
  // Both pending before leash's listeners run: had SIGHUP stopped anything, USR1 would show it.
  process.kill(leash, 'SIGUSR1');
  assert.ok(await waitUntil(() => received(run.stdout()).includes('SIGUSR1'), 10_000), run.stderr());
  assert.ok(isProcessAlive(leash));
  assert.deepEqual(received(run.stdout()), ['SIGUSR1']);
  assert.doesNotMatch(run.stderr(), /phase=stopping/);
  // Without the flag, the same SIGHUP is a stop, sent on to the tree.
  const plain = startLeash(['run', '--grace', '1', process.execPath, FIXTURES + 'run/signal-recorder.mjs', 'SIGHUP'], mark);
  assert.ok(await waitUntil(() => plain.stdout().includes('ready'), 10_000), plain.stderr());
  process.kill(plain.child.pid as number, 'SIGHUP');
  assert.ok(await waitUntil(() => received(plain.stdout()).includes('SIGHUP'), 10_000), plain.stderr());
  // The phase line may reach our pipe after the recorder's output: wait for it rather than read once.
  assert.ok(await waitUntil(() => /phase=stopping .*reason="signal SIGHUP"/.test(plain.stderr()), 10_000), plain.stderr());
  process.kill(leash, 'SIGTERM');
  assert.ok(await waitUntil(() => !isProcessAlive(leash), 10_000));
});
