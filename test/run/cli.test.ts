// `leash run` on the command line: exit status passthrough, not found / not executable, usage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { CLI_ENTRY, exited, killMarked, markedEnv, newMark } from '../helpers/processes.js';
import { scratchDir, startLeash } from '../helpers/leash-run.js';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { graceFromSeconds, parseRunArgs } from '../../src/run/main.js';
import { holdExitStatus } from '../../src/sys/exit-status.js';
import { loadNative } from '../../src/sys/native.js';
import { hasProcfs } from '../../src/sys/procfs.js';

async function runToEnd(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const mark = newMark();
  const leash = startLeash(args, mark, extraEnv);
  try {
    const { code, signal } = await exited(leash.child, 20_000);
    return { code, signal, stderr: leash.stderr() };
  } finally {
    await killMarked(mark);
  }
}

test('the runner exit code passes through', async () => {
  assert.equal((await runToEnd(['run', '--', 'sh', '-c', 'exit 0'])).code, 0);
  assert.equal((await runToEnd(['run', '--', 'sh', '-c', 'exit 3'])).code, 3);
  assert.equal((await runToEnd(['run', '--', 'sh', '-c', 'exit 255'])).code, 255);
});

test('the quick exit (_exit once the tree is gone) keeps the status, and steps aside when Node must write coverage at exit', async () => {
  // With coverage asked for, Node's own exit writes a file per process: the quick exit would lose it.
  const scratch = scratchDir();
  try {
    const coverage = join(scratch.dir, 'coverage');
    const run = await runToEnd(['run', '--', 'sh', '-c', 'exit 5'], { NODE_V8_COVERAGE: coverage });
    assert.equal(run.code, 5);
    assert.ok(readdirSync(coverage).some((name) => name.endsWith('.json')), `no coverage file written by leash run: ${run.stderr}`);
  } finally {
    scratch.remove();
  }
  // Without it, the status is the runner's all the same (the quick exit passes it on).
  assert.equal((await runToEnd(['run', '--', 'sh', '-c', 'exit 6'])).code, 6);
});

test('the quick exit leaves the caller\'s stdout and stderr as it found them (a socket that leash made non-blocking is put back)', async () => {
  // The shell's stdout is a socket (Node's 'pipe'), shared with leash's stdout and stderr through
  // 2>&1. Whatever in leash makes that description non-blocking (a net.Socket on fd 2, Node's
  // process.stderr) must be undone before the quick exit, as Node's own exit does: left behind,
  // it gives the shell's next writer EAGAIN. (Checked: with process.stderr read at the end and no
  // restoring, this fails.)
  const mark = newMark();
  const flagsLine = (text: string) => Number.parseInt(/flags:\s+([0-7]+)/.exec(text)?.[1] ?? 'NaN', 8);
  const script = 'grep flags /proc/self/fdinfo/1; "$0" "$1" run -- sh -c "exit 4" 2>&1; echo "status $?"; grep flags /proc/self/fdinfo/1';
  const shell = spawn('sh', ['-c', script, process.execPath, CLI_ENTRY], { stdio: ['ignore', 'pipe', 'ignore'], env: markedEnv(mark) });
  let text = '';
  shell.stdout!.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  try {
    await exited(shell, 20_000);
  } finally {
    await killMarked(mark);
  }
  const [before, after] = text.split('\n').filter((line) => line.startsWith('flags')).map(flagsLine);
  assert.match(text, /leash run: phase=exited/, 'leash run wrote nothing to the socket: the case did not happen');
  assert.match(text, /status 4/);
  assert.equal(before! & 0o4000, 0, `the socket was non-blocking to begin with: ${text}`);
  assert.equal(after! & 0o4000, 0, `leash run left the socket non-blocking: ${text}`);
});

test('a runner killed by signal n gives 128+n', async () => {
  assert.equal((await runToEnd(['run', '--', 'sh', '-c', 'kill -KILL $$'])).code, 137);
  assert.equal((await runToEnd(['run', '--', 'sh', '-c', 'kill -TERM $$'])).code, 143);
  const segv = await runToEnd(['run', '--', 'sh', '-c', 'kill -SEGV $$']);
  assert.equal(segv.code, 139);
  assert.match(segv.stderr, /phase=exited .*runner_exit_code=139/);
});

// Node reads a death by a signal it has no name for (the real-time ones) as exit code 0: leash
// once passed that on, a killed command turned into a success. The kernel keeps the real status
// for a pidfd's holder from Linux 6.15 on; before that leash has only Node's word.
const kernelKeepsExitStatus = await (async () => {
  // Without /proc (the macOS-paths lane) leash runs the process-group fallback, without native calls.
  if (process.platform !== 'linux' || !hasProcfs() || !(await loadNative())) return false;
  const child = spawn('true');
  const read = holdExitStatus(child.pid!);
  await exited(child);
  return read() === 0;
})();

for (const containment of ['tree', 'auto']) {
  test(`a runner killed by a real-time signal gives 128+n, not 0 (LEASH_CONTAINMENT=${containment})`, { skip: kernelKeepsExitStatus ? false : 'no kernel record of a runner\'s end here (Linux < 6.15, no /proc, or no native calls)' }, async () => {
    const mark = newMark();
    try {
      const child = spawn(process.execPath, [CLI_ENTRY, 'run', '--', 'sh', '-c', 'kill -34 $$'], { stdio: ['ignore', 'ignore', 'pipe'], env: markedEnv(mark, { LEASH_CONTAINMENT: containment }) });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
      const result = await exited(child, 20_000);
      assert.equal(result.code, 162, stderr);
      assert.match(stderr, /phase=exited .*runner_exit_code=162/);
    } finally {
      await killMarked(mark);
    }
  });
}

