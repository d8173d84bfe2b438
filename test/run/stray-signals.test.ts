// Every signal leash run can catch does what docs/run.md's table says, and none is a default death:
// a leash that dies of a stray signal leaves its tree to the guard (no forwarding, the guard's
// own grace) instead of stopping it itself. Before the table was built on holdCatchableSignals,
// SIGABRT, SIGTRAP and SIGSYS killed leash at once, SIGXCPU was ignored and SIGTSTP stopped leash
// alone while its tree ran on, unsupervised.
//
// How "it did nothing" is seen without a sleep: after the signal under test, SIGWINCH (forwarded
// to the runner, which prints it). Both are pending before leash runs again, and the kernel hands
// over every pending signal before leash's code resumes: had the first one been fatal, leash
// could not have forwarded the second.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { signalNumber } from '../../src/sys/verified-signal.js';
import { waitUntil } from '../../src/sys/wait.js';
import { STOP_AS_TERM_SIGNALS } from '../../src/run/signals.js';
import { markedScratch, readJson, startLeash, type LeashProcess } from '../helpers/leash-run.js';
import { exited } from '../helpers/processes.js';

// The runner: prints each forwarded signal it gets; SIGTERM ends it (no listener).
const RUNNER = `
for (const s of ['SIGWINCH', 'SIGUSR1', 'SIGUSR2', 'SIGALRM']) process.on(s, () => process.stdout.write(s + '\\n'));
process.stdout.write('ready ' + process.pid + '\\n');
setInterval(() => {}, 1 << 30);
`;

const IGNORED: NodeJS.Signals[] = [
  'SIGPIPE', 'SIGTTIN', 'SIGTTOU', 'SIGXFSZ', 'SIGVTALRM', 'SIGPROF', 'SIGIO', 'SIGPWR', 'SIGSTKFLT', 'SIGURG', 'SIGCONT',
];
const FORWARDED: NodeJS.Signals[] = ['SIGUSR1', 'SIGUSR2', 'SIGALRM'];

const count = (text: string, line: string) => text.split('\n').filter((l) => l === line).length;

async function startRunner(t: Parameters<typeof markedScratch>[0]) {
  const { mark, state } = markedScratch(t);
  const leash = startLeash(['run', '--grace', '5', '--state', state, '--', process.execPath, '-e', RUNNER], mark);
  assert.ok(await waitUntil(() => /^ready \d+$/m.test(leash.stdout()), 15_000), `the runner never started: ${leash.stderr()}`);
  const runner = Number(/^ready (\d+)$/m.exec(leash.stdout())![1]);
  return { leash, pid: leash.child.pid as number, runner, state };
}

/** Sends SIGWINCH and waits for the runner to print it: proof that leash lives and works. */
async function stillForwarding(leash: LeashProcess, pid: number, after: string): Promise<void> {
  const before = count(leash.stdout(), 'SIGWINCH');
  signalProcess(pid, 'SIGWINCH');
  const ok = await waitUntil(() => count(leash.stdout(), 'SIGWINCH') > before, 10_000);
  assert.ok(ok, `leash run stopped forwarding after ${after} (alive: ${isProcessAlive(pid)}): ${leash.stderr()}`);
}

async function stopsGracefully(leash: LeashProcess, pid: number, reason: string): Promise<void> {
  const result = await exited(leash.child, 15_000);
  assert.equal(result.signal, null, `leash run died of ${result.signal}: ${leash.stderr()}`);
  // The runner died of the SIGTERM leash sent it, within the grace: 128 + 15.
  assert.equal(result.code, 143, leash.stderr());
  assert.match(leash.stderr(), new RegExp(`phase=stopping .*reason="signal ${reason}"`));
  assert.doesNotMatch(leash.stderr(), /escalated=true/);
  assert.equal(isProcessAlive(pid), false);
}

test('ignored signals leave leash run running; forwarded ones reach the runner alone', async (t) => {
  const { leash, pid } = await startRunner(t);
  for (const signal of IGNORED) {
    signalProcess(pid, signal);
    await stillForwarding(leash, pid, signal);
  }
  for (const signal of FORWARDED) {
    signalProcess(pid, signal);
    assert.ok(await waitUntil(() => count(leash.stdout(), signal) === 1, 10_000), `${signal} was not forwarded: ${leash.stderr()}`);
  }
  assert.doesNotMatch(leash.stderr(), /phase=stopping/);
  signalProcess(pid, 'SIGTERM');
  await stopsGracefully(leash, pid, 'SIGTERM');
});

for (const signal of STOP_AS_TERM_SIGNALS) {
  test(`${signal} makes leash run stop the tree gracefully with SIGTERM, never die of it`, async (t) => {
    const { leash, pid, state } = await startRunner(t);
    signalProcess(pid, signal);
    await stopsGracefully(leash, pid, signal);
    assert.equal(readJson(state)?.termination_signal, signalNumber(signal));
  });
}

test('SIGTSTP stops the tree and leash run together; SIGCONT resumes both', async (t) => {
  const { leash, pid, runner } = await startRunner(t);
  signalProcess(pid, 'SIGTSTP');
  const stopped = (p: number) => readProcStat(p)?.state === 'T';
  assert.ok(await waitUntil(() => stopped(pid) && stopped(runner), 10_000),
    `not both stopped: leash ${readProcStat(pid)?.state}, runner ${readProcStat(runner)?.state}: ${leash.stderr()}`);
  signalProcess(pid, 'SIGCONT');
  assert.ok(await waitUntil(() => !stopped(pid) && !stopped(runner), 10_000),
    `not both resumed: leash ${readProcStat(pid)?.state}, runner ${readProcStat(runner)?.state}: ${leash.stderr()}`);
  await stillForwarding(leash, pid, 'SIGTSTP and SIGCONT');
  signalProcess(pid, 'SIGTERM');
  await stopsGracefully(leash, pid, 'SIGTERM');
});
