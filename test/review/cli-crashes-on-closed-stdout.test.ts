// Review finding: `leash status`, `leash reap` and `leash help` write to stdout with no 'error'
// listener. Piped into a reader that is gone (`| true`, `| head -1` after its line), they die of an
// unhandled EPIPE with a Node stack trace and exit 1, which also hides reap's own exit code
// (2 = --kill left something running). Issue #8 hardened only leash run and the supervisor.
// Fails on e654987: the stack trace is on stderr.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { CLI_ENTRY } from '../helpers/processes.js';

for (const args of [['help'], ['reap', '--match', 'review-no-such-process-xyz']]) {
  test(`leash ${args[0]} into a closed pipe: no unhandled EPIPE`, () => {
    // The reader (`true`) is gone before leash writes.
    const result = spawnSync('sh', ['-c', `"$0" "$1" ${args.map((a) => `'${a}'`).join(' ')} | true; exit "\${PIPESTATUS:-0}"`, process.execPath, CLI_ENTRY], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.doesNotMatch(result.stderr, /Unhandled 'error' event|EPIPE/, result.stderr);
  });
}