test('a missing command exits 127, one that cannot be executed 126', async () => {
  const missing = await runToEnd(['run', '--', 'leash-no-such-command-anywhere']);
  assert.equal(missing.code, 127);
  assert.match(missing.stderr, /command not found/);
  const scratch = scratchDir();
  try {
    const plain = join(scratch.dir, 'not-executable');
    writeFileSync(plain, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    const notExecutable = await runToEnd(['run', '--', plain]);
    assert.equal(notExecutable.code, 126);
    assert.match(notExecutable.stderr, /cannot execute/);
    const directory = await runToEnd(['run', '--', scratch.dir]);
    assert.equal(directory.code, 126);
  } finally {
    scratch.remove();
  }
});

test('usage errors exit 64 with the usage on stderr', async () => {
  const cases: string[][] = [
    ['run'],
    ['run', '--'],
    ['run', '-x', 'sh'],
    ['run', '--quiet'],
    ['run', '--grace'],
    ['run', '--grace', 'soon', '--', 'true'],
    ['run', '--bogus', '--', 'true'],
    ['run', '--state', '', '--', 'true'],
  ];
  for (const args of cases) {
    const result = await runToEnd(args);
    assert.equal(result.code, 64, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /usage: leash run/);
  }
  const outOfRange = await runToEnd(['run', '--grace', '601', '--', 'true']);
  assert.equal(outOfRange.code, 64, outOfRange.stderr);
  // A bad LEASH_GRACE_SECONDS is a warning and the default, like LEASH_GRACE_MS (src/config/grace.ts).
  const badEnv = await runToEnd(['run', '--', 'true'], { LEASH_GRACE_SECONDS: 'ten' });
  assert.equal(badEnv.code, 0, badEnv.stderr);
  assert.match(badEnv.stderr, /warning: ignoring LEASH_GRACE_SECONDS='ten'/);
});

test('the grace comes from the flag or the environment and is bounded', () => {
  const flag = parseRunArgs(['--grace', '2.5', '--', 'x'], {});
  assert.ok(typeof flag !== 'string');
  assert.equal(flag.graceMs, 2500);
  const env = parseRunArgs(['--', 'x', '--grace', '1'], { LEASH_GRACE_SECONDS: '4' });
  assert.ok(typeof env !== 'string');
  assert.equal(env.graceMs, 4000);
  assert.deepEqual(env.args, ['--grace', '1']);
  const fallback = parseRunArgs(['--', 'x'], {});
  assert.ok(typeof fallback !== 'string');
  assert.equal(fallback.graceMs, 10_000);
  assert.equal(graceFromSeconds(0), 50);
  assert.equal(graceFromSeconds(1000), 600_000);
  const slow = parseRunArgs(['--grace', '5m', 'x'], {});
  assert.ok(typeof slow !== 'string');
  assert.equal(slow.graceMs, 300_000);
  const fromEnv = parseRunArgs(['x'], { LEASH_GRACE_SECONDS: '250ms' });
  assert.ok(typeof fromEnv !== 'string');
  assert.equal(fromEnv.graceMs, 250);
  const both = parseRunArgs(['--grace', '1', '--state', '/x', '--die-with-parent', '--', 'x'], { LEASH_GRACE_SECONDS: '4', LEASH_STATE_PATH: '/y' });
  assert.ok(typeof both !== 'string');
  assert.equal(both.graceMs, 1000);
  assert.equal(both.statePath, '/x');
  assert.equal(both.dieWithParent, true);
});

test('the command may come without --: the first word that is not an option starts it', () => {
  const bare = parseRunArgs(['--grace', '1', 'sleep', '1'], {});
  assert.ok(typeof bare !== 'string', String(bare));
  assert.equal(bare.command, 'sleep');
  assert.deepEqual(bare.args, ['1']);
  // Its own options stay its own, leash's look-alikes included.
  const own = parseRunArgs(['-q', 'sh', '-c', 'exit 3', '--grace', '2', '--', '--quiet'], {});
  assert.ok(typeof own !== 'string');
  assert.equal(own.command, 'sh');
  assert.deepEqual(own.args, ['-c', 'exit 3', '--grace', '2', '--', '--quiet']);
  assert.equal(own.quiet, true);
  assert.equal(own.graceMs, 10_000);
  const dashed = parseRunArgs(['--', '-weird-name', 'x'], {});
  assert.ok(typeof dashed !== 'string');
  assert.equal(dashed.command, '-weird-name');
  assert.match(String(parseRunArgs(['-weird-name'], {})), /unknown option '-weird-name'/);
});

test('--die-with-parent watches stdin unless --no-stdin-watch; --parent-death-signal takes a name or number', () => {
  const plain = parseRunArgs(['--die-with-parent', 'x'], {});
  assert.ok(typeof plain !== 'string');
  assert.equal(plain.watchStdin, true);
  assert.equal(plain.parentDeathSignal, undefined);
  const off = parseRunArgs(['--die-with-parent', '--no-stdin-watch', 'x'], {});
  assert.ok(typeof off !== 'string');
  assert.equal(off.watchStdin, false);
  for (const [text, name] of [['INT', 'SIGINT'], ['sigusr1', 'SIGUSR1'], ['9', 'SIGKILL'], ['SIGHUP', 'SIGHUP']]) {
    const parsed = parseRunArgs(['--die-with-parent', '--parent-death-signal', text as string, 'x'], {});
    assert.ok(typeof parsed !== 'string', String(parsed));
    assert.equal(parsed.parentDeathSignal, name);
  }
  assert.match(String(parseRunArgs(['--die-with-parent', '--parent-death-signal', 'NOPE', 'x'], {})), /signal name or number/);
  assert.match(String(parseRunArgs(['--parent-death-signal', 'INT', 'x'], {})), /needs --die-with-parent/);
});
