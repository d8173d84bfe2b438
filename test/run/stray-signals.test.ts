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
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { profilerFlagged } from '../../src/sys/stray-signals.js';
import { signalNumber } from '../../src/sys/verified-signal.js';
import { waitUntil } from '../../src/sys/wait.js';
import { STOP_AS_TERM_SIGNALS } from '../../src/run/signals.js';
import { markedScratch, readJson, startLeash, type LeashProcess } from '../helpers/leash-run.js';
import { CLI_ENTRY, exited, markedEnv } from '../helpers/processes.js';

// The runner: prints each forwarded signal it gets; SIGTERM ends it (no listener).
const RUNNER = `
for (const s of ['SIGWINCH', 'SIGUSR1', 'SIGUSR2', 'SIGALRM']) process.on(s, () => process.stdout.write(s + '\\n'));
process.stdout.write('ready ' + process.pid + '\\n');
setInterval(() => {}, 1 << 30);
`;

// leash's own (the kernel sends them for leash's own writes); the rest is forwarded now
// (test/run/signal-forwarding.test.ts).
const IGNORED: NodeJS.Signals[] = ['SIGPIPE', 'SIGXFSZ'];
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

// SIGTSTP is job control: it needs a process group that a shell could continue, one whose
// parent is in another group of the same session. A perl process plays the shell: it leads its own
// session and starts leash in a new group of it (as a job), and reports leash's exit status.
const SHELL = `
$| = 1;
my $pid = fork() // die "fork: $!";
if ($pid == 0) { setpgrp(0, 0) or die "setpgrp: $!"; exec @ARGV or die "exec: $!"; }
print "leash $pid\\n";
waitpid($pid, 0);
print "leash-exit $?\\n";
`;
const HAS_PERL = spawnSync('perl', ['-e', '1']).status === 0;

