// The owner library in this very process: spawnOwned, terminateOwned, ownProcessGroup,
// releaseProcessGroup, ownedProcessGroups, and the supervisor's lifecycle.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, test } from 'node:test';
import {
  ownedProcessGroups,
  ownProcessGroup,
  releaseProcessGroup,
  spawnOwned,
  supervisorPid,
  terminateOwned,
} from '../../src/index.js';
import { isProcessAlive, ownProcessGroupId, signalGroup } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, JsonLines, killMarked, markedEnv, newMark, startFixture, waitForGone } from '../helpers/processes.js';
import { readPids } from '../helpers/groups.js';
import { testProcStat } from '../helpers/real-proc.js';

const mark = newMark();
after(() => killMarked(mark));

const options = () => ({ stdio: ['ignore', 'pipe', 'ignore'] as ['ignore', 'pipe', 'ignore'], env: markedEnv(mark) });

test('spawnOwned: a ChildProcess leading its own group, registered before it returns', async () => {
  const child = spawnOwned('sleep', ['1000'], options());
  assert.ok(child.pid);
  assert.deepEqual(ownedProcessGroups().includes(child.pid!), true);
  const stat = testProcStat(child.pid!);
  assert.equal(stat?.pgid, child.pid, 'the child leads its group');
  assert.equal(stat?.sid, child.pid, 'and its session');
  assert.ok(supervisorPid(), 'a supervisor runs');
  const result = await terminateOwned(child, { graceMs: 1000 });
  assert.deepEqual(result, { pgid: child.pid, owned: true, escalated: false, empty: true });
  assert.equal(ownedProcessGroups().includes(child.pid!), false);
});

test('spawnOwned accepts the (command, options) form and passes the token to the child', async () => {
  const quick = spawnOwned('true', options());
  assert.equal((await exited(quick)).code, 0);
  const printer = spawnOwned('sh', ['-c', 'echo "$LEASH_OWNER_TOKEN"'], options());
  let out = '';
  printer.stdout!.on('data', (chunk) => { out += chunk; });
  await new Promise((resolve) => printer.stdout!.on('end', resolve));
  assert.match(out.trim(), /^[0-9a-f]{24}$/);
});

test('terminateOwned escalates to SIGKILL for a group that ignores SIGTERM, and waits for all of it', async () => {
  const child = spawnOwned('sh', ['-c', `trap '' TERM; sleep 1000 & echo $!; wait`], options());
  const [grandchild] = await readPids(child, 1);
  const began = Date.now();
  const result = await terminateOwned(child, { graceMs: 300 });
  assert.equal(result.escalated, true);
  assert.equal(result.empty, true);
  assert.ok(Date.now() - began >= 300);
  assert.equal(isProcessAlive(grandchild!), false);
  assert.equal(isProcessAlive(child.pid!), false);
});

test('a group whose leader exits stays owned while members live, and is forgotten once empty', async () => {
  const child = spawnOwned('sh', ['-c', 'sleep 1000 & echo $!'], options());
  const [grandchild] = await readPids(child, 1);
  await exited(child);
  assert.ok(ownedProcessGroups().includes(child.pid!), 'members remain: still owned');
  const result = await terminateOwned(child.pid!, { graceMs: 1000 });
  assert.equal(result.empty, true);
  assert.equal(isProcessAlive(grandchild!), false);
  assert.equal(ownedProcessGroups().includes(child.pid!), false);

  const quick = spawnOwned('true', [], options());
  await exited(quick);
  await waitUntil(() => !ownedProcessGroups().includes(quick.pid!), 2000);
  assert.equal(ownedProcessGroups().includes(quick.pid!), false, 'an exited group is forgotten');
});

test('ownProcessGroup guards a group spawned elsewhere; releaseProcessGroup lets it go', async () => {
  // detached-spawn: ok — the test hands this group to ownProcessGroup, the documented recipe.
  const other = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore', env: markedEnv(mark) });
  assert.equal(ownProcessGroup(other.pid!), true);
  assert.ok(ownedProcessGroups().includes(other.pid!));
  assert.equal(releaseProcessGroup(other.pid!), true);
  assert.equal(releaseProcessGroup(other.pid!), false);
  assert.equal(ownedProcessGroups().includes(other.pid!), false);
  const result = await terminateOwned(other.pid!);
  assert.equal(result.owned, false, 'a released group is not ours to terminate');
  assert.ok(isProcessAlive(other.pid!));
  other.kill('SIGKILL');
  await exited(other);
});

