// GroupHandle (src/sys/group-handle.ts) on real processes, on both paths: a group whose leader
// exited and was reaped is still reached through its handle or a witness, and reads as empty
// once its last member is gone.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, test } from 'node:test';
import { GroupHandle, groupHandlesAvailable, isPidfdOf } from '../../src/sys/group-handle.js';
import { loadNative } from '../../src/sys/native.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { isProcessAlive } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, killMarked, markedEnv, newMark, waitForGone } from '../helpers/processes.js';
import { GROUP_PATHS } from '../helpers/group-paths.js';

const linux = process.platform === 'linux';
const mark = newMark();
after(() => killMarked(mark));

/** A leader that forks `sleep` into its group and waits for a line. */
async function leaderWithMember(): Promise<{ leader: ChildProcess & { pid: number }; member: number }> {
  const leader = spawn('sh', ['-c', 'sleep 1000 & echo $!; read -r _'], { detached: true, stdio: ['pipe', 'pipe', 'ignore'], env: markedEnv(mark) }) as ChildProcess & { pid: number };
  let text = '';
  leader.stdout!.setEncoding('utf8');
  leader.stdout!.on('data', (chunk: string) => (text += chunk));
  assert.ok(await waitUntil(() => text.includes('\n'), 5000), 'no member');
  return { leader, member: Number(text.trim()) };
}

for (const path of GROUP_PATHS) {
  test(`[${path.name}] the group outlives its reaped leader: proven, signalled, then empty`, { skip: !linux }, async () => {
    const saved = process.env.LEASH_GROUP_HANDLES;
    if (path.env.LEASH_GROUP_HANDLES) process.env.LEASH_GROUP_HANDLES = path.env.LEASH_GROUP_HANDLES;
    else delete process.env.LEASH_GROUP_HANDLES;
    try {
      if (path.handles) assert.ok(await loadNative(), 'no native calls');
      const { leader, member } = await leaderWithMember();
      const handle = GroupHandle.take(leader.pid, readProcStat(leader.pid)!.startTime);
      try {
        if (path.handles) {
          assert.equal(groupHandlesAvailable(), true);
          assert.ok(handle.descriptor !== undefined && isPidfdOf(handle.descriptor, leader.pid), 'no pidfd of the leader');
          assert.equal(handle.prove(), 'handle');
        } else {
          assert.equal(handle.descriptor, undefined);
          assert.deepEqual(handle.witnesses.map((witness) => witness.pid), [member], 'the member is not a witness');
          assert.equal(handle.prove(), 'leader');
        }
        leader.stdin!.end('\n');
        await exited(leader);
        // The case: the leader is reaped, its member runs on in the group.
        assert.equal(readProcStat(leader.pid), undefined);
        assert.equal(readProcStat(member)?.pgid, leader.pid);
        assert.equal(handle.prove(), path.handles ? 'handle' : 'witness');
        assert.equal(handle.isEmpty(), false);
        assert.equal(handle.signal('SIGTERM'), 'sent');
        assert.ok(await waitForGone([member], 5000), 'the member survived');
        assert.equal(isProcessAlive(member), false);
        assert.ok(await waitUntil(() => handle.isEmpty() === true, 5000), 'the group never read as empty');
      } finally {
        handle.close();
      }
    } finally {
      if (saved === undefined) delete process.env.LEASH_GROUP_HANDLES;
      else process.env.LEASH_GROUP_HANDLES = saved;
    }
  });
}

test('a witness that left the group proves nothing: the group reads unproven, and is not signalled', { skip: !linux }, async () => {
  const { leader } = await leaderWithMember();
  const handle = GroupHandle.fromWitnesses(leader.pid, readProcStat(leader.pid)!.startTime, [{ pid: process.pid, startTime: readProcStat(process.pid)!.startTime }]);
  leader.stdin!.end('\n');
  await exited(leader);
  // This test process is no member of that group: its "witness" is refused, so only the member's group remains, unproven.
  assert.equal(handle.prove(), 'unproven');
  assert.equal(handle.signal('SIGTERM'), 'unproven');
  assert.equal(handle.isEmpty(), 'unproven');
});
