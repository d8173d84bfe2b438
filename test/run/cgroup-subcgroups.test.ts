// A command that makes cgroups of its own below leash's (as systemd-nspawn, a container runtime or
// a test harness does): leash's stop ends their members too, removes them all deepest first, and
// exits in the usual time; the guard does the same when leash is SIGKILLed; and the clean-up of an
// abandoned run cgroup removes its sub-cgroups. Every leash here runs inside a scratch cgroup of
// the test's own, so what is left below it is this test's alone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { cgroupOf, cgroupPopulated, moveIntoSubCgroup, runCgroupsBelow, scratchCgroup, spawnInCgroup, usableCgroup } from '../helpers/cgroup.js';
import { guardOf } from '../helpers/leash-run.js';
import { CLI_ENTRY, exited, killMarked, markedEnv, markedPidRunning, newMark } from '../helpers/processes.js';
import type { CgroupLocation } from '../../src/sys/cgroup.js';

const place = await usableCgroup();
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : false;

function setUp(t: { after: (fn: () => Promise<void> | void) => void }) {
  const location = place as CgroupLocation;
  const parent = scratchCgroup(t, location);
  const mark = newMark();
  t.after(() => killMarked(mark));
  // Two levels below the run's cgroup, each with a member that ignores SIGTERM (only the kill
  // of the whole subtree after the grace ends it), and the runner.
  const script = [
    `sh -c '${moveIntoSubCgroup(location.mount.mountPoint, 'inner')}; trap "" TERM; exec sleep 1002' &`,
    `sh -c '${moveIntoSubCgroup(location.mount.mountPoint, 'inner/deeper')}; trap "" TERM; exec sleep 1003' &`,
    'exec sleep 1001',
  ].join('\n');
  const leash = spawnInCgroup(parent.directory, [process.execPath, CLI_ENTRY, 'run', '--grace', '0.3', '--', 'sh', '-c', script], markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }));
  return { parent, mark, leash };
}

/** Waits until both sub-cgroups hold their member; returns the run's cgroup directory. */
async function subCgroupsMade(parent: string, mark: string, output: () => string): Promise<string> {
  assert.ok(await waitUntil(() => markedPidRunning(mark, 'sleep 1003') !== undefined && markedPidRunning(mark, 'sleep 1002') !== undefined, 10_000), output());
  const runs = runCgroupsBelow(parent);
  assert.equal(runs.length, 1, `run cgroups: ${runs}`);
  const run = runs[0]!;
  // The case really happened: the members sit in cgroups the command made below leash's.
  assert.ok(cgroupOf(markedPidRunning(mark, 'sleep 1003')!)!.endsWith('/inner/deeper'));
  assert.ok(existsSync(join(run, 'inner', 'deeper', 'cgroup.procs')));
  return run;
}

test('a command that made sub-cgroups: the stop ends their members, removes them all, and leash exits as usual', { skip }, async (t) => {
  const { parent, mark, leash } = setUp(t);
  await subCgroupsMade(parent.directory, mark, leash.output);
  const signalledAt = performance.now();
  signalProcess(leash.pid!, 'SIGTERM');
  const { code } = await exited(leash, 15_000);
  const exitMs = performance.now() - signalledAt;
  assert.equal(code, 143, leash.output());
  assert.doesNotMatch(leash.output(), /cannot remove/);
  assert.deepEqual(runCgroupsBelow(parent.directory), [], 'a run cgroup or one below it stayed');
  assert.equal(cgroupPopulated(parent.directory), false, 'a process stayed');
  // The grace (0.3 s) and the kill; before, a second went in a loop of failed removals.
  t.diagnostic(`SIGTERM -> exit: ${exitMs.toFixed(0)} ms`);
});

test('a command that made sub-cgroups, leash SIGKILLed: the guard ends them all and removes them deepest first', { skip }, async (t) => {
  const { parent, mark, leash } = setUp(t);
  const run = await subCgroupsMade(parent.directory, mark, leash.output);
  assert.ok(guardOf(leash.pid!) !== undefined, 'no guard');
  signalProcess(leash.pid!, 'SIGKILL');
  await exited(leash);
  assert.ok(await waitUntil(() => !existsSync(run), 10_000), `the guard left ${runCgroupsBelow(parent.directory)}`);
  // The guard itself leaves right after its last rmdir.
  assert.ok(await waitUntil(() => !cgroupPopulated(parent.directory), 5000), `left: ${readFileSync(join(parent.directory, 'cgroup.procs'), 'utf8')}`);
});

