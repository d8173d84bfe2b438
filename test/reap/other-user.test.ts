// Run as an ordinary user, leash reap judges only that user's processes: another user's orphan
// with a cut stdin pipe is never listed (nor could it be signalled).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processUid } from '../../src/sys/procfs.js';
import { idle, reapScratch, runReap, runShell } from './harness.js';

const CALLER_UID = 1; // daemon
const OTHER_UID = 65534; // nobody

test('as a non-root user, another user\'s leaked-looking process is never listed', { skip: process.getuid?.() !== 0 && 'needs root to start processes as two users' }, async (t) => {
  const { mark, marker, ready, byIdentity } = reapScratch(t);
  // The same leak twice: stdin a pipe whose writer (true) is gone, parent init.
  await runShell(`true | ${idle(marker, 'mine')} >/dev/null 2>&1 &`, mark, ready, CALLER_UID);
  await runShell(`true | ${idle(marker, 'theirs')} >/dev/null 2>&1 &`, mark, ready, OTHER_UID);
  const mine = await ready.pid('mine');
  const theirs = await ready.pid('theirs');
  for (const pid of [mine, theirs]) byIdentity(pid);
  assert.equal(processUid(mine), CALLER_UID);
  assert.equal(processUid(theirs), OTHER_UID);

  const asCaller = runReap(['--match', marker], CALLER_UID);
  assert.deepEqual(asCaller.report.trees.map((tree) => tree.pid), [mine], asCaller.stderr);
  // The control is a real leak by the same rules: root, who may judge anyone's, lists both.
  const asRoot = runReap(['--match', marker]);
  assert.deepEqual(asRoot.report.trees.map((tree) => tree.pid).sort(), [mine, theirs].sort());
});
