// While the tree is taken down, SIGCHLDs only reap and count leash's children; the walk that
// finds what the group signal missed runs apart from them. A process started in a new session
// in the middle of the stop must still get the stop signal well within the grace, and every
// orphan reaped that way must still be counted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exited, markedPids } from '../helpers/processes.js';
import { markedScratch, readJson, startLeash } from '../helpers/leash-run.js';

test('a process started in a new session during the stop gets the stop signal, not the grace', async (t) => {
  const { mark, state } = markedScratch(t);
  const script = [
    // Once leash runs (its state document exists): the counts below start from a running leash.
    `while [ ! -e '${state}' ]; do sleep 0.01; done`,
    // On SIGTERM it starts a new session's sleeper (which honours SIGTERM) and exits: the sleeper
    // comes to leash, out of every group leash has signalled.
    `sh -c 'trap "setsid sleep 60 & exit 0" TERM; while :; do sleep 0.05; done' &`,
    // Plain orphans that die with the group signal: reaped by the SIGCHLD path.
    `for i in 1 2 3 4 5; do (sleep 60 &); done`,
    'sleep 0.3; exit 3',
  ].join('\n');
  const started = Date.now();
  const leash = startLeash(['run', '--grace', '10', '--state', state, '--', 'sh', '-c', script], mark);
  const { code } = await exited(leash.child);
  const elapsed = Date.now() - started;
  assert.equal(code, 3, leash.stderr());
  assert.ok(elapsed < 6000, `ended after ${elapsed} ms: the newcomer waited for the grace`);
  assert.deepEqual(markedPids(mark), [], 'nothing of the tree survives leash');
  const final = readJson(state);
  assert.equal(final?.phase, 'exited');
  assert.equal(final?.escalated, false, leash.stderr());
  assert.equal(final?.active_children, 0);
  assert.equal(final?.reaped_orphans_total, final?.orphaned_children_total, JSON.stringify(final));
  assert.ok((final?.reaped_orphans_total as number) >= 6, JSON.stringify(final));
});
