// Review finding: the owner library takes down, at the owner's death, its registered groups and
// the processes whose *initial* environment carries its token. A child that leaves the group with
// setsid and a scrubbed environment (`setsid env -i ...`, Python's
// Popen(env={...}, start_new_session=True)) is in neither, however long it has run: it outlives a
// SIGKILLed owner. docs/mcp.md says "the wrapper, the real server and everything they start are
// in it" (the group) and "the client dies, however it dies" ... the whole group down.
// Fails on e654987: the escapee is alive 15 s after the owner's SIGKILL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { signalProcess } from '../../src/sys/processes.js';
import { readCommandLine } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { LIBRARY_ENTRY, exited, killMarked, markedEnv, markedPids, newMark, waitForGone } from '../helpers/processes.js';

test('an owner SIGKILLed: a setsid escapee with a scrubbed environment is taken down too', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const script = `setsid env -i LEASH_TEST_MARK=${mark} sleep 1011 & exec sleep 1010`;
  const owner = spawn(process.execPath, ['--input-type=module', '-e', [
    `import { spawnOwned } from ${JSON.stringify(LIBRARY_ENTRY)};`,
    `spawnOwned('sh', ['-c', ${JSON.stringify(script)}], { stdio: 'ignore' });`,
    'setInterval(() => {}, 1000);',
  ].join('\n')], { stdio: 'ignore', env: markedEnv(mark) });
  const escapee = () => markedPids(mark).find((pid) => (readCommandLine(pid) ?? []).join(' ') === 'sleep 1011');
  assert.ok(await waitUntil(() => escapee() !== undefined, 10_000), 'no escapee');
  const pid = escapee() as number;
  // Long enough for any periodic scan of the owner to have seen it.
  await waitUntil(() => false, 6000);
  signalProcess(owner.pid as number, 'SIGKILL');
  await exited(owner);
  assert.ok(await waitForGone([pid], 15_000), `escapee ${pid} outlived its owner`);
});
