// The owner-death matrix: every way an owner can die, against every kind of child.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { hasProcfs } from '../../src/sys/procfs.js';
import { exited, JsonLines, killMarked, markedPids, newMark, startFixture, waitForGone } from '../helpers/processes.js';

// Kind -> pids the fixture reports for it.
const ALL_KINDS: Record<string, number> = { plain: 1, 'term-ignoring': 1, grandchildren: 3, wrapper: 2, 'setsid-escapee': 2, 'orphaned-escapee': 1 };
// Without procfs (macOS) no one can read a process's environment: an escapee that left the group
// and the session carries the token unseen and outlives the owner (docs/embedding.md, macOS).
const KINDS = Object.keys(ALL_KINDS).filter((kind) => hasProcfs() || !kind.includes('escapee'));
if (!hasProcfs()) console.log('# owner-death: no procfs: the setsid escapees are left out (only an environment scan finds them)');
const PIDS = KINDS.reduce((sum, kind) => sum + ALL_KINDS[kind]!, 0);

interface Tree {
  owner: number;
  supervisor: number;
  pids: number[];
}

const deaths: Array<{ way: string; fixtureWay: string; signal?: NodeJS.Signals; expect: (r: { code: number | null; signal: string | null }) => boolean }> = [
  { way: 'SIGKILL', fixtureWay: 'wait', signal: 'SIGKILL', expect: (r) => r.signal === 'SIGKILL' },
  { way: 'SIGTERM', fixtureWay: 'wait', signal: 'SIGTERM', expect: (r) => r.signal === 'SIGTERM' },
  { way: 'SIGINT', fixtureWay: 'wait', signal: 'SIGINT', expect: (r) => r.signal === 'SIGINT' },
  { way: 'abort', fixtureWay: 'abort', expect: (r) => r.signal === 'SIGABRT' },
  { way: 'segfault', fixtureWay: 'segfault', expect: (r) => r.signal === 'SIGSEGV' },
  { way: 'uncaught exception', fixtureWay: 'exception', expect: (r) => r.code === 1 },
  { way: 'process.exit', fixtureWay: 'exit', expect: (r) => r.code === 3 },
  { way: 'normal end of the event loop', fixtureWay: 'end', expect: (r) => r.code === 0 },
];

for (const death of deaths) {
  test(`owner dies by ${death.way}: no child of any kind survives`, async () => {
    const mark = newMark();
    try {
      const owner = startFixture('owner.mjs', [KINDS.join(','), death.fixtureWay], mark, {
        extraEnv: { LEASH_GRACE_MS: '500' },
      });
      const lines = new JsonLines(owner);
      const tree = await lines.next<Tree>();
      assert.equal(tree.pids.length, PIDS);
      assert.ok(Number.isInteger(tree.supervisor));
      if (death.signal) {
        for (const pid of tree.pids) assert.ok(isProcessAlive(pid), `pid ${pid} was not running`);
        owner.kill(death.signal);
      }
      const result = await exited(owner);
      assert.ok(death.expect(result), `owner ended ${JSON.stringify(result)}`);
      const gone = await waitForGone([...tree.pids, tree.supervisor], 10_000);
      const left = tree.pids.filter((pid) => isProcessAlive(pid));
      assert.ok(gone, `survivors: ${left.join(' ')}; supervisor alive: ${isProcessAlive(tree.supervisor)}`);
      assert.deepEqual(markedPids(mark), [], 'a marked process survived');
    } finally {
      await killMarked(mark);
    }
  });
}

async function runSpawnGapOwner(mark: string, mode: string[]): Promise<number> {
  const owner = startFixture('spawn-gap.mjs', mode, mark);
  let out = '';
  owner.stdout!.setEncoding('utf8');
  owner.stdout!.on('data', (chunk: string) => { out += chunk; });
  assert.equal((await exited(owner)).signal, 'SIGKILL');
  const pid = Number(out.trim());
  assert.ok(Number.isInteger(pid) && pid > 1, `no child pid printed: '${out}'`);
  return pid;
}

test('the spawn gap: an owner SIGKILLed right after spawnOwned returns leaks nothing (50 times)', async () => {
  const mark = newMark();
  try {
    const children: number[] = [];
    for (let batch = 0; batch < 10; batch += 1) {
      children.push(...(await Promise.all(Array.from({ length: 5 }, () => runSpawnGapOwner(mark, [])))));
    }
    assert.equal(new Set(children).size, 50);
    const settled = await waitForGone(children, 10_000);
    assert.ok(settled, `leaked: ${children.filter((pid) => isProcessAlive(pid)).join(' ')}`);
    assert.ok(await waitForGone(markedPids(mark), 10_000), 'a supervisor or child is still running');
  } finally {
    await killMarked(mark);
  }
});

test('control: the same owner with plain child_process.spawn leaks its child', async () => {
  const mark = newMark();
  try {
    const child = await runSpawnGapOwner(mark, ['plain']);
    assert.equal(await waitForGone([child], 500), false, 'the plain child should have been orphaned');
  } finally {
    await killMarked(mark);
  }
});

test('an escapee whose group is gone keeps the supervisor, and dies with the owner', { skip: !hasProcfs() && 'needs /proc: only an environment scan finds an escapee' }, async () => {
  const mark = newMark();
  try {
    const owner = startFixture('owner.mjs', ['orphaned-escapee', 'until-unowned'], mark);
    const lines = new JsonLines(owner);
    const tree = await lines.next<Tree>();
    const after = await lines.next<{ owned: number; supervisor: number | null }>();
    assert.equal(after.supervisor, tree.supervisor, 'the supervisor was released while an escapee lives');
    assert.ok(isProcessAlive(tree.pids[0]!));
    owner.kill('SIGKILL');
    await exited(owner);
    assert.ok(await waitForGone([...tree.pids, tree.supervisor], 10_000), 'the escapee outlived its owner');
  } finally {
    await killMarked(mark);
  }
});
