// A supervisor that cannot live (here: one that exits at once) is replaced five times, then the
// link gives up with one warning, and tries again by itself once its 10 s restart window has room:
// no busy loop, one warning per give-up, and no waiting for a registration that may never come.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { exited, killMarked, markedEnv, newMark } from '../helpers/processes.js';

const LINK = fileURLToPath(new URL('../../src/owner/supervisor-link.js', import.meta.url));

test('a supervisor that keeps dying: five replacements, one warning, then a fresh try after the window', async (t) => {
  const mark = newMark();
  const dir = mkdtempSync(join(tmpdir(), 'leash-link-'));
  t.after(async () => {
    await killMarked(mark);
    rmSync(dir, { recursive: true, force: true });
  });
  const starts = join(dir, 'starts');
  const dying = join(dir, 'dying-supervisor.cjs');
  writeFileSync(dying, `require('node:fs').appendFileSync(${JSON.stringify(starts)}, Date.now() + '\\n'); process.exit(1);\n`);
  writeFileSync(starts, '');
  // The owner watches for 14 s: the first give-up comes at once, the retry ~10 s after the first
  // restart, the second give-up right after it; the next retry is 10 s further out.
  const owner = spawn(process.execPath, ['--input-type=module', '-e', [
    `import { SupervisorLink } from ${JSON.stringify(LINK)};`,
    'let warnings = 0;',
    "process.on('warning', (w) => { if (w.code === 'LEASH_SUPERVISOR') warnings += 1; });",
    "const link = new SupervisorLink({ ownerToken: 'retrytoken1', graceMs: 100, replay: () => [], needed: () => true });",
    'link.ensure();',
    'setTimeout(() => { console.log(JSON.stringify({ warnings })); }, 14_000);',
  ].join('\n')], { stdio: ['ignore', 'pipe', 'pipe'], env: markedEnv(mark, { LEASH_SUPERVISOR_FILE: dying }) });
  let out = '';
  owner.stdout!.setEncoding('utf8').on('data', (text: string) => (out += text));
  assert.deepEqual(await exited(owner, 30_000), { code: 0, signal: null });
  const times = readFileSync(starts, 'utf8').trim().split('\n').map(Number);
  const { warnings } = JSON.parse(out) as { warnings: number };
  // 1 start + 5 replacements, then (after the window) 1 fresh try that dies at once: 7 in all.
  assert.equal(times.length, 7, `starts at ${times.map((at) => at - times[0]!).join(', ')} ms`);
  assert.ok(times[6]! - times[1]! >= 9_000, `the fresh try came too early: ${times[6]! - times[1]!} ms after the first restart`);
  assert.equal(warnings, 2, 'one warning per give-up');
});
