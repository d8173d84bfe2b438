// The parent-death signal (sys/parent-death.ts): the supervisor is started through setpriv, so
// it hears of its owner's death when the owner's main thread exits, before EOF. Shown with a
// control pipe that has a second writer (a process holding the write end), where no EOF comes
// at all: only the signal can start the teardown. A stray signal while the owner lives, and an
// owner that leaves with exit code 0, start nothing before EOF.
import assert from 'node:assert/strict';
import { existsSync, readlinkSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { supervisorCommand } from '../../src/owner/supervisor-link.js';
import { PARENT_DEATH_SIGNAL } from '../../src/supervisor/protocol.js';
import { processIsEnding, readChildren } from '../../src/sys/procfs.js';
import { isProcessAlive } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, FIXTURES, JsonLines, killMarked, LIBRARY_ENTRY, markedEnv, newMark, waitForGone } from '../helpers/processes.js';

/**
 * A parent that never reaps: the owner, once dead, stays a zombie whose exit the supervisor can
 * read (a parent that reaps at once, as Node does, leaves it nothing to prove; EOF decides then).
 */
const NON_REAPING_PARENT = 'import os, sys, time\nif os.fork() == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\ntime.sleep(600)\n';
const hasPython = spawnSync('python3', ['-c', 'pass']).status === 0;
const armed = supervisorCommand().some((word) => word.endsWith('/setpriv'));
const skip = process.platform !== 'linux' ? 'Linux only' : armed ? false : 'no setpriv with --pdeathsig on this system';
const skipKill = skip || (hasPython ? false : 'needs python3 (a parent that does not reap the owner)');

interface Tree {
  owner: number;
  supervisor: number;
  group: number;
  holder: number;
  command: string[];
}

/**
 * A parent that never reaps: the owner, once dead, stays a zombie whose exit the supervisor can
 * read (a parent that reaps at once, as Node does, leaves it nothing to prove; EOF decides then).
 */

async function startOwner(mark: string, way: 'wait' | 'exit0' | 'line-then-die', holdChunkMs = 0) {
  const [command, ...args] = [process.execPath, `${FIXTURES}owner-second-writer.mjs`, way, String(holdChunkMs)];
  const owner = spawn(way === 'exit0' ? command : 'python3', way === 'exit0' ? args : ['-c', NON_REAPING_PARENT, command, ...args], {
    detached: true,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: markedEnv(mark, { LEASH_LIBRARY: LIBRARY_ENTRY }),
  });
  const tree = await new JsonLines(owner).next<Tree>(10_000);
  // The case is real: started through setpriv, and the holder has the owner's end of the control
  // socket pair as its fd 3 (that the supervisor then sees no EOF is shown by each test).
  assert.ok(tree.command[0]!.endsWith('/setpriv'), `started without setpriv: ${tree.command.join(' ')}`);
  assert.match(readlinkSync(`/proc/${tree.holder}/fd/3`), /^socket:/);
  // The registration was read: the supervisor starts its watchdog at the first one.
  assert.ok(await waitUntil(() => (readChildren(tree.supervisor) ?? []).length > 0, 5000), 'the supervisor did not take the registration');
  return { owner, tree };
}

/** The pipe still has a writer: no EOF can have reached the supervisor. */
function pipeStillHeld(tree: Tree): boolean {
  return isProcessAlive(tree.holder) && existsSync(`/proc/${tree.holder}/fd/3`);
}

test('owner SIGKILLed while another process holds the control pipe: the group is ended without EOF', { skip: skipKill }, async () => {
  const mark = newMark();
  try {
    const { tree } = await startOwner(mark, 'wait');
    process.kill(tree.owner, 'SIGKILL');
    assert.ok(await waitForGone([tree.group], 5000), 'the group outlived its owner');
    assert.ok(pipeStillHeld(tree), 'the pipe lost its second writer: EOF could have done it');
    assert.ok(isProcessAlive(tree.supervisor), 'the supervisor is gone');
    // Then EOF, once the last writer is gone: the supervisor ends.
    process.kill(tree.holder, 'SIGKILL');
    assert.ok(await waitForGone([tree.supervisor], 5000), 'the supervisor did not end at EOF');
  } finally {
    await killMarked(mark);
  }
});

