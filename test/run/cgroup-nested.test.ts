// `leash run` inside `leash run` (a wrapped config whose server command is itself wrapped), on a
// host where systemd is the service manager: the inner leash makes its cgroup as a child of the
// outer one, which carries no systemd delegation mark but leash's own mark; the outer stop and the
// inner guard do not fight; both cgroups go. systemd is shown to leash the way sd_booted() sees
// it, /run/systemd/system present, in a mount namespace of the test's own (a tmpfs over /run seen
// by these leashes only), and the scratch cgroup carries systemd's mark, as a delegated unit would.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { cgroupPopulated, markDelegatedBySystemd, runCgroupsBelow, scratchCgroup, spawnInCgroup, usableCgroup } from '../helpers/cgroup.js';
import { CLI_ENTRY, exited, killMarked, markedEnv, markedPidRunning, newMark } from '../helpers/processes.js';
import type { CgroupLocation } from '../../src/sys/cgroup.js';

const place = await usableCgroup();
const hasUnshare = spawnSync('unshare', ['--mount', '--propagation', 'private', 'true']).status === 0;
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : !hasUnshare ? 'unshare --mount is not available' : false;

/** Inside a mount namespace of its own where /run/systemd/system exists (sd_booted: systemd runs here). */
const SYSTEMD_HOST = ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs leash-test /run && mkdir -p /run/systemd/system && exec "$@"', 'sh'];

async function startNested(t: { after: (fn: () => Promise<void> | void) => void }) {
  const location = place as CgroupLocation;
  const parent = scratchCgroup(t, location);
  // What systemd writes on a cgroup it delegated: the outer leash may make its own there.
  await markDelegatedBySystemd(parent.directory);
  const mark = newMark();
  t.after(() => killMarked(mark));
  const leash = [process.execPath, CLI_ENTRY, 'run', '--grace', '2'];
  const command = ['sh', '-c', 'sleep 1002 & exec sleep 1001'];
  const outer = spawnInCgroup(parent.directory, [...SYSTEMD_HOST, ...leash, '--', ...leash, '--', ...command], markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', LEASH_CONTAINMENT: '' }));
  return { parent, mark, outer };
}

/** Waits for both runs to be contained, the inner one's cgroup a child of the outer one's. */
async function bothContained(parent: string, mark: string, output: () => string): Promise<string[]> {
  assert.ok(await waitUntil(() => markedPidRunning(mark, 'sleep 1001') !== undefined && (output().match(/containment: /g)?.length ?? 0) >= 2, 15_000), output());
  // Both are contained, the inner run's cgroup below the outer one's: no fallback to the tree.
  assert.doesNotMatch(output(), /systemd manages|process tree \(subreaper\)/, output());
  const runs = runCgroupsBelow(parent);
  assert.equal(runs.length, 2, `run cgroups: ${runs}\n${output()}`);
  assert.ok(runs[1]!.startsWith(`${runs[0]}/`), `not nested: ${runs}`);
  return runs;
}

test('systemd host, leash run inside leash run: nested cgroups; the outer stop ends both, the inner guard is not restarted, both cgroups go', { skip }, async (t) => {
  const { parent, mark, outer } = await startNested(t);
  await bothContained(parent.directory, mark, outer.output);
  signalProcess(outer.pid!, 'SIGTERM');
  const { code } = await exited(outer, 20_000);
  // unshare and sh exec'd: the exit status is the outer leash's own.
  assert.equal(code, 143, outer.output());
  // The outer stop's SIGTERM reached the inner guard (it is in the outer cgroup): ignored, so not
  // one guard was ended, none restarted, and the inner leash stopped its tree and went.
  assert.doesNotMatch(outer.output(), /guard (exited|was ended)/, outer.output());
  assert.doesNotMatch(outer.output(), /cannot remove/, outer.output());
  // The outer leash stops on the signal. The inner one gets the same SIGTERM in the outer stop's
  // one read of every member (sub-cgroups included), and so does its runner: it stops on the
  // signal or finds its runner already ended by it, whichever it reads first (CI saw both).
  assert.ok((outer.output().match(/phase=stopping [^\n]*reason="signal SIGTERM"/g)?.length ?? 0) >= 1, `the outer leash did not stop on SIGTERM: ${outer.output()}`);
  assert.equal(outer.output().match(/phase=exited/g)?.length, 2, 'both leashes ended');
  assert.deepEqual(runCgroupsBelow(parent.directory), []);
  assert.ok(await waitUntil(() => !cgroupPopulated(parent.directory), 5000), 'a process stayed');
});

test('systemd host, leash run inside leash run, the outer leash SIGKILLed: its guard ends both runs and both cgroups go', { skip }, async (t) => {
  const { parent, mark, outer } = await startNested(t);
  const runs = await bothContained(parent.directory, mark, outer.output);
  signalProcess(outer.pid!, 'SIGKILL');
  await exited(outer);
  assert.ok(await waitUntil(() => runCgroupsBelow(parent.directory).length === 0, 15_000), `left: ${runCgroupsBelow(parent.directory)} (had ${runs})\n${outer.output()}`);
  assert.ok(await waitUntil(() => !cgroupPopulated(parent.directory), 5000), 'a process stayed');
});
