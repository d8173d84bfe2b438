// The state document of `leash run` and `leash status`.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { waitUntil } from '../../src/sys/wait.js';
import { writerRecordPath } from '../../src/run/state.js';
import { CLI_ENTRY, exited } from '../helpers/processes.js';
import { markedScratch, readJson, startLeash } from '../helpers/leash-run.js';

const FIELDS = [
  'active_children', 'adopted_children', 'escalated', 'orphaned_children_total', 'phase',
  'reaped_children_total', 'reaped_orphans_total', 'runner_exit_code', 'termination_signal', 'updated_at',
];

test('the state document: fields, mode 0600, and at most one write a second', async (t) => {
  const { mark, state } = markedScratch(t);
  // Orphans come and go all the time, so the counters change far more often than once a second.
  const churn = 'trap "exit 0" TERM; while :; do (sleep 0.01 &); sleep 0.02; done';
  const leash = startLeash(['run', '--state', state, '--', 'sh', '-c', churn], mark);
  assert.ok(await waitUntil(() => readJson(state)?.phase === 'running', 5000), leash.stderr());
  assert.equal(statSync(state).mode & 0o777, 0o600);
  const seen = new Set<string>();
  const windowStart = Date.now();
  while (Date.now() - windowStart < 3200) {
    const document = readJson(state);
    if (document) seen.add(String(document.updated_at));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // 3.2 s at one write a second: 4 writes, one more for an edge, never one per change.
  assert.ok(seen.size >= 2 && seen.size <= 5, `saw ${seen.size} writes in 3.2 s`);
  const running = readJson(state) as Record<string, unknown>;
  assert.deepEqual(Object.keys(running).sort(), FIELDS);
  assert.ok((running.orphaned_children_total as number) >= 20, JSON.stringify(running));
  assert.equal(running.runner_exit_code, null);
  assert.equal(running.termination_signal, null);
  assert.ok(!Number.isNaN(Date.parse(running.updated_at as string)));

  leash.child.kill('SIGTERM');
  const { code } = await exited(leash.child);
  assert.equal(code, 0, leash.stderr());
  const final = readJson(state) as Record<string, unknown>;
  assert.equal(final.phase, 'exited');
  assert.equal(final.termination_signal, 15);
  assert.equal(final.runner_exit_code, 0);
  assert.equal(final.active_children, 0);
  assert.equal(final.adopted_children, 0);
  assert.equal(final.reaped_orphans_total, final.orphaned_children_total);
  assert.equal(statSync(state).mode & 0o777, 0o600);
  // One log line per phase boundary.
  const phases = [...leash.stderr().matchAll(/phase=(\w+)/g)].map((match) => match[1]);
  assert.deepEqual(phases, ['running', 'stopping', 'exited']);
});

test('an unwritable state path gives one warning and changes nothing else', async (t) => {
  const { mark, dir } = markedScratch(t);
  writeFileSync(join(dir, 'plain-file'), '');
  const leash = startLeash(['run', '--', 'sh', '-c', '(sleep 0.1 &); sleep 0.3; exit 2'], mark, {
    LEASH_STATE_PATH: join(dir, 'plain-file', 'state.json'),
  });
  const { code } = await exited(leash.child);
  assert.equal(code, 2);
  assert.equal(leash.stderr().match(/cannot write the state file/g)?.length, 1, leash.stderr());
});

test('leash status shows the document, for a person and as JSON', async (t) => {
  const { mark, dir, state } = markedScratch(t);
  const leash = startLeash(['run', '--state', state, '--', 'sh', '-c', 'exit 3'], mark);
  assert.equal((await exited(leash.child)).code, 3);

  const human = startLeash(['status', state], mark);
  assert.equal((await exited(human.child)).code, 0, human.stderr());
  assert.match(human.stdout(), /phase\s+exited/);
  assert.match(human.stdout(), /exited with status 3/);

  const viaEnv = startLeash(['status', '--json'], mark, { LEASH_STATE_PATH: state });
  assert.equal((await exited(viaEnv.child)).code, 0, viaEnv.stderr());
  assert.deepEqual(JSON.parse(viaEnv.stdout()), JSON.parse(readFileSync(state, 'utf8')));

  const noFile = startLeash(['status'], mark);
  assert.equal((await exited(noFile.child)).code, 64);
  const missing = startLeash(['status', join(dir, 'missing.json')], mark);
  assert.equal((await exited(missing.child)).code, 66);
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'other.json'), '{"phase":"running"}');
  const invalid = startLeash(['status', join(dir, 'sub', 'other.json')], mark);
  assert.equal((await exited(invalid.child)).code, 65);
  assert.match(invalid.stderr(), /missing field/);
  const badFlag = startLeash(['status', '--yaml', state], mark);
  assert.equal((await exited(badFlag.child)).code, 64);
});

// A `leash run` inside the command once inherited LEASH_STATE_PATH and wrote its own document
// over the outer run's (which `leash status` then called stale while it ran).
test('LEASH_STATE_PATH names this run\'s document only: a nested leash run does not write over it', async (t) => {
  const { mark, state } = markedScratch(t);
  const inner = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_ENTRY)} run -- sh -c 'echo "inner sees \${LEASH_STATE_PATH:-nothing}"'`;
  const leash = startLeash(['run', '--', 'sh', '-c', inner], mark, { LEASH_STATE_PATH: state });
  const result = await exited(leash.child, 30_000);
  assert.equal(result.code, 0, leash.stderr());
  // The case happened: the inner run ran (and was told nothing of the outer document).
  assert.match(leash.stdout(), /^inner sees nothing$/m, leash.stderr());
  // The document and its writer record are the outer run's.
  assert.equal(readJson(writerRecordPath(state))?.pid, leash.child.pid, JSON.stringify(readJson(writerRecordPath(state))));
  assert.equal(readJson(state)?.phase, 'exited');
});

// A run whose command never started once wrote no document: the earlier run's stayed, and
// `leash status` showed its end ("exited with status 0") for a run that failed with 127. The
// record of what an earlier run ended (`.<name>.ended`) was shown for a later run the same way.
test('a run that never starts its command still writes its document; an earlier run\'s ended record is not this run\'s', async (t) => {
  const { mark, dir, state } = markedScratch(t);
  const earlier = join(dir, '.state.json.ended');
  writeFileSync(state, JSON.stringify({ phase: 'exited', runner_exit_code: 0 }));
  writeFileSync(earlier, JSON.stringify({ ended: [{ pid: 1234, command: 'sleep 30', signal: 'SIGTERM' }], more: 0 }) + '\n');
  const leash = startLeash(['run', '--state', state, '--', join(dir, 'no-such-command')], mark);
  const result = await exited(leash.child, 20_000);
  assert.equal(result.code, 127, leash.stderr());
  const document = readJson(state);
  assert.equal(document?.phase, 'exited', JSON.stringify(document));
  assert.equal(document?.runner_exit_code, 127, JSON.stringify(document));
  assert.equal(existsSync(earlier), false, 'the earlier run\'s ended record is still there');
});
