// The owner library pushed as a careless or hostile caller would: any value as a target or a
// grace, and hundreds of concurrent terminations while the event loop must stay responsive.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ChildProcess } from 'node:child_process';
import { ownedProcessGroups, ownProcessGroup, spawnOwned, terminateOwned } from '../../src/index.js';
import { isProcessAlive } from '../../src/sys/processes.js';
import { killMarked, markedEnv, newMark } from '../helpers/processes.js';

const mark = newMark();
const options = () => ({ stdio: 'ignore' as const, env: markedEnv(mark) });

test.after(async () => {
  for (const pgid of ownedProcessGroups()) await terminateOwned(pgid, { graceMs: 0 });
  await killMarked(mark);
});

/** Resolves with the promise's outcome, or 'pending' if it has not settled within budgetMs. */
async function settleWithin<T>(promise: Promise<T>, budgetMs: number): Promise<{ value?: T; error?: unknown } | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), budgetMs)));
  try {
    return await Promise.race([promise.then((value) => ({ value }), (error: unknown) => ({ error })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const NOT_A_GROUP: unknown[] = [undefined, null, 'abc', '12', Number.NaN, Infinity, 1.5, {}, { pid: 'x' }, [], true];

test('terminateOwned answers every non-group target the same way, without rejecting', async () => {
  for (const target of NOT_A_GROUP) {
    const outcome = await settleWithin(terminateOwned(target as number), 2000);
    assert.notEqual(outcome, 'pending', `terminateOwned(${String(target)}) answered`);
    if (outcome === 'pending') continue;
    assert.equal(outcome.error, undefined, `terminateOwned(${String(target)}) did not reject`);
    assert.deepEqual(outcome.value, { pgid: undefined, owned: false, escalated: false, empty: true }, `terminateOwned(${String(target)})`);
  }
});

test('ownProcessGroup and terminateOwned draw the same line between a group number and anything else', async () => {
  for (const target of NOT_A_GROUP) {
    assert.throws(() => ownProcessGroup(target as number), TypeError, `ownProcessGroup(${String(target)})`);
    assert.equal((await terminateOwned(target as number)).pgid, undefined);
  }
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  try {
    for (const pgid of [0, 1, -3]) {
      assert.equal(ownProcessGroup(pgid), false, `ownProcessGroup(${pgid})`);
      const result = await terminateOwned(pgid);
      assert.equal(result.pgid, pgid);
      assert.equal(result.owned, false, `terminateOwned(${pgid}) signals nothing`);
    }
  } finally {
    process.off('warning', onWarning);
  }
});

/** An owned group whose leader ignores SIGTERM, once it does (it says so on stdout). */
async function stubborn(): Promise<ChildProcess> {
  const child = spawnOwned('sh', ['-c', "trap '' TERM; echo ready; exec sleep 1000"], { ...options(), stdio: ['ignore', 'pipe', 'ignore'] });
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 10_000);
    child.stdout!.once('data', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (!ready) throw new Error('the stubborn child never got ready');
  child.stdout!.destroy();
  return child;
}

test('graceMs NaN, a string or null means the default grace: the stubborn group is killed, not polled forever', async () => {
  for (const graceMs of [Number.NaN, '100', null]) {
    const child = await stubborn();
    const began = Date.now();
    const outcome = await settleWithin(terminateOwned(child, { graceMs: graceMs as number }), 10_000);
    assert.notEqual(outcome, 'pending', `graceMs ${String(graceMs)}: answered within 10 s`);
    if (outcome === 'pending') continue;
    assert.equal(outcome.value?.escalated, true);
    assert.equal(outcome.value?.empty, true);
    assert.ok(Date.now() - began >= 2500, `graceMs ${String(graceMs)} waited the default 3000 ms grace`);
    assert.equal(isProcessAlive(child.pid!), false);
  }
});

test('graceMs below 0 or -Infinity escalates at once; Infinity is a (long) finite wait that ends when the group does', async () => {
  for (const graceMs of [-5, -Infinity]) {
    const child = await stubborn();
    const result = await terminateOwned(child, { graceMs });
    assert.equal(result.escalated, true, `graceMs ${graceMs}`);
    assert.equal(result.empty, true);
  }
  const obedient = spawnOwned('sleep', ['1000'], options());
  const outcome = await settleWithin(terminateOwned(obedient, { graceMs: Infinity }), 10_000);
  assert.notEqual(outcome, 'pending');
  if (outcome !== 'pending') assert.deepEqual(outcome.value, { pgid: obedient.pid, owned: true, escalated: false, empty: true });
});

test('100 concurrent terminateOwned calls keep the event loop responsive', async () => {
  const children = await Promise.all(Array.from({ length: 100 }, () => stubborn()));
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const results = await Promise.all(children.map((child) => terminateOwned(child, { graceMs: 1000 })));
  delay.disable();
  for (const result of results) assert.equal(result.empty, true);
  const worstMs = delay.max / 1e6;
  // Generous for a shared, loaded machine: the stall target (< 20 ms) is measured in bench/owner-stall.ts.
  assert.ok(worstMs < 250, `the event loop was held for ${worstMs.toFixed(1)} ms`);
});
