// Issue #32, case 2 (without containers), and #28's seam: contained, the run is the union of the
// run's cgroup and every descendant of leash, whichever cgroup it moved to (podman's conmon and
// the container's processes do so). A descendant that moves itself into a sibling cgroup is
// stopped by identity, killed after the grace if it ignores SIGTERM, and waited for: leash exits
// only once both parts are empty. Before, the stop never reached it and leash never exited.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { cgroupOf, destroyCgroup, scratchCgroup, usableCgroup } from '../helpers/cgroup.js';
import { markedScratch, readJson, startLeash, type LeashProcess } from '../helpers/leash-run.js';
import { exited, markedPids } from '../helpers/processes.js';

const place = await usableCgroup();
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : false;

/** A shell that moves itself into `directory`, says its pid, and waits on a sleep (started after the move: there too). */
function mover(directory: string, trap: string): string {
  return `sh -c 'echo $$ > ${directory}/cgroup.procs && ${trap} echo "moved $$"; sleep 1000 & wait'`;
}

/** Waits until the moved shell runs outside leash's cgroup, below leash; returns its pid. */
async function movedOut(leash: LeashProcess, sibling: { path: string }): Promise<number> {
  assert.ok(await waitUntil(() => /^moved \d+$/m.test(leash.stdout()), 10_000), `never moved: ${leash.stderr()}`);
  const pid = Number(/^moved (\d+)$/m.exec(leash.stdout())![1]);
  // The case happened: the process is in the sibling cgroup, not in the run's, and is leash's descendant.
  assert.equal(cgroupOf(pid), sibling.path);
  const run = /containment: cgroup v2 \((.+)\)$/m.exec(leash.stderr())?.[1];
  assert.ok(run, `not contained: ${leash.stderr()}`);
  let ancestor = readProcStat(pid)?.ppid;
  for (let hops = 0; ancestor !== undefined && ancestor > 1 && ancestor !== leash.child.pid && hops < 10; hops += 1) ancestor = readProcStat(ancestor)?.ppid;
  assert.equal(ancestor, leash.child.pid, `${pid} is not below leash`);
  return pid;
}

test('contained: the runner exits and a descendant that moved to another cgroup is stopped and waited for', { skip }, async (t) => {
  if (typeof place === 'string') return;
  const { mark, state, dir } = markedScratch(t);
  const sibling = scratchCgroup(t, place);
  const go = join(dir, 'go');
  execFileSync('mkfifo', [go]);
  const script = `${mover(sibling.directory, 'trap "exit 0" TERM;')} & read x < '${go}'; exit 3`;
  const leash = startLeash(['run', '--grace', '5', '--state', state, '--', 'sh', '-c', script], mark);
  t.after(async () => {
    const run = /containment: cgroup v2 \((.+)\)$/m.exec(leash.stderr())?.[1];
    if (run !== undefined) await destroyCgroup(run);
  });
  const pid = await movedOut(leash, sibling);
  writeFileSync(go, 'go\n');
  const started = performance.now();
  const { code } = await exited(leash.child, 15_000);
  assert.equal(code, 3, leash.stderr());
  assert.equal(isProcessAlive(pid), false);
  assert.ok(performance.now() - started < 4000, 'the moved process waited for the grace: it was not sent SIGTERM');
  assert.match(leash.stderr(), new RegExp(`ending \\d+ process(es)? outside the cgroup with SIGTERM: .*${pid} \\(sh -c`));
  assert.equal(readJson(state)?.escalated, false);
  assert.deepEqual(markedPids(mark), []);
});

test('contained: SIGTERM to leash; a moved descendant that ignores it is killed after the grace, and leash exits after it', { skip }, async (t) => {
  if (typeof place === 'string') return;
  const { mark, state } = markedScratch(t);
  const sibling = scratchCgroup(t, place);
  const script = `${mover(sibling.directory, 'trap "" TERM;')} & exec sleep 1000`;
  const leash = startLeash(['run', '--grace', '1', '--state', state, '--', 'sh', '-c', script], mark);
  t.after(async () => {
    const run = /containment: cgroup v2 \((.+)\)$/m.exec(leash.stderr())?.[1];
    if (run !== undefined) await destroyCgroup(run);
  });
  const pid = await movedOut(leash, sibling);
  assert.ok(await waitUntil(() => readJson(state)?.phase === 'running', 5000), leash.stderr());
  leash.child.kill('SIGTERM');
  const { code } = await exited(leash.child, 15_000);
  assert.equal(code, 143, leash.stderr());
  assert.equal(isProcessAlive(pid), false);
  assert.match(leash.stderr(), new RegExp(`killed \\d+ process(es)? outside the cgroup with SIGKILL: .*${pid} \\(sh -c`));
  const final = readJson(state);
  assert.equal(final?.escalated, true);
  assert.equal(final?.phase, 'exited');
  assert.deepEqual(markedPids(mark), []);
});
