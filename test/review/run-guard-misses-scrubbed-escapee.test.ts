// Review finding: leash run's guard learns the tree's groups only from leash run's walks, which
// come every 5 s while nothing signals leash run (SIGCHLD goes to the escapee's own parent), and
// its token sweep only finds processes whose *initial* environment carries the token. A setsid
// escapee exec'd with a scrubbed environment (`setsid env -i ...`, Python's
// Popen(env={...}, start_new_session=True)) and made less than a walk before leash run is
// SIGKILLed is in neither: it is left running under init.
// Fails on e654987: the escapee is still alive 15 s after leash run's death.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readCommandLine } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { markedScratch, startLeash } from '../helpers/leash-run.js';
import { exited, markedPids, waitForGone } from '../helpers/processes.js';

test('leash run SIGKILLed: a setsid escapee with a scrubbed environment is taken down too', async (t) => {
  const { mark } = markedScratch(t);
  // The escapee keeps only the test's mark (so the test can find and end it), not the owner token.
  const script = `sleep 0.3; setsid env -i LEASH_TEST_MARK=${mark} sleep 1001 & exec sleep 1000`;
  const leash = startLeash(['run', '--grace', '1', '--', 'sh', '-c', script], mark);
  const escapee = () => markedPids(mark).find((pid) => (readCommandLine(pid) ?? []).join(' ') === 'sleep 1001');
  assert.ok(await waitUntil(() => escapee() !== undefined, 10_000), `no escapee: ${leash.stderr()}`);
  const pid = escapee() as number;
  signalProcess(leash.child.pid as number, 'SIGKILL');
  await exited(leash.child);
  assert.ok(await waitForGone([pid], 15_000), `escapee ${pid} outlived leash run (alive: ${isProcessAlive(pid)})`);
});
