// `leash reap` flags: durations, sizes, and bad input exiting 64 with a message.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { parseDuration, parseReapArgs, parseSizeKb } from '../../src/reap/args.js';
import { CLI_ENTRY } from '../helpers/processes.js';

test('durations and sizes', () => {
  assert.equal(parseDuration('90'), 90);
  assert.equal(parseDuration('500ms'), 0.5);
  assert.equal(parseDuration('5m'), 300);
  assert.equal(parseDuration('2h'), 7200);
  assert.equal(parseDuration('1d'), 86400);
  assert.equal(parseDuration('1w'), undefined);
  assert.equal(parseDuration('-5s'), undefined);
  assert.equal(parseSizeKb('512K'), 512);
  assert.equal(parseSizeKb('100M'), 100 * 1024);
  assert.equal(parseSizeKb('1.5GiB'), 1.5 * 1024 * 1024);
  assert.equal(parseSizeKb('300MB'), 300 * 1024);
  assert.equal(parseSizeKb('2048'), 2);
  assert.equal(parseSizeKb('lots'), undefined);
});

test('flags parse, with values after a space or an =', () => {
  const parsed = parseReapArgs(['--kill', '--grace=2s', '--match', 'mcp-server', '--older-than', '1h', '--min-memory=1G', '--json']);
  assert.ok(typeof parsed !== 'string');
  assert.equal(parsed.kill, true);
  assert.equal(parsed.graceMs, 2000);
  assert.equal(parsed.match?.source, 'mcp-server');
  assert.equal(parsed.olderThanSeconds, 3600);
  assert.equal(parsed.minMemoryKb, 1024 * 1024);
  assert.equal(parsed.json, true);
});

for (const args of [['--bogus'], ['--match', '('], ['--match'], ['--older-than', 'soon'], ['--min-memory', 'big'], ['--grace', '2w'], ['--grace', '1h']]) {
  test(`leash reap ${args.join(' ')} exits 64 with a message`, () => {
    const result = spawnSync(process.execPath, [CLI_ENTRY, 'reap', ...args], { encoding: 'utf8', timeout: 15_000 });
    assert.equal(result.status, 64, result.stderr);
    assert.match(result.stderr, /^leash reap: .+\nusage: leash reap/);
    assert.equal(result.stdout, '');
  });
}

// A value flag at the end says it needs one; --grace without --kill is no silent no-op.
for (const [args, message] of [
  [['--older-than'], /^leash reap: --older-than needs a value\n/],
  [['--min-memory'], /^leash reap: --min-memory needs a value\n/],
  [['--kill', '--grace'], /^leash reap: --grace needs a value\n/],
  [['--grace', '5s'], /^leash reap: --grace applies only with --kill /],
] as const) {
  test(`leash reap ${args.join(' ')} exits 64 and says why`, () => {
    const result = spawnSync(process.execPath, [CLI_ENTRY, 'reap', ...args], { encoding: 'utf8', timeout: 15_000 });
    assert.equal(result.status, 64, result.stderr);
    assert.match(result.stderr, message);
    assert.equal(result.stdout, '');
  });
}

// A value after `=` on a flag that takes none used to be dropped: `--kill=no` killed.
for (const args of [['--kill=no'], ['--json=false'], ['--help=x'], ['--kill=']]) {
  test(`leash reap ${args.join(' ')} is refused, not read as the bare flag`, () => {
    const result = spawnSync(process.execPath, [CLI_ENTRY, 'reap', ...args, '--match', 'leash-reap-never-matches-anything'], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    assert.equal(result.status, 64, result.stderr);
    assert.match(result.stderr, /^leash reap: --(kill|json|help) takes no value/);
    assert.equal(result.stdout, '');
  });
}

// A second --match (or any value flag) used to replace the first silently, widening what --kill
// ends: refused, so that a confining filter is never lost.
for (const args of [
  ['--match', 'a', '--match', 'b'],
  ['--match=a', '--match', 'b'],
  ['--older-than', '1h', '--older-than=2h'],
  ['--min-memory', '1M', '--min-memory', '2M'],
  ['--grace', '1s', '--grace', '2s'],
]) {
  test(`leash reap ${args.join(' ')}: a value flag given twice exits 64`, () => {
    const result = spawnSync(process.execPath, [CLI_ENTRY, 'reap', ...args], { encoding: 'utf8', timeout: 15_000 });
    assert.equal(result.status, 64, result.stderr);
    assert.match(result.stderr, /^leash reap: --[a-z-]+ given twice/);
    assert.equal(result.stdout, '');
  });
}
