// Issue #28, case 4: leash is a child subreaper before the command starts, in both containments.
// Orphans made in the command's very first instant come to leash, not to init, and the state
// document counts them (`adopted`, `reaped_orphans_total`), as the seed's counters do. Before,
// a contained run loaded koffi and set the bit only once the command ran: such orphans went to
// init, uncounted (0 to 4 of 5 here).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readCommandLine, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { usableCgroup } from '../helpers/cgroup.js';
import { markedScratch, readJson, startLeash } from '../helpers/leash-run.js';
import { exited, markedPids } from '../helpers/processes.js';

const place = await usableCgroup();
const ORPHANS = 5;
// The issue's own command: five orphans at once, the command's first act.
const SCRIPT = `for i in 1 2 3 4 5; do (sleep 0.8 &); done; exec sleep 1.5`;
// (Their parent is read while they live: 0.8 s, ample for a check every 10 ms.)

for (const mode of ['cgroup', 'tree'] as const) {
  const skip = mode === 'cgroup' && typeof place === 'string' ? `no cgroup to test with: ${place}` : false;
  test(`${mode}: the orphans of the command's first instant are leash's, and counted`, { skip }, async (t) => {
    const { mark, state } = markedScratch(t);
    const leash = startLeash(['run', '--grace', '2', '--state', state, '--', 'sh', '-c', SCRIPT], mark, {
      LEASH_CONTAINMENT: mode === 'tree' ? 'tree' : 'auto',
    });
    const leashPid = leash.child.pid as number;
    const orphans = () => markedPids(mark).filter((pid) => (readCommandLine(pid) ?? []).join(' ') === 'sleep 0.8');
    // The case happened: five orphans, each with its maker gone (its parent no longer a subshell).
    assert.ok(await waitUntil(() => orphans().length === ORPHANS, 5000), `orphans: ${orphans().length}; ${leash.stderr()}`);
    assert.match(leash.stderr(), mode === 'cgroup' ? /containment: cgroup v2/ : /containment: process tree/);
    let parents = '';
    assert.ok(
      await waitUntil(() => {
        const now = orphans();
        parents = now.map((pid) => `${pid}<-${readProcStat(pid)?.ppid}`).join(' ');
        return now.length === ORPHANS && now.every((pid) => readProcStat(pid)?.ppid === leashPid);
      }, 2000),
      `parents last seen: ${parents}; leash ${leashPid}`,
    );
    const { code } = await exited(leash.child, 20_000);
    assert.equal(code, 0, leash.stderr());
    const final = readJson(state);
    assert.equal(final?.phase, 'exited');
    assert.equal(final?.orphaned_children_total, ORPHANS, JSON.stringify(final));
    assert.equal(final?.reaped_orphans_total, ORPHANS, JSON.stringify(final));
    assert.equal(final?.adopted_children, 0);
    assert.deepEqual(markedPids(mark), []);
  });
}
