// A pipe's writer that hands its end to a new process and exits while reap reads descriptors
// (a daemonising writer) leaves the pipe with a writer reap's first pid list does not hold. The
// reader must not be judged "stdin has no writer": reap reads the processes forked during its
// pass too. The hook makes the hand-off happen at exactly that moment.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { CLI_ENTRY, FIXTURES } from '../helpers/processes.js';
import { idle, q, reapScratch, runShell } from './harness.js';

test('a writer that hands its pipe end over mid-scan still counts: the reader is not listed', async (t) => {
  const { mark, marker, ready } = reapScratch(t);
  const holderScript = `${q(process.execPath)} ${q(join(FIXTURES, 'reap', 'handoff-holder.mjs'))} ${q(marker)} holder`;
  await runShell(`${holderScript} 2>/dev/null | ${idle(marker, 'reader')} >/dev/null 2>&1 &`, mark, ready);
  const holder = await ready.pid('holder');
  const reader = await ready.pid('reader');

  const hooks = pathToFileURL(join(FIXTURES, 'reap', 'handoff-hooks.mjs')).href;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks)});`;
  const handoffFile = join(ready.path, 'holder.next');
  const result = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, CLI_ENTRY, 'reap', '--json', '--match', marker],
    { encoding: 'utf8', timeout: 60_000, env: { ...process.env, LEASH_TEST_HANDOFF_PID: String(holder), LEASH_TEST_HANDOFF_FILE: handoffFile } },
  );
  // The hand-off did happen during the scan: the first holder is gone, a new one holds the end.
  assert.ok(existsSync(handoffFile), `the holder never handed over: ${result.stderr}`);
  assert.equal(isProcessAlive(holder), false);
  assert.ok(isProcessAlive(reader));
  const report = JSON.parse(result.stdout) as { trees: Array<{ pid: number; reasons: string[] }> };
  assert.deepEqual(report.trees.map((tree) => [tree.pid, tree.reasons]), [], 'the reader still has a writer');
  assert.equal(result.status, 0, result.stderr);
});
