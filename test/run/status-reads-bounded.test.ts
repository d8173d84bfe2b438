// `leash status` reads only what cannot hold it: the writer record and the document are opened
// without waiting (a FIFO planted there cannot block it), only regular files are read, and never
// more than a bound (/dev/zero as FILE grew the heap until V8 aborted, exit 134, no message).
// A document whose keys have the wrong types is called malformed, never shown as valid.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { markedScratch, readJson, startLeash } from '../helpers/leash-run.js';
import { CLI_ENTRY, exited } from '../helpers/processes.js';

const DOCUMENT = {
  active_children: 1, adopted_children: 0, escalated: false, orphaned_children_total: 0, phase: 'running',
  reaped_children_total: 0, reaped_orphans_total: 0, runner_exit_code: null, termination_signal: null,
  updated_at: new Date().toISOString(),
};

function scratch(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'leash-status-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function status(...args: string[]) {
  return spawnSync(process.execPath, [CLI_ENTRY, 'status', ...args], { timeout: 5000, encoding: 'utf8' });
}

test('leash status with a FIFO planted as the writer record answers within 5 s', (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'state.json'), JSON.stringify(DOCUMENT) + '\n');
  execFileSync('mkfifo', [join(dir, '.state.json.writer')]);
  const result = status(join(dir, 'state.json'));
  assert.notEqual(result.signal, 'SIGTERM', 'leash status hung on the planted FIFO');
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /writer\s+not recorded/);
});

test('leash status refuses a device, a FIFO and an oversized file as FILE, with a message and its exit code', (t) => {
  const dir = scratch(t);
  const zero = status('/dev/zero');
  assert.equal(zero.status, 66, `${zero.signal} ${zero.stderr}`);
  assert.match(zero.stderr, /cannot read \/dev\/zero: not a regular file/);

  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const fromFifo = status(fifo);
  assert.notEqual(fromFifo.signal, 'SIGTERM', 'leash status hung on a FIFO as FILE');
  assert.equal(fromFifo.status, 66, fromFifo.stderr);

  const big = join(dir, 'big.json');
  writeFileSync(big, ' '.repeat(1024 * 1024));
  const large = status(big);
  assert.equal(large.status, 65, large.stderr);
  assert.match(large.stderr, /larger than/);
});

test('a document with the ten keys of the wrong types is malformed (65), never shown', (t) => {
  const dir = scratch(t);
  const bad: Array<[string, Record<string, unknown>]> = [
    ['active_children', { active_children: -5 }],
    ['reaped_children_total', { reaped_children_total: 1.5 }],
    ['updated_at', { updated_at: 'yesterday' }],
    ['updated_at', { updated_at: '2026-13-45T99:99:99Z' }],
    ['termination_signal', { termination_signal: 0 }],
    ['runner_exit_code', { runner_exit_code: -1 }],
    ['escalated', { escalated: 'no' }],
  ];
  for (const [field, change] of bad) {
    const file = join(dir, `${field}.json`);
    writeFileSync(file, JSON.stringify({ ...DOCUMENT, ...change }));
    const result = status(file);
    assert.equal(result.status, 65, `${JSON.stringify(change)}: ${result.stdout}${result.stderr}`);
    assert.match(result.stderr, new RegExp(`malformed state document: '${field}'`));
    assert.equal(result.stdout, '');
  }
});

test('a directory planted at the writer record: the document is still written, the warning names the record', async (t) => {
  const { mark, dir, state } = markedScratch(t);
  const record = join(dir, `.${state.split('/').pop()}.writer`);
  mkdirSync(record);
  const leash = startLeash(['run', '--state', state, '--', 'sh', '-c', 'exit 4'], mark);
  assert.equal((await exited(leash.child)).code, 4, leash.stderr());
  assert.equal(readJson(state)?.phase, 'exited', `no document: ${leash.stderr()}`);
  assert.equal(leash.stderr().match(/cannot write/g)?.length, 1, leash.stderr());
  assert.ok(leash.stderr().includes(`cannot write the writer record ${record}`), leash.stderr());
  assert.doesNotMatch(leash.stderr(), /cannot write the state file/);
  const shown = status(state);
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /writer\s+not recorded/);
  assert.ok(readFileSync(state, 'utf8').includes('"phase":"exited"'));
});

test('after --, a FILE whose name starts with - is read; a status above 128 names a signal only where one has that number', (t) => {
  const dir = scratch(t);
  const exitedDocument = { ...DOCUMENT, phase: 'exited', active_children: 0, runner_exit_code: 200 };
  writeFileSync(join(dir, '-state.json'), JSON.stringify(exitedDocument) + '\n');
  const refused = spawnSync(process.execPath, [CLI_ENTRY, 'status', '-state.json'], { cwd: dir, timeout: 5000, encoding: 'utf8' });
  assert.equal(refused.status, 64, refused.stderr);
  const shown = spawnSync(process.execPath, [CLI_ENTRY, 'status', '--', '-state.json'], { cwd: dir, timeout: 5000, encoding: 'utf8' });
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /exited with status 200\n/);
  assert.doesNotMatch(shown.stdout, /killed by/);

  writeFileSync(join(dir, 'state.json'), JSON.stringify({ ...exitedDocument, runner_exit_code: 137 }) + '\n');
  const killed = status(join(dir, 'state.json'));
  assert.match(killed.stdout, /exited with status 137 \(killed by SIGKILL\)/);
});
