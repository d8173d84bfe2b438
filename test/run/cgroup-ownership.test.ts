// Ownership of a run cgroup that does not depend on seeing a pid: a `leash run` in a private pid
// namespace that shares the cgroup hierarchy (unshare --pid, as bubblewrap or a container without
// a cgroup namespace) sees none of the other runs' pids. It must never remove the cgroup of a live
// maker (here: this test process, which made one and keeps it empty, as a leash between its mkdir
// and its command's start does), and still removes one whose maker is proven gone.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { TreeCgroup, type CgroupLocation } from '../../src/sys/cgroup.js';
import { waitUntil } from '../../src/sys/wait.js';
import { cgroupPopulated, runCgroupsBelow, scratchCgroup, spawnInCgroup, usableCgroup } from '../helpers/cgroup.js';
import { CLI_ENTRY, exited, killMarked, markedEnv, newMark } from '../helpers/processes.js';

const place = await usableCgroup();
const hasUnshare = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : !hasUnshare ? 'unshare --pid is not available' : false;

const PRIVATE_PIDS = ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'];

test('a leash in a private pid namespace never removes the empty cgroup of a live maker it cannot see, and removes one whose maker is gone', { skip }, async (t) => {
  const location = place as CgroupLocation;
  const parent = scratchCgroup(t, location);
  const mark = newMark();
  t.after(() => killMarked(mark));
  // A live maker's cgroup, empty: this process made it and lives on.
  const live = TreeCgroup.create({ ...location, ...parent });
  assert.ok(live instanceof TreeCgroup, String(live));
  t.after(() => void live.remove());
  // A gone maker's cgroup: made by a process that then exited.
  const maker = `
    const { loadNative } = await import(${JSON.stringify(new URL('../../src/sys/native.js', import.meta.url).href)});
    const { TreeCgroup } = await import(${JSON.stringify(new URL('../../src/sys/cgroup.js', import.meta.url).href)});
    await loadNative();
    console.log(TreeCgroup.create(JSON.parse(process.argv[1])).directory);`;
  const abandoned = execFileSync(process.execPath, ['--input-type=module', '-e', maker, JSON.stringify({ ...location, ...parent })], { encoding: 'utf8', env: markedEnv(mark) }).trim();
  assert.ok(existsSync(abandoned), abandoned);
  // Five runs in the private namespace, each making its cgroup next to both (and cleaning up).
  for (let run = 0; run < 5; run += 1) {
    const script = `kill -0 ${process.pid} 2>/dev/null && echo "sees ${process.pid}" || echo "cannot see ${process.pid}"; echo "own pid $$"`;
    const leash = spawnInCgroup(parent.directory, [...PRIVATE_PIDS, process.execPath, CLI_ENTRY, 'run', '--', 'sh', '-c', script], markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', LEASH_CONTAINMENT: '' }));
    const { code } = await exited(leash, 15_000);
    assert.equal(code, 0, leash.output());
    // The case really happened: contained, in a pid namespace where this process has no pid.
    assert.match(leash.output(), /containment: cgroup v2/);
    assert.match(leash.output(), new RegExp(`cannot see ${process.pid}`));
    assert.match(leash.output(), /own pid ([2-9]|1\d)$/m, 'not in a private pid namespace');
    assert.ok(existsSync(live.directory), `run ${run} removed the cgroup of a live maker: ${leash.output()}`);
    assert.equal(existsSync(abandoned), false, `run ${run} left the cgroup of a gone maker`);
  }
  // Only the live maker's cgroup is left, and nothing runs.
  assert.deepEqual(runCgroupsBelow(parent.directory), [live.directory]);
  assert.equal(cgroupPopulated(parent.directory), false);
});

test('a maker between its mkdir and its mark (the parent\'s shared lock held) keeps its unmarked cgroup; once it is gone, the next run removes it', { skip }, async (t) => {
  const location = place as CgroupLocation;
  const parent = scratchCgroup(t, location);
  const mark = newMark();
  t.after(() => killMarked(mark));
  // A maker stopped in that moment: the parent's shared lock held, its cgroup made, no lock or mark on it yet.
  const maker = `
    const { loadNative, lockFile } = await import(${JSON.stringify(new URL('../../src/sys/native.js', import.meta.url).href)});
    const { runCgroupName } = await import(${JSON.stringify(new URL('../../src/sys/cgroup-ownership.js', import.meta.url).href)});
    const { constants, mkdirSync, openSync } = await import('node:fs');
    await loadNative();
    const parent = process.argv[1];
    if (lockFile(openSync(parent, constants.O_RDONLY | constants.O_DIRECTORY), 'shared') !== 'held') throw new Error('no lock');
    const directory = parent + '/' + runCgroupName('0badcafe', true);
    mkdirSync(directory);
    console.log(directory);
    process.stdin.on('end', () => process.exit(0)).resume();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', maker, parent.directory], { stdio: ['pipe', 'pipe', 'inherit'], env: markedEnv(mark) });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (out += text));
  assert.ok(await waitUntil(() => out.includes('\n'), 10_000), 'the maker never made its cgroup');
  const made = out.trim();
  const run = async () => {
    const leash = spawnInCgroup(parent.directory, [...PRIVATE_PIDS, process.execPath, CLI_ENTRY, 'run', '--', 'true'], markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', LEASH_CONTAINMENT: '' }));
    assert.equal((await exited(leash, 15_000)).code, 0, leash.output());
    assert.match(leash.output(), /containment: cgroup v2/);
  };
  await run();
  assert.ok(existsSync(made), 'a run removed the cgroup of a maker between its mkdir and its mark');
  child.stdin!.end();
  await exited(child);
  await run();
  assert.equal(existsSync(made), false, 'the cgroup of a maker that died before its mark stayed');
  assert.deepEqual(runCgroupsBelow(parent.directory), []);
});
