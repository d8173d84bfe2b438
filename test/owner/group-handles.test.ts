// The owner library's groups outlive their leaders (issue 28, case 2): held by the leader's pidfd
// (Linux >= 6.9) or by witnesses (LEASH_GROUP_HANDLES=off, older kernels), an owned group whose
// leader exited is still ended at the owner's death and by terminateOwned, is not forgotten by the
// prune while it has members, and a replacement supervisor gets its handle (never "whoever is in
// the group now"). Every case runs on both paths.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { exited, JsonLines, killMarked, newMark, startFixture, waitForGone } from '../helpers/processes.js';
import { GROUP_PATHS } from '../helpers/group-paths.js';

const skip = process.platform !== 'linux' ? 'Linux: group handles and witnesses' : false;

interface Held {
  pgid: number;
  member: number;
  supervisor: number;
  leaderGone: boolean;
  error?: string;
}

async function holdLeaderless(mark: string, mode: string, env: NodeJS.ProcessEnv) {
  const owner = startFixture('owned-leaderless.mjs', [mode], mark, { stdio: ['pipe', 'pipe', 'pipe'], extraEnv: { LEASH_GRACE_MS: '500', ...env } });
  const lines = new JsonLines(owner);
  const held = await lines.next<Held>(30_000);
  assert.equal(held.error, undefined);
  // The case really happened: the leader is gone, its member runs on in the group.
  assert.equal(held.leaderGone, true, 'the leader did not exit leaving its member in the group');
  return { owner, lines, held };
}

for (const path of GROUP_PATHS) {
  test(`[${path.name}] ownProcessGroup, the leader exits: the member dies at the owner's death`, { skip }, async () => {
    const mark = newMark();
    try {
      const { owner, held } = await holdLeaderless(mark, 'own', path.env);
      owner.stdin!.write('die\n');
      await exited(owner);
      assert.ok(await waitForGone([held.member], 10_000), 'the member survived the owner');
    } finally {
      await killMarked(mark);
    }
  });

  test(`[${path.name}] ownProcessGroup, the leader exits: terminateOwned ends the member`, { skip }, async () => {
    const mark = newMark();
    try {
      const { owner, lines, held } = await holdLeaderless(mark, 'own', path.env);
      owner.stdin!.write('terminate\n');
      const result = await lines.next<{ empty: boolean; escalated: boolean; memberAlive: boolean; warnings: string[] }>(15_000);
      assert.equal(result.memberAlive, false, 'the member survived terminateOwned');
      assert.equal(result.empty, true);
      assert.deepEqual(result.warnings.filter((warning) => warning.startsWith('LEASH_UNPROVEN_GROUP')), []);
      assert.equal(isProcessAlive(held.member), false);
    } finally {
      await killMarked(mark);
    }
  });

  test(`[${path.name}] ownProcessGroup, the leader exits: the prune keeps the group while its member lives`, { skip }, async () => {
    const mark = newMark();
    try {
      const { owner, lines, held } = await holdLeaderless(mark, 'own', path.env);
      owner.stdin!.write('prune\n');
      const result = await lines.next<{ owned: number[]; memberAlive: boolean; warnings: string[] }>(20_000);
      assert.equal(result.memberAlive, true);
      assert.deepEqual(result.owned, [held.pgid], 'the prune forgot a group that has a member');
      assert.deepEqual(result.warnings.filter((warning) => warning.startsWith('LEASH_UNPROVEN_GROUP')), []);
      owner.stdin!.write('empty\n');
      assert.equal((await lines.next<{ empty: boolean }>(10_000)).empty, false);
    } finally {
      await killMarked(mark);
    }
  });

  test(`[${path.name}] terminateOwned whose SIGTERM ends the leader while a member ignores it: escalates, resolves once the group is empty`, { skip }, async () => {
    const mark = newMark();
    try {
      // The leader here still lives (waiting for a line) when terminateOwned starts: the fixture's
      // `own-stubborn` mode lets the leader go first, so this test owns a live leader instead.
      const owner = startFixture('owned-stubborn.mjs', [], mark, { stdio: ['pipe', 'pipe', 'pipe'], extraEnv: path.env });
      const lines = new JsonLines(owner);
      const result = await lines.next<{ empty: boolean; escalated: boolean; member: number; leaderDiedOnTerm: boolean; error?: string }>(30_000);
      assert.equal(result.error, undefined);
      assert.equal(result.leaderDiedOnTerm, true, 'the leader did not die of the SIGTERM');
      assert.equal(result.escalated, true, 'no SIGKILL for the TERM-ignoring member');
      assert.equal(result.empty, true);
      assert.equal(isProcessAlive(result.member), false, 'the member survived');
    } finally {
      await killMarked(mark);
    }
  });

  test(`[${path.name}] spawnOwned whose leader exits leaving an \`env -i\` member: the member dies at the owner's death`, { skip }, async () => {
    const mark = newMark();
    try {
      const { owner, held } = await holdLeaderless(mark, 'spawn-env-i', path.env);
      owner.stdin!.write('die\n');
      await exited(owner);
      assert.ok(await waitForGone([held.member], 10_000), 'the env -i member survived the owner');
    } finally {
      await killMarked(mark);
    }
  });

  test(`[${path.name}] the supervisor dies after the leader exited: its replacement still ends the member at the owner's death`, { skip }, async () => {
    const mark = newMark();
    try {
      const { owner, lines, held } = await holdLeaderless(mark, 'own', path.env);
      owner.stdin!.write('kill-supervisor\n');
      const replaced = await lines.next<{ supervisor: number | null; pidfds: number }>(15_000);
      assert.ok(replaced.supervisor !== null && replaced.supervisor !== held.supervisor, 'no replacement supervisor');
      if (path.handles) assert.ok(replaced.pidfds >= 1, 'the replacement did not inherit the pidfd');
      owner.stdin!.write('die\n');
      await exited(owner);
      assert.ok(await waitForGone([held.member], 10_000), 'the member survived the owner');
    } finally {
      await killMarked(mark);
    }
  });
}
