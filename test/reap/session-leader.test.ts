// A leaked server that ran in its own session (spawned detached) carries no evidence of adoption
// in its session id: it counts as orphaned only when its parent is init or a `systemd --user`
// manager. The same child under an ordinary live parent, which closed the child's stdin on
// purpose, is never listed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readProcStat } from '../../src/sys/procfs.js';
import { startFixture } from '../helpers/processes.js';
import { runReap, reapScratch } from './harness.js';

test('a session leader under `systemd --user` is listed; under an ordinary live parent it is not', async (t) => {
  const { mark, marker, ready } = reapScratch(t);
  const env = { LEASH_REAP_READY_DIR: ready.path };
  const manager = startFixture('reap/parent.mjs', [marker, 'adopted', '--user'], mark, { argv0: 'systemd', detached: true, extraEnv: env });
  const parent = startFixture('reap/parent.mjs', [marker, 'kept'], mark, { detached: true, extraEnv: env });
  const adopted = await ready.pid('adopted');
  const kept = await ready.pid('kept');
  assert.equal(readProcStat(adopted)?.ppid, manager.pid);
  assert.equal(readProcStat(kept)?.ppid, parent.pid);
  assert.equal(readProcStat(adopted)?.sid, adopted, 'the child leads its own session');

  const listed = runReap(['--match', marker]);
  assert.deepEqual(listed.report.trees.map((tree) => tree.pid), [adopted], JSON.stringify(listed.report.trees, null, 1));
  assert.deepEqual(listed.report.trees[0]!.reasons, ['stdin-no-writer']);
  assert.match(listed.report.trees[0]!.parent.command, /^systemd .*--user/);
});
