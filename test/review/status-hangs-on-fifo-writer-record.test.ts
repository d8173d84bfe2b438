// Review finding: `leash status FILE` reads the writer record `.FILE.writer` beside the document
// with a plain blocking open. A FIFO there (planted by anyone who can create it first, e.g. in a
// sticky /tmp where leash run's rename over another user's file then fails) makes status hang
// forever; and /dev/zero as FILE grows the heap until V8 aborts (exit 134, no message).
// Fails on e654987: status is killed by the 5 s deadline.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI_ENTRY } from '../helpers/processes.js';

const DOCUMENT = {
  active_children: 1, adopted_children: 0, escalated: false, orphaned_children_total: 0, phase: 'running',
  reaped_children_total: 0, reaped_orphans_total: 0, runner_exit_code: null, termination_signal: null,
  updated_at: new Date().toISOString(),
};

test('leash status with a FIFO planted as the writer record answers within 5 s', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'review-status-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'state.json'), JSON.stringify(DOCUMENT) + '\n');
  execFileSync('mkfifo', [join(dir, '.state.json.writer')]);
  const result = spawnSync(process.execPath, [CLI_ENTRY, 'status', join(dir, 'state.json')], { timeout: 5000, encoding: 'utf8' });
  assert.notEqual(result.signal, 'SIGTERM', 'leash status hung on the planted FIFO');
});