// The guard's shell once globbed "$dir"/*/, which skips names that start with a dot: a member of
// such a sub-cgroup got no SIGTERM when leash was SIGKILLed (only the kill after the grace), and
// the run's cgroup was left behind.
test('leash SIGKILLed: the guard gives a dot-named sub-cgroup\'s member its SIGTERM and removes the cgroup', { skip }, async (t) => {
  const location = place as CgroupLocation;
  const parent = scratchCgroup(t, location);
  const mark = newMark();
  t.after(() => killMarked(mark));
  const scratch = mkdtempSync(join(tmpdir(), 'leash-dot-cgroup-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const heard = join(scratch, 'heard');
  const script = [
    `sh -c '${moveIntoSubCgroup(location.mount.mountPoint, '.hidden')}; trap "echo TERM > ${heard}; exit 0" TERM; while :; do sleep 0.1; done; : sleep 1004' &`,
    'exec sleep 1001',
  ].join('\n');
  const leash = spawnInCgroup(parent.directory, [process.execPath, CLI_ENTRY, 'run', '--grace', '5', '--', 'sh', '-c', script], markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }));
  assert.ok(await waitUntil(() => markedPidRunning(mark, 'sleep 1001') !== undefined && runCgroupsBelow(parent.directory).length === 1, 10_000), leash.output());
  const run = runCgroupsBelow(parent.directory)[0]!;
  // The case happened: a member sits in a dot-named cgroup below the run's.
  assert.ok(await waitUntil(() => cgroupPopulated(join(run, '.hidden')), 10_000), `nothing in ${run}/.hidden`);
  assert.ok(guardOf(leash.pid!) !== undefined, 'no guard');
  signalProcess(leash.pid!, 'SIGKILL');
  await exited(leash);
  // Well within the 5 s grace: the SIGTERM reached it, not only the kill after the grace.
  assert.ok(await waitUntil(() => existsSync(heard), 4000), 'the dot-named cgroup\'s member never got SIGTERM');
  assert.ok(await waitUntil(() => !existsSync(run), 10_000), `the guard left ${runCgroupsBelow(parent.directory)}`);
});

test('the clean-up of a run cgroup whose maker is gone removes the cgroups below it too', { skip }, async (t) => {
  const location = place as CgroupLocation;
  const parent = scratchCgroup(t, location);
  const mark = newMark();
  t.after(() => killMarked(mark));
  // A maker that dies with its cgroup left behind, a sub-cgroup in it (as leash and its guard both
  // SIGKILLed would leave it): the cgroup module itself, in a process of its own.
  const maker = `
    const { loadNative } = await import(${JSON.stringify(new URL('../../src/sys/native.js', import.meta.url).href)});
    const { TreeCgroup } = await import(${JSON.stringify(new URL('../../src/sys/cgroup.js', import.meta.url).href)});
    const { mkdirSync } = await import('node:fs');
    await loadNative();
    const cgroup = TreeCgroup.create(JSON.parse(process.argv[1]));
    mkdirSync(cgroup.directory + '/left/below', { recursive: true });
    console.log(cgroup.directory);`;
  const made = execFileSync(process.execPath, ['--input-type=module', '-e', maker, JSON.stringify({ ...location, ...parent })], { encoding: 'utf8', env: markedEnv(mark) }).trim();
  assert.ok(existsSync(join(made, 'left', 'below')), made);
  const leash = spawnInCgroup(parent.directory, [process.execPath, CLI_ENTRY, 'run', '--', 'true'], markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }));
  assert.equal((await exited(leash)).code, 0, leash.output());
  assert.equal(existsSync(made), false, `${made} stayed: ${leash.output()}`);
  assert.deepEqual(runCgroupsBelow(parent.directory), []);
});
