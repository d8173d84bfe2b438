// Contained, an orphan that leash never adopts (reparented to init, not to leash) is still in the
// run's cgroup from its fork on, so it is ended with the tree, by leash's stop or, when leash is
// SIGKILLed, by the guard. leash loads koffi before it makes its cgroup (the cgroup is claimed
// first) and is a child subreaper microseconds after the command's spawn, so the orphan made in the
// command's first milliseconds comes to leash in practice; the first two tests therefore run leash
// without koffi (never a subreaper), where every orphan goes to init. Each test checks that the case
// happened (the orphan's parent is not leash) and tries again if not.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readCommandLine, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { cgroupOf, destroyCgroup, usableCgroup } from '../helpers/cgroup.js';
import { markedScratch, readJson, type LeashProcess } from '../helpers/leash-run.js';
import { REPO_ROOT, exited, markedEnv, markedPids, waitForGone } from '../helpers/processes.js';

const place = await usableCgroup();
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : false;
const TRIES = 5;

interface EarlyOrphan {
  leash: LeashProcess;
  directory: string;
  pid: number;
  parent: number;
}

/**
 * Starts a command whose very first act is a double fork into a new session with a scrubbed
 * environment (the mark aside), then waits on `go`. Undefined (and everything ended) when the
 * orphan came to leash after all: leash was a subreaper by then.
 */
async function startEarlyOrphan(t: { after: (fn: () => Promise<void>) => void }, mark: string, dir: string, args: string[]): Promise<EarlyOrphan | undefined> {
  const go = join(dir, 'go');
  execFileSync('mkfifo', [go]);
  const script = `(setsid env -i LEASH_TEST_MARK=${mark} sh -c 'echo "orphan $$"; exec sleep 1001' &); read x < '${go}'; exit 0`;
  const leash = startLeashWithoutKoffi(join(dir, 'package'), ['run', ...args, '--', 'sh', '-c', script], mark);
  t.after(async () => {
    const directory = /containment: cgroup v2 \((.+)\)$/m.exec(leash.stderr())?.[1];
    if (directory !== undefined) await destroyCgroup(directory);
  });
  assert.ok(await waitUntil(() => /^orphan \d+$/m.test(leash.stdout()), 10_000), `no orphan: ${leash.stderr()}`);
  const pid = Number(/^orphan (\d+)$/m.exec(leash.stdout())![1]);
  const directory = /containment: cgroup v2 \((.+)\)$/m.exec(leash.stderr())?.[1];
  assert.ok(directory, `not contained: ${leash.stderr()}`);
  // Its parent is whoever took it when the subshell between exited at once.
  assert.ok(await waitUntil(() => readProcStat(pid)?.sid === pid && (readCommandLine(pid) ?? []).join(' ') === 'sleep 1001', 10_000));
  const parent = readProcStat(pid)!.ppid;
  const leashPid = leash.child.pid as number;
  // Whatever happened, the orphan is in the run's cgroup, in a session of its own, with no token.
  assert.ok(directory.endsWith(cgroupOf(pid) ?? '?'), `orphan ${pid} in ${cgroupOf(pid)}, not ${directory}`);
  assert.ok(!readFileSync(`/proc/${pid}/environ`, 'latin1').includes('LEASH_OWNER_TOKEN='));
  if (parent !== leashPid) return { leash, directory, pid, parent };
  writeFileSync(go, 'go\n');
  await exited(leash.child);
  assert.ok(await waitForGone([pid], 10_000));
  return undefined;
}

