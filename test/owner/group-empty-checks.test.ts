// Whether an owned group is empty, asked often or for many groups: a group whose leader runs is
// settled by a probe and one stat read (no look through /proc: one per call made checking N
// groups cost N scans of the whole process table); a group that outlived its leader is settled
// by a sliced scan, one for every check asked in the same turn.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ownedGroupIsEmpty, ownedGroupIsEmptySoon, spawnOwned, terminateOwned, waitForOwnedGroupEmpty } from '../../src/owner/owned-groups.js';
import { signalProcess } from '../../src/sys/processes.js';
import { readPids } from '../helpers/groups.js';
import { countProcListings } from '../helpers/proc-listings.js';
import { exited, killMarked, markedEnv, newMark, waitForGone } from '../helpers/processes.js';

const mark = newMark();
after(() => killMarked(mark));
const options = () => ({ stdio: ['ignore', 'pipe', 'ignore'] as ['ignore', 'pipe', 'ignore'], env: markedEnv(mark) });

test('checking twenty groups whose leaders run lists /proc not once', async () => {
  const children = Array.from({ length: 20 }, () => spawnOwned('sleep', ['1000'], options()));
  const listings = countProcListings();
  let empties: boolean[];
  let soon: boolean[];
  try {
    empties = children.map((child) => ownedGroupIsEmpty(child.pid!));
    soon = await Promise.all(children.map((child) => ownedGroupIsEmptySoon(child.pid!)));
  } finally {
    listings.stop();
  }
  assert.deepEqual(empties, children.map(() => false));
  assert.deepEqual(soon, children.map(() => false));
  assert.equal(listings.count(), 0, `/proc was listed ${listings.count()} times`);
  await Promise.all(children.map((child) => terminateOwned(child, { graceMs: 1000 })));
  assert.deepEqual(children.map((child) => ownedGroupIsEmpty(child.pid!)), children.map(() => true));
});

test('groups that outlived their leaders: one shared scan answers every check of the turn', async () => {
  // The wrapper prints the pid of the sleep it leaves behind in its group, then exits.
  const wrappers = Array.from({ length: 6 }, () => spawnOwned('sh', ['-c', 'sleep 1000 & echo $!'], options()));
  const members = await Promise.all(wrappers.map(async (wrapper) => (await readPids(wrapper, 1))[0]!));
  await Promise.all(wrappers.map((wrapper) => exited(wrapper)));
  const listings = countProcListings();
  let soon: boolean[];
  try {
    soon = await Promise.all(wrappers.map((wrapper) => ownedGroupIsEmptySoon(wrapper.pid!)));
  } finally {
    listings.stop();
  }
  assert.deepEqual(soon, wrappers.map(() => false), 'each group still has its sleep');
  // One scan for the six checks; the owner's 5 s prune tick may add its own meanwhile.
  assert.ok(listings.count() >= 1 && listings.count() <= 2, `the six checks listed /proc ${listings.count()} times`);
  assert.equal(ownedGroupIsEmpty(wrappers[0]!.pid!), false);

  signalProcess(members[0]!, 'SIGKILL');
  assert.ok(await waitForGone([members[0]!], 5000));
  assert.equal(await ownedGroupIsEmptySoon(wrappers[0]!.pid!), true, 'a group with only its dead member is empty');
  assert.equal(await waitForOwnedGroupEmpty(wrappers[1]!.pid!, 100), false, 'a live member outlasts a short wait');
  await Promise.all(wrappers.map((wrapper) => terminateOwned(wrapper.pid!, { graceMs: 1000 })));
  assert.deepEqual(await Promise.all(wrappers.map((wrapper) => ownedGroupIsEmptySoon(wrapper.pid!))), wrappers.map(() => true));
});