test('no EOF, and the last line of the owner still being read when it died: the group is ended once the line is taken', { skip: skipKill }, async () => {
  const mark = newMark();
  const HOLD_MS = 300;
  try {
    const { owner, tree } = await startOwner(mark, 'line-then-die', HOLD_MS);
    owner.stdin!.write('go\n');
    // The case is real: the owner died while its line was held (well past the supervisor's first
    // looks, 1 ... 32 ms), and the pipe keeps a writer, so no EOF can come.
    const told = performance.now();
    assert.ok(await waitUntil(() => processIsEnding(tree.owner), 5000), 'the owner did not die');
    assert.ok(performance.now() - told < HOLD_MS / 2, 'the owner died after its line was taken');
    assert.ok(await waitForGone([tree.group], 5000), 'the group outlived its owner');
    assert.ok(performance.now() - told >= HOLD_MS * 0.9, 'the group ended before the held line was taken');
    assert.ok(pipeStillHeld(tree), 'the pipe lost its second writer: EOF could have done it');
  } finally {
    await killMarked(mark);
  }
});

test('a stray parent-death signal while the owner lives ends nothing', { skip: skipKill }, async () => {
  const mark = newMark();
  try {
    const { tree } = await startOwner(mark, 'wait');
    process.kill(tree.supervisor, PARENT_DEATH_SIGNAL);
    // The supervisor looks for up to ~63 ms; well past that, the group must still be there.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(isProcessAlive(tree.group), 'a stray signal ended the group');
    assert.ok(isProcessAlive(tree.supervisor), 'a stray signal ended the supervisor');
    // The same group does end when the owner really dies: the check above could fail.
    process.kill(tree.owner, 'SIGKILL');
    assert.ok(await waitForGone([tree.group], 5000), 'the group outlived its owner');
  } finally {
    await killMarked(mark);
  }
});

test('an owner that exits with code 0 leaves the decision to EOF', { skip }, async () => {
  const mark = newMark();
  try {
    const { owner, tree } = await startOwner(mark, 'exit0');
    owner.stdin!.write('x');
    assert.equal((await exited(owner)).code, 0);
    // Past the supervisor's last look (~63 ms): the group must still be there, the pipe still held.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(isProcessAlive(tree.group), 'ended before EOF although the owner exited with 0');
    assert.ok(pipeStillHeld(tree));
    process.kill(tree.holder, 'SIGKILL');
    assert.ok(await waitForGone([tree.group], 5000), 'EOF did not end the group');
  } finally {
    await killMarked(mark);
  }
});

test('an owner SIGKILLed right after `disown`: the line is read before the signal starts the teardown', { skip: skipKill }, async () => {
  const mark = newMark();
  const HOLD_MS = 1000;
  try {
    // Each chunk of the control pipe reaches the supervisor's loop HOLD_MS late, as on a busy
    // machine; the parent-death signal meanwhile comes at once.
    const owner = spawn('python3', ['-c', NON_REAPING_PARENT, process.execPath, `${FIXTURES}owner-disown-then-die.mjs`, String(HOLD_MS)], {
      detached: true,
      stdio: ['pipe', 'pipe', 'inherit'],
      env: markedEnv(mark, { LEASH_LIBRARY: LIBRARY_ENTRY }),
    });
    const tree = await new JsonLines(owner).next<Omit<Tree, 'holder'>>(10_000);
    assert.ok(tree.command[0]!.endsWith('/setpriv'), `started without setpriv: ${tree.command.join(' ')}`);
    assert.ok(await waitUntil(() => (readChildren(tree.supervisor) ?? []).length > 0, 5000), 'the supervisor did not take the registration');
    owner.stdin!.write('go\n');
    const told = performance.now();
    // The case is real: the owner is a zombie killed by a signal (what the supervisor proves before
    // an early teardown) well inside the hold, while the `disown` line is still unread.
    assert.ok(await waitUntil(() => processIsEnding(tree.owner), 5000), 'the owner did not die');
    assert.ok(performance.now() - told < HOLD_MS / 2, `the owner took ${Math.round(performance.now() - told)} ms to die: the line may have been read already`);
    assert.ok(isProcessAlive(tree.supervisor) && isProcessAlive(tree.group));
    // The supervisor ends at EOF, after the line.
    assert.ok(await waitForGone([tree.supervisor], 10_000), 'the supervisor did not end');
    assert.ok(isProcessAlive(tree.group), 'the disowned group was ended: the teardown ran before the owner\'s last line');
  } finally {
    await killMarked(mark);
  }
});