/** The package without its one dependency (the run bundle is all `leash run` loads besides koffi), started. */
function startLeashWithoutKoffi(root: string, args: readonly string[], mark: string): LeashProcess {
  for (const part of ['bin', 'dist/src/run', 'package.json']) cpSync(join(REPO_ROOT, part), join(root, part), { recursive: true });
  mkdirSync(join(root, 'node_modules'), { recursive: true });
  const child = spawn(process.execPath, [join(root, 'bin/leash.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  let err = '';
  let out = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
  child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  return { child, stderr: () => err, stdout: () => out };
}

test('contained: an orphan forked before leash is a subreaper goes to init, stays in the cgroup, and is ended when the runner exits', { skip }, async (t) => {
  for (let attempt = 1; attempt <= TRIES; attempt += 1) {
    const { mark, dir, state } = markedScratch(t);
    const early = await startEarlyOrphan(t, mark, dir, ['--grace', '2', '--state', state]);
    if (!early) {
      t.diagnostic(`attempt ${attempt}: leash was a subreaper before the orphan was made; again`);
      continue;
    }
    const { leash, pid, parent, directory } = early;
    t.diagnostic(`orphan ${pid} reparented to ${parent}, not to leash ${leash.child.pid}`);
    assert.ok(await waitUntil(() => readJson(state)?.phase === 'running', 10_000), leash.stderr());
    writeFileSync(join(dir, 'go'), 'go\n');
    const { code } = await exited(leash.child, 20_000);
    assert.equal(code, 0, leash.stderr());
    // The runner exited, the orphan remained: leash ended it, though it was never leash's child.
    assert.match(leash.stderr(), /reason="runner exited with 0, descendants remain"/);
    assert.match(leash.stderr(), new RegExp(`ending 1 process with SIGTERM: ${pid} \\(sleep 1001\\)`));
    assert.equal(isProcessAlive(pid), false);
    const final = readJson(state);
    assert.equal(final?.phase, 'exited');
    assert.equal(final?.active_children, 0);
    // Not adopted, so not counted as an orphan of leash's: init reaped it.
    assert.equal(final?.orphaned_children_total, 0);
    assert.deepEqual(markedPids(mark), []);
    assert.equal(existsSync(directory), false, 'the run cgroup was not removed');
    return;
  }
  assert.fail(`in ${TRIES} attempts leash was always a subreaper before the command's first fork: the case never happened`);
});

test('contained: leash SIGKILLed while an orphan of the command\'s first milliseconds lives: the guard ends it', { skip }, async (t) => {
  for (let attempt = 1; attempt <= TRIES; attempt += 1) {
    const { mark, dir } = markedScratch(t);
    const early = await startEarlyOrphan(t, mark, dir, ['--grace', '1']);
    if (!early) {
      t.diagnostic(`attempt ${attempt}: leash was a subreaper before the orphan was made; again`);
      continue;
    }
    const { leash, pid } = early;
    signalProcess(leash.child.pid as number, 'SIGKILL');
    await exited(leash.child);
    // The runner still waits on its fifo: the guard's SIGTERM (then cgroup.kill) ends it and the orphan.
    assert.ok(await waitForGone([pid], 15_000), `orphan ${pid} outlived leash run`);
    assert.ok(await waitUntil(() => markedPids(mark).length === 0, 15_000), `left: ${markedPids(mark)}`);
    return;
  }
  assert.fail(`in ${TRIES} attempts leash was always a subreaper before the command's first fork: the case never happened`);
});

test('contained, koffi missing: the run goes on in its cgroup, says what it lacks, and still ends the tree', { skip }, async (t) => {
  const { mark, dir } = markedScratch(t);
  // The package without its one dependency: the run bundle is all `leash run` loads besides koffi.
  const root = join(dir, 'package');
  for (const part of ['bin', 'dist/src/run', 'package.json']) cpSync(join(REPO_ROOT, part), join(root, part), { recursive: true });
  mkdirSync(join(root, 'node_modules'));
  const leash = spawn(process.execPath, [join(root, 'bin/leash.js'), 'run', '--die-with-parent', '--', 'sh', '-c', '(setsid sleep 1001 &); sleep 0.3; exit 4'], {
    stdio: ['pipe', 'ignore', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  let stderr = '';
  leash.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  t.after(async () => {
    const directory = /containment: cgroup v2 \((.+)\)$/m.exec(stderr)?.[1];
    if (directory !== undefined) await destroyCgroup(directory);
  });
  const { code } = await exited(leash, 20_000);
  assert.equal(code, 4, stderr);
  assert.match(stderr, /containment: cgroup v2/);
  assert.match(stderr, /warning: native calls unavailable \(.*koffi.*\): orphans go to init \(still in the cgroup, ended with the tree\); the parent is looked at once a second, stdin's writers not at all/);
  assert.match(stderr, /ending 1 process with SIGTERM: \d+ \(sleep 1001\)/);
  assert.deepEqual(markedPids(mark), []);
});
