// A CLI agent that crashes in the user's own terminal leaves its servers in that terminal's
// session, which `leash reap` never judges (its own shell is there). It listed nothing and said
// nothing. Now it counts what it set apart and names the flag that includes it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { exited, markedEnv } from '../helpers/processes.js';
import { idle, reapScratch, runReap, runShell } from './harness.js';

test('trees in the caller\'s own session are counted and named, and --include-own-session lists and ends them', async (t) => {
  const { mark, marker, ready } = reapScratch(t);
  // The writer of each idle process's stdin (`:`) exits at once, and so does the shell: each is
  // orphaned with a stdin nobody can write to. One in this session (as a crash in this terminal
  // leaves it), one in a session of its own (the control, listed as before).
  const script = (role: string) => `: | ${idle(marker, role)} &`;
  const sameSession = spawn('sh', ['-c', script('own')], { stdio: 'ignore', env: markedEnv(mark, { LEASH_REAP_READY_DIR: ready.path }) });
  assert.equal((await exited(sameSession, 20_000)).code, 0);
  await runShell(script('elsewhere'), mark, ready);
  const own = await ready.pid('own');
  const elsewhere = await ready.pid('elsewhere');
  const ourSession = readProcStat(process.pid)!.sid;
  assert.equal(readProcStat(own)?.sid, ourSession, 'the leak is in the session leash reap runs in');
  assert.notEqual(readProcStat(elsewhere)?.sid, ourSession);

  const plain = runReap(['--match', marker]);
  assert.deepEqual(plain.report.trees.map((tree) => tree.pid), [elsewhere], plain.stderr);
  assert.deepEqual((plain.report as unknown as { notShownOwnSession: unknown }).notShownOwnSession, { leaked: 1, unknown: 0 });
  assert.match(plain.stderr, /1 leaked tree in this terminal's own session not shown .*--include-own-session/);

  const included = runReap(['--match', marker, '--include-own-session']);
  assert.deepEqual(included.report.trees.map((tree) => tree.pid).sort(), [own, elsewhere].sort(), included.stderr);
  assert.deepEqual((included.report as unknown as { notShownOwnSession: unknown }).notShownOwnSession, { leaked: 0, unknown: 0 });
  assert.doesNotMatch(included.stderr, /not shown/);

  // --kill without the flag leaves the own-session tree alone, and says so.
  const killed = runReap(['--match', marker, '--kill', '--grace', '1s']);
  assert.equal(killed.code, 1, killed.stderr);
  assert.match(killed.stderr, /not shown nor ended/);
  assert.equal(isProcessAlive(elsewhere), false);
  assert.equal(isProcessAlive(own), true, 'the own-session tree was ended without the flag');
  const killedToo = runReap(['--match', marker, '--kill', '--grace', '1s', '--include-own-session']);
  assert.equal(killedToo.code, 1, killedToo.stderr);
  assert.deepEqual(killedToo.report.trees.map((tree) => tree.kill?.result), ['ended']);
  assert.equal(isProcessAlive(own), false);
});