/** leash run of `runner` (node source) under a perl "shell" that leads its own session, as a login shell does. */
async function startUnderShell(t: Parameters<typeof markedScratch>[0], runner: string) {
  const { mark } = markedScratch(t);
  const shell = spawn('perl', ['-e', SHELL, process.execPath, CLI_ENTRY, 'run', '--grace', '5', '--', process.execPath, '-e', runner], {
    // detached-spawn: ok — the test's "shell" leads its own session, as a login shell does.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  let out = '';
  let err = '';
  shell.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  shell.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
  assert.ok(await waitUntil(() => /^ready \d+$/m.test(out) && /^leash \d+$/m.test(out), 15_000), `the runner never started: ${err}`);
  const leash = { stdout: () => out, stderr: () => err } as LeashProcess;
  return { leash, pid: Number(/^leash (\d+)$/m.exec(out)![1]), runner: Number(/^ready (\d+)$/m.exec(out)![1]) };
}

const stopped = (pid: number) => readProcStat(pid)?.state === 'T';

/** SIGTERM to leash; the runner's SIGTERM status, 143, comes back as the shell's wait status (143 << 8). */
async function endsWithRunnersTerm(leash: LeashProcess, pid: number): Promise<void> {
  signalProcess(pid, 'SIGTERM');
  assert.ok(await waitUntil(() => /^leash-exit \d+$/m.test(leash.stdout()), 15_000), `leash run did not finish: ${leash.stderr()}`);
  assert.match(leash.stdout(), new RegExp(`^leash-exit ${143 << 8}$`, 'm'), leash.stderr());
  assert.doesNotMatch(leash.stderr(), /escalated=true/);
}

for (const suspend of ['SIGTSTP', 'SIGTTIN', 'SIGTTOU'] as const)
test(`${suspend} stops the tree and leash run together; SIGCONT resumes both`, { skip: HAS_PERL ? false : 'perl is not installed' }, async (t) => {
  const { leash, pid, runner } = await startUnderShell(t, RUNNER);
  signalProcess(pid, suspend);
  assert.ok(await waitUntil(() => stopped(pid) && stopped(runner), 10_000),
    `not both stopped: leash ${readProcStat(pid)?.state}, runner ${readProcStat(runner)?.state}: ${leash.stderr()}`);
  signalProcess(pid, 'SIGCONT');
  assert.ok(await waitUntil(() => !stopped(pid) && !stopped(runner), 10_000),
    `not both resumed: leash ${readProcStat(pid)?.state}, runner ${readProcStat(runner)?.state}: ${leash.stderr()}`);
  await stillForwarding(leash, pid, 'SIGTSTP and SIGCONT');
  await endsWithRunnersTerm(leash, pid);
});

test('a process of the tree stopped before the SIGTSTP stays stopped when the tree resumes', { skip: HAS_PERL ? false : 'perl is not installed' }, async (t) => {
  // The runner and a child of its own group: the test stops the child first (as a debugger or a
  // user's kill -STOP would), then suspends and resumes the tree.
  const runnerWithChild = `${RUNNER}
const child = require('node:child_process').spawn('sleep', ['1000'], { stdio: 'ignore' });
process.stdout.write('held ' + child.pid + '\\n');
process.on('SIGTERM', () => { child.kill('SIGKILL'); process.exit(143); });
`;
  const { leash, pid, runner } = await startUnderShell(t, runnerWithChild);
  assert.ok(await waitUntil(() => /^held \d+$/m.test(leash.stdout()), 10_000), leash.stderr());
  const held = Number(/^held (\d+)$/m.exec(leash.stdout())![1]);
  signalProcess(held, 'SIGSTOP');
  assert.ok(await waitUntil(() => stopped(held), 10_000), 'the child did not stop');
  signalProcess(pid, 'SIGTSTP');
  assert.ok(await waitUntil(() => stopped(pid) && stopped(runner), 10_000), `not stopped: ${leash.stderr()}`);
  signalProcess(pid, 'SIGCONT');
  assert.ok(await waitUntil(() => !stopped(pid) && !stopped(runner), 10_000), `not resumed: ${leash.stderr()}`);
  // leash has done its resume (it forwards again); the child someone else stopped is still so.
  await stillForwarding(leash, pid, 'SIGTSTP and SIGCONT');
  assert.ok(stopped(held), `the child stopped before the SIGTSTP was continued with the tree (state ${readProcStat(held)?.state})`);
  signalProcess(held, 'SIGCONT');
  await endsWithRunnersTerm(leash, pid);
});

test('SIGTSTP is ignored where leash run\'s process group is orphaned (nothing could continue it)', async (t) => {
  const { mark } = markedScratch(t);
  // Its own session: its group's only outside parent, the test, is in another session.
  const child = spawn(process.execPath, [CLI_ENTRY, 'run', '--grace', '5', '--', process.execPath, '-e', RUNNER], {
    // detached-spawn: ok — leash run in a session of its own makes its group orphaned.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
  const leash = { child, stdout: () => out, stderr: () => err } as LeashProcess;
  const pid = child.pid as number;
  assert.ok(await waitUntil(() => /^ready \d+$/m.test(out), 15_000), `the runner never started: ${err}`);
  signalProcess(pid, 'SIGTSTP');
  await stillForwarding(leash, pid, 'SIGTSTP');
  assert.notEqual(readProcStat(pid)?.state, 'T');
  // stderr is another pipe than the runner's stdout: its line may be read a moment later.
  assert.ok(await waitUntil(() => /SIGTSTP ignored/.test(err), 5000), err);
  signalProcess(pid, 'SIGTERM');
  await stopsGracefully(leash, pid, 'SIGTERM');
});

test('profilerFlagged: --cpu-prof, --prof, --prof-cpp, in either spelling', () => {
  assert.equal(profilerFlagged([]), false);
  assert.equal(profilerFlagged(['--cpu-prof-dir=/tmp/x', '--max-old-space-size=64']), false);
  assert.equal(profilerFlagged(['--max-old-space-size=64', '--cpu-prof']), true);
  assert.equal(profilerFlagged(['--cpu_prof']), true);
  assert.equal(profilerFlagged(['--prof']), true);
  assert.equal(profilerFlagged(['--prof_cpp']), true);
  assert.equal(profilerFlagged(['--heap-prof']), false);
});

// A profiled leash (`node --cpu-prof .../leash.js run`) once held SIGPROF: Node then dies of it
// at exit (155, no profile), and every profiler tick went on to the runner, whose default action
// for SIGPROF is death. The profiler may be named in either spelling, or started by a preload
// (then only the kernel's SigCgt mask says SIGPROF is taken).
const PRELOAD_PROFILER = `
const { Session } = require('node:inspector');
const session = new Session();
session.connect();
session.post('Profiler.enable', () => session.post('Profiler.start'));
`;
for (const [name, flags] of [
  ['--cpu-prof', ['--cpu-prof']],
  ['--cpu_prof', ['--cpu_prof']],
  ['a preload that starts the profiler', ['--require', 'PRELOAD']],
] as const) {
  test(`leash run under V8's CPU profiler (${name}): neither it nor its runner dies of the profiler's SIGPROF`, async (t) => {
    const { mark, dir } = markedScratch(t);
    const profiles = join(dir, 'profiles');
    const preload = join(dir, 'profile.cjs');
    writeFileSync(preload, PRELOAD_PROFILER);
    const preloaded = (flags as readonly string[]).includes('PRELOAD');
    const args = preloaded ? ['--require', preload] : [...flags, `--cpu-prof-dir=${profiles}`];
    const child = spawn(process.execPath, [...args, CLI_ENTRY, 'run', '--', '/bin/sh', '-c', 'sleep 0.5; exit 3'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const result = await exited(child, 20_000);
    // The case happened: leash ran under the profiler (with the flag, its profile is written at exit).
    if (!preloaded) {
      assert.ok(existsSync(profiles) && readdirSync(profiles).some((file) => file.endsWith('.cpuprofile')), `no profile was written: ${stderr}`);
    }
    assert.equal(result.signal, null, `leash run died of ${result.signal}: ${stderr}`);
    assert.equal(result.code, 3, `the runner did not end by itself: ${stderr}`);
  });
}
