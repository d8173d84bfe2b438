// `leash run` must never block on its stderr. With a blocking write, when the reader
// of that pipe stops reading (an MCP client that pipes the server's stderr and never drains it),
// the first phase line after the pipe fills blocks leash run's only thread for good: the grace
// timer never fires, SIGKILL is never sent, a TERM-ignoring tree lives on and leash run hangs.
// A real pipe matters: a shell pipeline or Python's subprocess.PIPE gives one, and Node writes to
// a pipe synchronously (Node's own spawn gives a socketpair, written asynchronously: no hang).
// Fails with writes through process.stderr: 10 s after SIGTERM with --grace 1, the tree and leash run are still there.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { liveDescendantsOf, markedScratch } from '../helpers/leash-run.js';
import { CLI_ENTRY, markedEnv, waitForGone } from '../helpers/processes.js';

test('a stderr reader that stops reading never stops leash run from taking its tree down', async (t) => {
  const { mark, dir } = markedScratch(t);
  // leash's stderr: a FIFO that nobody reads (held open read-write, so it never breaks).
  const fifo = join(dir, 'stderr');
  execFileSync('mkfifo', [fifo]);
  const fd = openSync(fifo, constants.O_RDWR);
  t.after(() => closeSync(fd));
  // The runner fills the pipe (1 MB, far beyond its 64 KB), and ignores TERM.
  const leash = spawn(process.execPath, [CLI_ENTRY, 'run', '--grace', '1', '--', 'sh', '-c', 'trap "" TERM; head -c 1000000 /dev/zero >&2; sleep 1000'], {
    stdio: ['ignore', 'ignore', fd],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  const leashPid = leash.pid as number;
  assert.ok(await waitUntil(() => liveDescendantsOf(leashPid).length >= 2, 10_000), 'the tree never started');
  const tree = liveDescendantsOf(leashPid);
  signalProcess(leashPid, 'SIGTERM');
  // SIGTERM (ignored), the 1 s grace, SIGKILL: 10 s is generous.
  const gone = await waitForGone(tree, 10_000);
  assert.ok(gone, `still running 10 s after SIGTERM with --grace 1: ${tree.filter((pid) => isProcessAlive(pid)).join(' ')}`);
  assert.ok(await waitUntil(() => !isProcessAlive(leashPid), 5000), 'leash run itself is hung');
});
