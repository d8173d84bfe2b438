// Under Wine, with the Windows node: what only leash's Job Object does. libuv already ends a plain
// non-detached child with its owner, so each tree here is one libuv leaves behind (a detached child,
// a grandchild through cmd.exe, one by raw CreateProcessW), and each case has its control: the same
// tree spawned with Node's spawn outlives the owner.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import {
  childPids,
  killFromLinux,
  killMarked,
  ownerLinuxPid,
  startOwner,
  waitForChildren,
  waitUntil,
  type OwnerRun,
} from './helpers.js';

const runs: OwnerRun[] = [];
after(async () => {
  for (const run of runs) await killMarked(run.mark);
});

/** The processes each kind puts in the tree: detached 1, cmd 2 (cmd.exe and node), raw 2. */
const SIZE: Record<string, number> = { detached: 1, cmd: 2, raw: 2, 'ctrl-ignoring': 1 };
/** Those of them libuv's own job does not end (all but cmd.exe itself). */
const SURVIVORS: Record<string, number> = { detached: 1, cmd: 1, raw: 1, 'ctrl-ignoring': 1 };

async function ownerWithTree(kinds: string, way: string, mode: 'leash' | 'plain'): Promise<OwnerRun> {
  const run = startOwner(kinds, way, mode);
  runs.push(run);
  const size = kinds.split(',').reduce((sum, kind) => sum + (SIZE[kind] ?? 0), 0);
  assert.ok(await waitForChildren(run, size), `the tree did not start: ${childPids(run).length}/${size}\n${run.output()}`);
  return run;
}

async function endOwner(run: OwnerRun, way: string): Promise<void> {
  const exited = once(run.owner, 'exit');
  if (way === 'kill') {
    const pid = ownerLinuxPid(run);
    assert.ok(pid, 'the owner is not visible from Linux');
    assert.ok(await killFromLinux([pid]), 'kill -9 from Linux did not end the owner');
  } else {
    writeFileSync(run.go, '');
  }
  await exited;
}

const ways = [
  { way: 'kill', fixtureWay: 'wait', what: 'killed from Linux (kill -9)' },
  { way: 'exit', fixtureWay: 'exit', what: 'exiting normally' },
  { way: 'throw', fixtureWay: 'throw', what: 'throwing' },
];

for (const kinds of ['detached,cmd,ctrl-ignoring', 'raw']) {
  describe(`owner with ${kinds}`, () => {
    for (const { way, fixtureWay, what } of ways) {
      test(`spawnOwned: the whole tree ends with the owner ${what}`, async () => {
        const run = await ownerWithTree(kinds, fixtureWay, 'leash');
        await endOwner(run, way);
        assert.ok(await waitUntil(() => childPids(run).length === 0, 10_000), `left running: ${childPids(run).join(' ')}`);
      });
    }

    test('control: with Node spawn the same tree outlives the owner killed from Linux', async () => {
      const run = await ownerWithTree(kinds, 'wait', 'plain');
      await endOwner(run, 'kill');
      const expected = kinds.split(',').reduce((sum, kind) => sum + (SURVIVORS[kind] ?? 0), 0);
      // libuv's job ends cmd.exe; give it time, then the rest must still run.
      await waitUntil(() => childPids(run).length <= expected, 5000);
      assert.ok(!(await waitUntil(() => childPids(run).length < expected, 1500)), 'the control tree died: the test proves nothing');
      assert.equal(childPids(run).length, expected);
      await killMarked(run.mark);
    });
  });
}
