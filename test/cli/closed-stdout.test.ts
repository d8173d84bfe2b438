// A reader that is gone (`leash help | true`, `leash reap | head -1` after its line) never ends a
// leash command with an unhandled EPIPE: the output is dropped, the command's own exit code stands
// (an EPIPE death exits 1, which would hide reap's 0 here, or 2 after a --kill that left
// something running). Fails with writes through process.stdout: a stack trace and exit 1.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI_ENTRY } from '../helpers/processes.js';

const DOCUMENT = {
  active_children: 1, adopted_children: 0, escalated: false, orphaned_children_total: 0, phase: 'exited',
  reaped_children_total: 1, reaped_orphans_total: 0, runner_exit_code: 0, termination_signal: null,
  updated_at: new Date().toISOString(),
};

const dir = mkdtempSync(join(tmpdir(), 'leash-closed-stdout-'));
const document = join(dir, 'state.json');
writeFileSync(document, JSON.stringify(DOCUMENT) + '\n');
test.after(() => rmSync(dir, { recursive: true, force: true }));

const cases: Array<[string[], number]> = [
  [['help'], 0],
  [['--version'], 0],
  [['help', 'run'], 0],
  [['reap', '--match', 'closed-stdout-no-such-process-xyz'], 0],
  [['status', document], 0],
  [['status', '--json', document], 0],
];

for (const [args, code] of cases) {
  test(`leash ${args.join(' ')} into a closed pipe: no unhandled EPIPE, exit ${code}`, () => {
    const codeFile = join(dir, `code-${args.join('-').replace(/\W/g, '_')}`);
    // The reader (`true`) is gone before leash writes (leash takes far longer to start); leash's
    // own status is kept in a file (sh has no PIPESTATUS).
    const script = `{ "$0" "$1" ${args.map((a) => `'${a}'`).join(' ')}; echo $? > '${codeFile}'; } | true`;
    const result = spawnSync('sh', ['-c', script, process.execPath, CLI_ENTRY], { encoding: 'utf8', timeout: 30_000 });
    assert.doesNotMatch(result.stderr, /Unhandled 'error' event|EPIPE|Error/, result.stderr);
    assert.equal(Number(readFileSync(codeFile, 'utf8')), code, result.stderr);
  });
}
