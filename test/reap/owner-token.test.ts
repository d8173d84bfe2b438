// The third sign of a leak: a process carrying a leash owner token (LEASH_OWNER_TOKEN) whose
// supervisor is gone, orphaned, with no stdio pipe at all. And the escalation: a member that
// ignores SIGTERM is KILLed once the grace is over.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { waitForGone } from '../helpers/processes.js';
import { idle, q, runReap, runShell, reapScratch } from './harness.js';

test('an orphan carrying an owner token with no live supervisor is listed; a live supervisor protects it', async (t) => {
  const { mark, marker, ready } = reapScratch(t);
  const token = randomBytes(12).toString('hex');
  await runShell(`LEASH_OWNER_TOKEN=${token} ${idle(marker, 'ignore-term')} </dev/null >/dev/null 2>&1 &`, mark, ready);
  const carrier = await ready.pid('ignore-term');
  // A stand-in for the supervisor: the scan knows one by `--owner-token TOKEN` in its argv.
  await runShell(`${idle(marker, 'supervisor')} supervise --owner-token ${q(token)} </dev/null >/dev/null 2>&1 &`, mark, ready);
  const supervisor = await ready.pid('supervisor');

  const guarded = runReap(['--match', `${marker} ignore-term`]);
  assert.deepEqual(guarded.report.trees, [], 'a live supervisor for the token: not leaked');
  assert.equal(guarded.code, 0);

  await killMarkedPid(supervisor);
  const listed = runReap(['--match', `${marker} ignore-term`]);
  assert.equal(listed.code, 1);
  assert.equal(listed.report.trees.length, 1, JSON.stringify(listed.report.trees));
  assert.equal(listed.report.trees[0]!.pid, carrier);
  assert.deepEqual(listed.report.trees[0]!.reasons, ['owner-gone']);

  const started = Date.now();
  const killed = runReap(['--match', `${marker} ignore-term`, '--kill', '--grace', '300ms']);
  assert.equal(killed.report.trees[0]?.kill?.result, 'ended', killed.stderr);
  assert.equal(killed.report.trees[0]?.kill?.killed, 1, 'the TERM-ignoring carrier needed SIGKILL');
  assert.ok(await waitForGone([carrier], 5000));
  assert.ok(Date.now() - started < 30_000);
});

async function killMarkedPid(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  assert.ok(await waitForGone([pid], 5000));
  assert.ok(!isProcessAlive(pid));
}

test('a supervisor is known by --owner-token in any launch shape; a carrier of the token is no supervisor', async (t) => {
  const { mark, marker, ready } = reapScratch(t);
  const token = randomBytes(12).toString('hex');
  await runShell(`LEASH_OWNER_TOKEN=${token} ${idle(marker, 'carrier')} </dev/null >/dev/null 2>&1 &`, mark, ready);
  const carrier = await ready.pid('carrier');
  const carrierListed = () => runReap(['--match', `${marker} carrier`]).report.trees.map((tree) => tree.pid);

  // The shape of Deno's launch (`deno run --allow-all --quiet FILE ...`), with the `=` spelling:
  // no `supervise` anywhere in it.
  await runShell(`${idle(marker, 'deno-shape')} run --allow-all --quiet supervisor.cjs --parent-pgid 1 --owner-token=${q(token)} </dev/null >/dev/null 2>&1 &`, mark, ready);
  const denoShape = await ready.pid('deno-shape');
  assert.deepEqual(carrierListed(), [], 'a live supervisor in the Deno shape protects the carrier');
  await killMarkedPid(denoShape);
  assert.deepEqual(carrierListed(), [carrier], 'once it is gone, the carrier is listed');

  // A process that carries the token itself is one of the owned: its flags prove nothing.
  await runShell(`LEASH_OWNER_TOKEN=${token} ${idle(marker, 'impostor')} --owner-token ${q(token)} </dev/null >/dev/null 2>&1 &`, mark, ready);
  await ready.pid('impostor');
  assert.deepEqual(carrierListed(), [carrier], 'a carrier with the flag is no supervisor');
});
