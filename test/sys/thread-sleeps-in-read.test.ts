// threadSleepsInRead is the supervisor's proof that every line its owner wrote has been taken: a
// thread of the pool asleep in read() on the control descriptor, nothing to read. It must hold
// while a read waits, and not hold for a reader that a write has woken. Shown with a FIFO this
// process reads on the thread pool and writes itself. (The narrowest case, a reader woken so
// recently that it is still TASK_WAKING, whose syscall line still names the read, lasts
// microseconds: a C probe saw it in 12-63 of 10,000 looks made at once after the write; this
// test's looks come tens of microseconds later and do not reach it. The state check that closes
// it is in the function.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, read, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasProcfs, threadSleepsInRead } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';

const skip = !hasProcfs() ? 'threads are read from /proc' : process.arch !== 'x64' && process.arch !== 'arm64' ? 'read(2) numbers are checked on x64 and arm64 here' : false;

test('a reader asleep in read() is proven; one that a write has just woken never is', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'leash-read-'));
  const fifo = join(dir, 'fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo failed');
  // O_RDWR: the open does not wait for a writer, and the FIFO never reads EOF.
  const reader = openSync(fifo, constants.O_RDWR);
  const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  t.after(() => {
    closeSync(writer);
    closeSync(reader);
    rmSync(dir, { recursive: true, force: true });
  });
  const buffer = Buffer.alloc(16);
  const rounds = 1500;
  let falseProofs = 0;
  for (let round = 0; round < rounds; round += 1) {
    const done = new Promise<number>((resolve, reject) => read(reader, buffer, 0, buffer.length, null, (error, bytes) => (error ? reject(error) : resolve(bytes))));
    // The case is real: the read is in flight and proven asleep before the byte goes in.
    assert.ok(await waitUntil(() => threadSleepsInRead(reader), 5000), `round ${round}: the waiting reader was never proven asleep`);
    writeSync(writer, 'x');
    if (threadSleepsInRead(reader)) falseProofs += 1;
    assert.equal(await done, 1);
  }
  assert.equal(falseProofs, 0, `${falseProofs} of ${rounds} looks right after a write still proved the reader asleep`);
  // Nothing is read now: no thread sleeps in read() on it.
  assert.equal(threadSleepsInRead(reader), false);
});
