// `leash run --keep-terminal` stays in the shell's session, and any process of a session may join
// any process group of that session. A tree process that joins the interactive shell's group must
// not turn the teardown's killpg on the shell. Here a perl process plays the shell: it leads its
// own session and group, and starts leash in a new group of that session, as a job-control shell
// does. The tree has one process that joins the "shell's" group and one that makes a group of its
// own. Fails without the fix: the stop's killpg of the joiner's group SIGTERMs the "shell".
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { liveDescendantsOf, markedScratch } from '../helpers/leash-run.js';
import { CLI_ENTRY, markedEnv } from '../helpers/processes.js';

const HAS_PERL = spawnSync('perl', ['-e', '1']).status === 0;

// The "shell": forks leash into a new group of its own session, reports, waits, lives on.
const SHELL = `
$| = 1;
$ENV{SHELL_PGID} = getpgrp();
my $pid = fork() // die "fork: $!";
if ($pid == 0) { setpgrp(0, 0) or die "setpgrp: $!"; exec @ARGV or die "exec: $!"; }
print "leash $pid\\n";
waitpid($pid, 0);
print "leash-exit $?\\n";
sleep 300;
`;

// The tree: a sleeper in the shell's group, a sleeper leading a group of its own, and the runner.
const TREE = [
  `perl -e 'setpgrp(0, $ENV{SHELL_PGID}) or die "join: $!"; exec "sleep", "300"' &`,
  `perl -e 'setpgrp(0, 0) or die "own: $!"; exec "sleep", "300"' &`,
  'wait',
].join('\n');

async function startShell(mark: string) {
  const shell = spawn('perl', ['-e', SHELL, process.execPath, CLI_ENTRY, 'run', '-q', '--keep-terminal', '--grace', '5', '--', 'sh', '-c', TREE], {
    // detached-spawn: ok — the test's "shell" leads its own session, as a login shell does.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  let out = '';
  let err = '';
  shell.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  shell.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
  const shellPid = shell.pid as number;
  assert.ok(await waitUntil(() => /^leash \d+$/m.test(out), 10_000), `the shell did not start leash: ${err}`);
  const leashPid = Number(/^leash (\d+)$/m.exec(out)![1]);
  // Both sleepers in place: one in the shell's group, one leading its own.
  let joiner: number | undefined;
  let ownGroup: number | undefined;
  const ready = await waitUntil(() => {
    for (const pid of liveDescendantsOf(leashPid)) {
      const stat = readProcStat(pid);
      if (!stat || readCommand(pid) !== 'sleep') continue;
      if (stat.pgid === shellPid) joiner = pid;
      else if (stat.pgid === pid) ownGroup = pid;
    }
    return joiner !== undefined && ownGroup !== undefined;
  }, 10_000);
  assert.ok(ready, `the tree never took shape: ${err}`);
  return { shellPid, leashPid, joiner: joiner as number, ownGroup: ownGroup as number, out: () => out, err: () => err };
}

function readCommand(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

test('--keep-terminal: a tree process in the shell\'s group is stopped, the shell is not', { skip: HAS_PERL ? false : 'perl is not installed' }, async (t) => {
  const { mark } = markedScratch(t);
  const run = await startShell(mark);
  assert.equal(readProcStat(run.joiner)?.sid, run.shellPid, 'the joiner is in the shell\'s session');
  signalProcess(run.leashPid, 'SIGTERM');
  assert.ok(await waitUntil(() => !isProcessAlive(run.leashPid), 10_000), `leash run did not finish: ${run.err()}`);
  // The shell reaps leash and says so, unless the teardown killed it.
  await waitUntil(() => /^leash-exit /m.test(run.out()) || !isProcessAlive(run.shellPid), 5000);
  assert.ok(isProcessAlive(run.shellPid), `the teardown signalled the shell's group: ${run.err()}`);
  assert.match(run.out(), /^leash-exit \d+$/m);
  assert.ok(await waitUntil(() => !isProcessAlive(run.joiner) && !isProcessAlive(run.ownGroup), 5000), 'the tree outlived leash run');
});

test('--keep-terminal: when leash run is SIGKILLed its guard spares the shell too', { skip: HAS_PERL ? false : 'perl is not installed' }, async (t) => {
  const { mark } = markedScratch(t);
  const run = await startShell(mark);
  signalProcess(run.leashPid, 'SIGKILL');
  // The guard's grace is leash's (5 s); the sleepers honour SIGTERM.
  assert.ok(await waitUntil(() => !isProcessAlive(run.joiner) && !isProcessAlive(run.ownGroup), 15_000), 'the tree outlived leash run and its guard');
  assert.ok(isProcessAlive(run.shellPid), 'the guard signalled the shell\'s group');
});
