// Whose cgroup may `leash run` use? An unprivileged user (nobody) inside a subtree delegated to it
// the kernel's way (the directory, cgroup.procs and cgroup.subtree_control chowned to it) gets
// containment; the same user in a cgroup root kept, and root under a read-only mount of the
// hierarchy, fall back to the process tree with the one-line notice. Run as root; every cgroup
// made here is removed after the test.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CgroupLocation } from '../../src/sys/cgroup.js';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { cgroupOf, scratchCgroup, usableCgroup } from '../helpers/cgroup.js';
import type { LeashProcess } from '../helpers/leash-run.js';
import { readCommandLine, scanAllStats } from '../../src/sys/procfs.js';
import { exited, markedEnv, newMark, killMarked, MARK_VARIABLE, REPO_ROOT } from '../helpers/processes.js';

const NOBODY = 65534;
const place = await usableCgroup();
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;
const skip = typeof place === 'string'
  ? `no cgroup to test with: ${place}`
  : !hasSetpriv ? 'setpriv (util-linux) is not installed' : false;

/**
 * What nobody must run, copied where nobody can read it: the checkout may sit in a folder only
 * root can enter.
 */
function readableCopy(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'leash-delegation-'));
  chmodSync(dir, 0o755);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(REPO_ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
  cpSync(join(REPO_ROOT, 'dist', 'src'), join(dir, 'dist', 'src'), { recursive: true });
  const modules = join(REPO_ROOT, 'node_modules');
  cpSync(join(modules, 'koffi'), join(dir, 'node_modules', 'koffi'), { recursive: true });
  if (existsSync(join(modules, '@koromix'))) cpSync(join(modules, '@koromix'), join(dir, 'node_modules', '@koromix'), { recursive: true });
  return join(dir, 'bin', 'leash.js');
}

/**
 * Starts `leash run` as nobody inside `cgroup`: a root shell moves itself there (nobody may not
 * write the cgroup.procs of the common ancestor), then becomes nobody and execs node.
 */
function startAsNobody(cgroup: string, leash: string, args: readonly string[], mark: string): LeashProcess {
  const child = spawn('sh', [
    '-c',
    'cg=$1; shift; echo $$ > "$cg/cgroup.procs" && exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"',
    'sh', cgroup, process.execPath, leash, ...args,
  ], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: tmpdir(),
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', LEASH_CONTAINMENT: '' }),
  });
  let err = '';
  let out = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (err += text));
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (out += text));
  return { child, stderr: () => err, stdout: () => out };
}

/** Live processes of any user carrying the mark (the library's lookup sees only our own uid's). */
function markedPids(mark: string): number[] {
  const entry = Buffer.from(`${MARK_VARIABLE}=${mark}\0`);
  return scanAllStats().filter((stat) => stat.state !== 'Z').map((stat) => stat.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`).includes(entry);
    } catch {
      return false;
    }
  });
}

function markedPidRunning(mark: string, command: string): number | undefined {
  return markedPids(mark).find((pid) => (readCommandLine(pid) ?? []).join(' ') === command);
}

/** Ends nobody's marked processes too (as root), then the usual sweep. */
async function killAllMarked(mark: string): Promise<void> {
  for (const pid of markedPids(mark)) signalProcess(pid, 'SIGKILL');
  await killMarked(mark);
}

function withMark(t: { after: (fn: () => Promise<void>) => void }): string {
  const mark = newMark();
  t.after(() => killAllMarked(mark));
  return mark;
}

test('nobody, in a subtree delegated to it: contained; its guard ends the cgroup when leash is SIGKILLed', { skip }, async (t) => {
  const mark = withMark(t);
  const leash = readableCopy(t);
  const delegated = scratchCgroup(t, place as CgroupLocation, NOBODY);
  const script = `(setsid env -i LEASH_TEST_MARK=${mark} sleep 1001 &); exec sleep 1000`;
  const run = startAsNobody(delegated.directory, leash, ['run', '--grace', '1', '--', 'sh', '-c', script], mark);
  assert.ok(await waitUntil(() => markedPidRunning(mark, 'sleep 1001') !== undefined && markedPidRunning(mark, 'sleep 1000') !== undefined, 15_000),
    `never started: ${run.stderr()}`);
  const line = /containment: cgroup v2 \((.+)\)$/m.exec(run.stderr());
  assert.ok(line, `not contained: ${run.stderr()}`);
  assert.ok(line[1]!.startsWith(`${delegated.directory}/leash-run-`), line[1]);
  const escapee = markedPidRunning(mark, 'sleep 1001') as number;
  const runner = markedPidRunning(mark, 'sleep 1000') as number;
  // As nobody, each in the run's cgroup below the delegated one.
  for (const pid of [escapee, runner, run.child.pid as number]) {
    assert.equal(spawnSync('stat', ['-c', '%u', `/proc/${pid}`], { encoding: 'utf8' }).stdout.trim(), String(NOBODY), `pid ${pid}`);
  }
  assert.equal(cgroupOf(escapee), `${delegated.path}/${line[1]!.split('/').pop()}`);
  assert.equal(cgroupOf(run.child.pid as number), delegated.path, 'leash itself stays in the delegated cgroup');
  signalProcess(run.child.pid as number, 'SIGKILL');
  await exited(run.child);
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 15_000), `left: ${markedPids(mark)}`);
  // The guard, as nobody, removed the run's cgroup.
  assert.ok(await waitUntil(() => !existsSync(line[1]!), 5000), 'the run cgroup is left');
  assert.deepEqual(readdirSync(delegated.directory).filter((name) => name.startsWith('leash-run-')), []);
});

test('nobody, in a cgroup root kept: the process tree, with the notice', { skip }, async (t) => {
  const mark = withMark(t);
  const leash = readableCopy(t);
  const kept = scratchCgroup(t, place as CgroupLocation);
  const run = startAsNobody(kept.directory, leash, ['run', '--', 'sh', '-c', 'exit 5'], mark);
  const { code } = await exited(run.child);
  assert.equal(code, 5, run.stderr());
  assert.match(run.stderr(), new RegExp(`^leash run: containment: process tree \\(subreaper\\); no usable cgroup: ${kept.path} is not delegated to uid ${NOBODY}`, 'm'));
  assert.equal(run.stderr().match(/containment: /g)?.length, 1);
  assert.deepEqual(readdirSync(kept.directory).filter((name) => name.startsWith('leash-run-')), []);
});

test('root, the hierarchy mounted read-only: the process tree, with the notice', { skip: skip || (spawnSync('unshare', ['--mount', 'true']).status === 0 ? false : 'cannot unshare a mount namespace') }, async (t) => {
  const mark = withMark(t);
  const mountPoint = (place as CgroupLocation).mount.mountPoint;
  // A private mount namespace: the read-only bind is seen by leash alone.
  const child = spawn('unshare', ['--mount', 'sh', '-c', 'mount -o bind,ro "$1" "$1" && shift && exec "$@"', 'sh', mountPoint,
    process.execPath, join(REPO_ROOT, 'bin', 'leash.js'), 'run', '--', 'sh', '-c', 'exit 6'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_CONTAINMENT: '' }),
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
  const { code } = await exited(child);
  assert.equal(code, 6, err);
  assert.match(err, new RegExp(`^leash run: containment: process tree \\(subreaper\\); no usable cgroup: ${mountPoint} is mounted read-only$`, 'm'));
});