test('ownProcessGroup refuses unsafe or missing groups without throwing, and rejects non-numbers', () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  try {
    assert.equal(ownProcessGroup(1), false);
    assert.equal(ownProcessGroup(0), false);
    assert.equal(ownProcessGroup(ownProcessGroupId()), false);
    // A child that does not lead a group: its pid names no group.
    const inGroup = spawn('sleep', ['1000'], { stdio: 'ignore', env: markedEnv(mark) });
    assert.equal(signalGroup(inGroup.pid!, 0), 'gone');
    assert.equal(ownProcessGroup(inGroup.pid!), false);
    inGroup.kill('SIGKILL');
    assert.throws(() => ownProcessGroup(Number.NaN), TypeError);
  } finally {
    process.off('warning', onWarning);
  }
  assert.equal(ownedProcessGroups().length, 0);
});

test('the supervisor is released when the set empties, and started again on the next spawn', async () => {
  const child = spawnOwned('sleep', ['1000'], options());
  const first = supervisorPid();
  assert.ok(first);
  await terminateOwned(child, { graceMs: 1000 });
  assert.equal(ownedProcessGroups().length, 0);
  assert.ok(await waitForGone([first!], 5000), 'the released supervisor exited');
  assert.equal(supervisorPid(), undefined);
  const again = spawnOwned('sleep', ['1000'], options());
  assert.ok(supervisorPid() && supervisorPid() !== first);
  await terminateOwned(again, { graceMs: 1000 });
});

test('a supervisor killed mid-life is replaced and the whole set replayed', async () => {
  const owner = startFixture('supervisor-replaced.mjs', [], mark, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = new JsonLines(owner);
  const first = await lines.next<{ supervisor: number; groups: number[] }>();
  owner.stdin!.write('kill\n');
  const replaced = await lines.next<{ supervisor: number; groups: number[] }>();
  assert.ok(await waitForGone([first.supervisor], 5000));
  assert.ok(replaced.supervisor && replaced.supervisor !== first.supervisor, 'replaced at once, not only on the next registration');
  owner.stdin!.write('spawn\n');
  const second = await lines.next<{ supervisor: number; groups: number[] }>();
  assert.ok(second.supervisor && second.supervisor !== first.supervisor, 'a new supervisor');
  assert.equal(second.groups.length, 2);
  assert.ok(second.groups.includes(first.groups[0]!), 'the first group is still owned');
  // The replacement must know both groups: kill the owner and both must go.
  owner.kill('SIGKILL');
  await exited(owner);
  assert.ok(await waitForGone([...second.groups, second.supervisor], 10_000), 'a group survived the owner');
});

test('a released group outlives its owner: neither the groups nor the token sweep touch it', async () => {
  const owner = startFixture('release-one.mjs', [], mark);
  const lines = new JsonLines(owner);
  const { kept, released } = await lines.next<{ kept: number; released: number[] }>();
  owner.kill('SIGKILL');
  await exited(owner);
  assert.ok(await waitForGone([kept], 10_000), 'the owned group went with its owner');
  for (const pid of released) assert.equal(isProcessAlive(pid), true, `the released group ${pid} was signalled`);
});

test('a group that empties with no event reaching us is forgotten, and the supervisor released', async () => {
  // The leader exits at once; its member lives on, then exits as an orphan (maybe a zombie for
  // a while, until init reaps it). Nothing tells the owner: only the slow prune can notice.
  const child = spawnOwned('sh', ['-c', 'sleep 0.3 & echo $!'], options());
  const [member] = await readPids(child, 1);
  await exited(child);
  const supervisor = supervisorPid();
  assert.ok(supervisor, 'the group is still owned while its member lives');
  assert.ok(await waitForGone([member!], 5000));
  assert.ok(await waitUntil(() => supervisorPid() === undefined, 12_000), 'the emptied group was never forgotten');
  assert.ok(await waitForGone([supervisor], 5000));
});

test('spawnOwned throws what spawn throws for bad options, and leaves no supervisor behind', () => {
  assert.equal(ownedProcessGroups().length, 0);
  assert.throws(() => spawnOwned('sleep', ['1'], { stdio: 'bogus' as never }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.equal(supervisorPid(), undefined);
});
