// A hundred mixed `leash run`s side by side in one scratch cgroup: plain, with sub-cgroups made by
// the command, nested (leash run inside leash run), in private pid namespaces; most SIGKILLed at a
// random moment (start-up included), some stopped with SIGTERM, some left to end by themselves.
// Afterwards no leash cgroup directory and no process is left below the scratch cgroup (the last
// abandoned ones, whose leash and guard died together in a pid namespace, go with the next run's
// clean-up: one more plain run is made for that). Counted, not sampled.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { cgroupPopulated, moveIntoSubCgroup, runCgroupsBelow, scratchCgroup, spawnInCgroup, usableCgroup } from '../helpers/cgroup.js';
import { CLI_ENTRY, exited, killMarked, markedEnv, markedPids, newMark } from '../helpers/processes.js';
import type { CgroupLocation } from '../../src/sys/cgroup.js';

const place = await usableCgroup();
const hasUnshare = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : !hasUnshare ? 'unshare --pid is not available' : false;

const RUNS = 100;
const AT_ONCE = 10;
const KINDS = ['plain', 'sub-cgroups', 'nested', 'pid-namespace'] as const;
/** SIGKILL at a random moment from the spawn (start-up mostly), or from the running phase on. */
const ENDINGS = ['SIGKILL at start', 'SIGKILL running', 'SIGKILL running', 'SIGTERM running', 'exits'] as const;

/** A small seeded generator (mulberry32): a failing mix can be replayed with LEASH_TEST_SEED. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

test('100 mixed leash runs (nested, sub-cgroups, private pid namespaces, SIGKILLed at random moments) leave no leash cgroup and no process', { skip, timeout: 90_000 }, async (t) => {
  const location = place as CgroupLocation;
  const parent = scratchCgroup(t, location);
  const mark = newMark();
  t.after(() => killMarked(mark));
  const seed = Number(process.env.LEASH_TEST_SEED) || Date.now() % 1_000_000;
  const random = generator(seed);
  t.diagnostic(`seed ${seed}`);
  const env = markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', LEASH_CONTAINMENT: '' });
  const leash = [process.execPath, CLI_ENTRY, 'run', '--grace', '0.2', '--'];
  const counts = new Map<string, number>();
  const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

  async function one(index: number): Promise<void> {
    const kind = KINDS[index % KINDS.length]!;
    const ending = ENDINGS[Math.floor(random() * ENDINGS.length)]!;
    const delayMs = Math.floor(random() * 600);
    const body = ending === 'exits' ? 'sleep 0.2' : 'sleep 30';
    const tree = kind === 'sub-cgroups'
      ? ['sh', '-c', `sh -c '${moveIntoSubCgroup(location.mount.mountPoint, 'made/below')}; exec ${body}' & ${body} & exec ${body}`]
      : ['sh', '-c', `${body} & exec ${body}`];
    const command = kind === 'nested' ? [...leash, ...leash, ...tree]
      : kind === 'pid-namespace' ? ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc', ...leash, ...tree]
      : [...leash, ...tree];
    const child = spawnInCgroup(parent.directory, command, env);
    const signal = ending.startsWith('SIGKILL') ? 'SIGKILL' : 'SIGTERM';
    // In a pid namespace, the signal goes to the namespace's pid 1 (leash, or unshare's child before
    // its exec): unshare ignores SIGTERM while it waits, and a SIGKILL of unshare between its fork
    // and its child's PR_SET_PDEATHSIG (--kill-child) would leave that child running on.
    const childOfUnshare = () => Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]) || undefined;
    const send = async () => {
      if (kind !== 'pid-namespace') return signalProcess(child.pid!, signal);
      let inside: number | undefined;
      await waitUntil(() => child.exitCode !== null || (inside = childOfUnshare()) !== undefined, 10_000);
      if (inside !== undefined) signalProcess(inside, signal);
    };
    if (ending === 'SIGKILL at start') setTimeout(() => void send(), delayMs);
    else if (ending !== 'exits') {
      void waitUntil(() => /phase=running/.test(child.output()) || child.exitCode !== null, 15_000).then(() => setTimeout(() => void send(), delayMs / 2));
    }
    try {
      await exited(child, 20_000);
    } catch (error) {
      throw new Error(`run ${index} (${kind}, ${ending} after ${delayMs} ms): ${(error as Error).message}\n${child.output()}`);
    }
    count(`${kind}/${ending}`);
    if (ending !== 'exits' && !/containment: /.test(child.output())) count('signalled before its containment line');
    if (/containment: cgroup v2 \(.*leash-run-.*leash-run-/.test(child.output())) count('nested cgroups seen');
  }

  let next = 0;
  await Promise.all(Array.from({ length: AT_ONCE }, async () => {
    while (next < RUNS) await one(next++);
  }));
  // The guards of SIGKILLed leashes end their trees (grace 0.2 s) and remove their cgroups.
  assert.ok(await waitUntil(() => !cgroupPopulated(parent.directory), 20_000), `still running: ${readFileSync(join(parent.directory, 'cgroup.procs'), 'utf8')}`);
  const leftBeforeCleanUp = runCgroupsBelow(parent.directory).length;
  // A leash and its guard that died together (pid namespace torn down) leave their cgroup to the
  // clean-up of the next run in the same place.
  const last = spawnInCgroup(parent.directory, [...leash, 'true'], env);
  assert.equal((await exited(last)).code, 0, last.output());
  t.diagnostic(`${[...counts].sort().map(([key, value]) => `${key}: ${value}`).join(', ')}; run cgroups left for the clean-up: ${leftBeforeCleanUp}`);
  assert.equal([...counts].filter(([key]) => key.includes('/')).reduce((sum, [, value]) => sum + value, 0), RUNS);
  assert.deepEqual(runCgroupsBelow(parent.directory), [], 'leash cgroups left');
  assert.ok(await waitUntil(() => !cgroupPopulated(parent.directory), 5000), `processes left: ${readFileSync(join(parent.directory, 'cgroup.procs'), 'utf8')}`);
  assert.deepEqual(markedPids(mark), []);
});
