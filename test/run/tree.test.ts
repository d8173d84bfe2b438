// `leash run` owning a real process tree: adoption and reaping, the grace and SIGKILL,
// signal forwarding, and a large tree with a setsid double-fork daemon.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { readChildren, scanAllStats } from '../../src/sys/procfs.js';
import { join } from 'node:path';
import { test } from 'node:test';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, markedPids } from '../helpers/processes.js';
import { guardOf, liveDescendantsOf, markedScratch, readJson, startLeash, zombieChildrenOf } from '../helpers/leash-run.js';

test('orphans are adopted and reaped, leaving no zombie', async (t) => {
  const { mark, dir, state } = markedScratch(t);
  // Each subshell starts a short sleeper and exits at once: the sleeper is orphaned to leash.
  // Once leash runs: contained, the command starts before leash is a subreaper, and an orphan of
  // its first milliseconds goes to init (cgroup-contained.test.ts).
  const script = `while [ ! -e "${dir}/start" ]; do sleep 0.01; done; for i in 1 2 3 4 5 6; do (sleep 0.3 &); done; while [ ! -e "${dir}/go" ]; do sleep 0.05; done; exit 0`;
  const leash = startLeash(['run', '--state', state, '--', 'sh', '-c', script], mark);
  const leashPid = leash.child.pid as number;
  assert.ok(await waitUntil(() => /phase=running/.test(leash.stderr()), 10_000), leash.stderr());
  writeFileSync(join(dir, 'start'), '');
  let runnerPid = 0;
  // Only once the guard is recognisable (it has exec'd with its token): before that, the guard's
  // fork could be taken for the runner.
  const findRunner = () => {
    const guardPid = guardOf(leashPid);
    if (guardPid === undefined) return 0;
    return readChildren(leashPid)?.find((pid) => pid !== guardPid) ?? 0;
  };
  assert.ok(await waitUntil(() => (runnerPid = findRunner()) > 0, 5000));
  // The orphans come to leash (not init) ...
  assert.ok(await waitUntil(() => (readJson(state)?.orphaned_children_total as number) >= 6 ||
    liveDescendantsOf(leashPid).length >= 6, 5000), leash.stderr());
  // ... and once they have died, none stays a zombie.
  const guard = guardOf(leashPid);
  assert.ok(guard, 'leash run has its guard');
  const orphansLeft = () => scanAllStats().filter((stat) => stat.ppid === leashPid && stat.pid !== runnerPid && stat.pid !== guard);
  assert.ok(await waitUntil(() => orphansLeft().length === 0, 5000),
    `left: ${JSON.stringify(orphansLeft())}, zombies ${zombieChildrenOf(leashPid)}`);
  writeFileSync(join(dir, 'go'), '');
  const { code } = await exited(leash.child);
  assert.equal(code, 0, leash.stderr());
  const final = readJson(state);
  assert.equal(final?.phase, 'exited');
  assert.equal(final?.reaped_orphans_total, 6);
  assert.equal(final?.orphaned_children_total, 6);
  assert.equal(final?.reaped_children_total, 7); // the runner too
  assert.equal(final?.escalated, false);
});

test('daemons that ignore SIGTERM are SIGKILLed after the grace', async (t) => {
  const { mark, state } = markedScratch(t);
  const script = [
    `sh -c 'trap "" TERM; exec sleep 60' &`,
    `setsid sh -c 'trap "" TERM; exec sleep 60' &`,
    `(sh -c 'trap "" TERM; exec sleep 60' &)`,
    'sleep 0.3; exit 4',
  ].join('\n');
  const started = Date.now();
  const leash = startLeash(['run', '--grace', '0.6', '--state', state, '--', 'sh', '-c', script], mark);
  const { code } = await exited(leash.child);
  const elapsed = Date.now() - started;
  assert.equal(code, 4, leash.stderr());
  assert.ok(elapsed >= 850, `ended after ${elapsed} ms, before the grace could run out`);
  assert.match(leash.stderr(), /phase=stopping .*phase=killing .*phase=exited/s);
  assert.deepEqual(markedPids(mark), [], 'nothing of the tree survives leash');
  const final = readJson(state);
  assert.equal(final?.escalated, true);
  assert.equal(final?.runner_exit_code, 4);
  assert.equal(final?.active_children, 0);
});

test('SIGTERM to leash reaches every process and group of the tree', async (t) => {
  const { mark, dir, state } = markedScratch(t);
  const trapTo = (name: string) => `trap 'echo x > "${dir}/${name}"; exit 0' TERM; sleep 60 & wait`;
  const script = [
    `trap 'echo x > "${dir}/runner"; exit 7' TERM`,
    `setsid sh -c '${trapTo('session').replace(/'/g, `'"'"'`)}' &`,
    `sh -c '${trapTo('child').replace(/'/g, `'"'"'`)}' &`,
    'sleep 60 & wait',
  ].join('\n');
  const leash = startLeash(['run', '--state', state, '--', 'sh', '-c', script], mark);
  const leashPid = leash.child.pid as number;
  assert.ok(await waitUntil(() => liveDescendantsOf(leashPid).length >= 6, 5000), leash.stderr());
  const started = Date.now();
  leash.child.kill('SIGTERM');
  const { code } = await exited(leash.child);
  assert.equal(code, 7, leash.stderr());
  assert.ok(Date.now() - started < 5000, 'no need to wait for the 10 s grace');
  for (const name of ['runner', 'session', 'child']) assert.ok(existsSync(join(dir, name)), `${name} got no SIGTERM`);
  const final = readJson(state);
  assert.equal(final?.termination_signal, 15);
  assert.equal(final?.escalated, false);
  assert.deepEqual(markedPids(mark), []);
});

test('SIGINT and SIGHUP are forwarded as themselves', async (t) => {
  const { mark } = markedScratch(t);
  for (const [signal, status] of [['SIGINT', 21], ['SIGHUP', 22]] as const) {
    const script = `trap 'exit ${status}' ${signal.slice(3)}; while :; do sleep 0.05; done`;
    const leash = startLeash(['run', '--grace', '0.5', '--', 'sh', '-c', script], mark);
    const leashPid = leash.child.pid as number;
    assert.ok(await waitUntil(() => liveDescendantsOf(leashPid).length >= 1, 5000));
    leash.child.kill(signal);
    const { code } = await exited(leash.child);
    assert.equal(code, status, leash.stderr());
  }
});

test('a 200-process tree and a setsid double-fork daemon are all gone at the end', async (t) => {
  const { mark, state } = markedScratch(t);
  const script = [
    'i=0; while [ $i -lt 200 ]; do sleep 60 & i=$((i+1)); done',
    `setsid sh -c 'sleep 60 & exit 0' &`,
    'sleep 0.5; exit 0',
  ].join('\n');
  const leash = startLeash(['run', '--grace', '5', '--state', state, '--', 'sh', '-c', script], mark);
  const { code } = await exited(leash.child, 30_000);
  assert.equal(code, 0, leash.stderr());
  assert.match(leash.stderr(), /phase=stopping /);
  assert.deepEqual(markedPids(mark), []);
  const final = readJson(state);
  // Every sleeper and the daemon were orphaned to leash when the runner left, and reaped.
  assert.ok((final?.reaped_orphans_total as number) >= 201, leash.stderr());
  assert.equal(final?.escalated, false, 'sleep honours SIGTERM: no SIGKILL needed');
  assert.equal(final?.active_children, 0);
});
