// A child that leaves its group AND scrubs its environment (`setsid env -i ...`, Python's
// Popen(env={...}, start_new_session=True)) is in no registered group and carries no owner token.
// What still ties it to the owner is its parent chain: at the owner's death the supervisor freezes
// the registered groups, finds every process outside them that descends from a member, and takes
// those down with the groups. Proven here for a SIGKILLed owner; the limit (an escapee whose
// parent chain was already broken when the owner died) is stated in docs/owner.md ("Escapees").
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readCommandLine, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { LIBRARY_ENTRY, exited, killMarked, markedEnv, markedPidRunning, markedPids, newMark, waitForGone } from '../helpers/processes.js';

function ownerOf(mark: string, script: string) {
  return spawn(process.execPath, ['--input-type=module', '-e', [
    `import { spawnOwned } from ${JSON.stringify(LIBRARY_ENTRY)};`,
    `spawnOwned('sh', ['-c', ${JSON.stringify(script)}], { stdio: 'ignore' });`,
    'setInterval(() => {}, 1000);',
  ].join('\n')], { stdio: 'ignore', env: markedEnv(mark, { LEASH_GRACE_MS: '500' }) });
}

const byCommand = (mark: string, command: string) => () =>
  markedPidRunning(mark, command);

test('an owner SIGKILLed: a setsid escapee with a scrubbed environment, and its own child, are taken down too', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  // The escapee keeps the mark (so the test can find and clean it) and nothing else: no token.
  const script = `setsid env -i LEASH_TEST_MARK=${mark} sh -c 'sleep 1012 & exec sleep 1011' & exec sleep 1010`;
  const owner = ownerOf(mark, script);
  const escapee = byCommand(mark, 'sleep 1011');
  const grandchild = byCommand(mark, 'sleep 1012');
  const member = byCommand(mark, 'sleep 1010');
  assert.ok(await waitUntil(() => escapee() !== undefined && grandchild() !== undefined && member() !== undefined, 10_000), 'no escapee');
  const pids = [escapee()!, grandchild()!];
  const memberStat = readProcStat(member()!)!;
  pids.push(memberStat.pid); // by number now: once it is gone, member() finds nothing
  for (const pid of pids.slice(0, 2)) {
    const stat = readProcStat(pid)!;
    assert.notEqual(stat.pgid, memberStat.pgid, 'the escapee is still in the owned group');
    assert.notEqual(stat.sid, memberStat.sid, 'the escapee is still in the owned session');
  }
  signalProcess(owner.pid as number, 'SIGKILL');
  await exited(owner);
  assert.ok(await waitForGone(pids, 10_000), `outlived their owner: ${pids.filter((pid) => isProcessAlive(pid)).join(' ')}`);
});

test('the same when the group leader is gone: the escapee of a member that outlived its leader', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  // The leader (sh) exits at once; a member subshell starts the escapee and becomes sleep 1014.
  const script = `(setsid env -i LEASH_TEST_MARK=${mark} sleep 1015 & exec sleep 1014) & exit 0`;
  const owner = ownerOf(mark, script);
  const escapee = byCommand(mark, 'sleep 1015');
  const member = byCommand(mark, 'sleep 1014');
  assert.ok(await waitUntil(() => escapee() !== undefined && member() !== undefined, 10_000), 'no escapee');
  const memberStat = readProcStat(member()!)!;
  assert.ok(!isProcessAlive(memberStat.pgid), 'the group leader is still running');
  assert.equal(readProcStat(escapee()!)?.ppid, memberStat.pid, 'the escapee is not the member\'s child');
  const pids = [escapee()!, member()!];
  signalProcess(owner.pid as number, 'SIGKILL');
  await exited(owner);
  assert.ok(await waitForGone(pids, 10_000), `outlived their owner: ${pids.filter((pid) => isProcessAlive(pid)).join(' ')}`);
});

test('an owner SIGKILLed: a stopped member with a TERM handler runs it (thawed), not just SIGKILLed after the grace', async (t) => {
  // The teardown freezes groups with SIGSTOP and thaws them with SIGCONT after SIGTERM: a member
  // that was stopped before is thawed too, so its TERM handler runs within the grace.
  const mark = newMark();
  const dir = mkdtempSync(join(tmpdir(), 'leash-thaw-'));
  const note = join(dir, 'termed');
  t.after(async () => {
    await killMarked(mark);
    rmSync(dir, { recursive: true, force: true });
  });
  const owner = ownerOf(mark, `trap 'echo termed > ${note}; exit 0' TERM; sleep 1013 & wait; wait`);
  const member = () => markedPids(mark).find((pid) => pid !== owner.pid && (readCommandLine(pid) ?? [])[0] === 'sh');
  assert.ok(await waitUntil(() => member() !== undefined && byCommand(mark, 'sleep 1013')() !== undefined, 10_000), 'no member');
  const shell = member()!;
  signalProcess(shell, 'SIGSTOP');
  assert.ok(await waitUntil(() => readProcStat(shell)?.state === 'T', 5000), 'the member did not stop');
  signalProcess(owner.pid as number, 'SIGKILL');
  await exited(owner);
  assert.ok(await waitForGone([shell], 10_000), 'the stopped member outlived its owner');
  let text = '';
  try {
    text = readFileSync(note, 'utf8');
  } catch {
    // never written: the handler never ran
  }
  assert.equal(text.trim(), 'termed', 'the stopped member was killed without running its TERM handler');
});
