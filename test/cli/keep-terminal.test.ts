// `leash run --keep-terminal`: the runner stays in leash's session and process group, so it keeps
// the controlling terminal (a pty from util-linux `script` stands in for a user's terminal), and
// the tree is still taken down when the runner leaves descendants behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { CLI_ENTRY, killMarked, markedEnv, newMark, waitForGone } from '../helpers/processes.js';

const SCRIPT = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));
// Field 7 of /proc/<pid>/stat is the controlling terminal (0: none); then a write to /dev/tty.
// Single-quoted in the outer command line, so that $$ is the probing shell's own pid.
const PROBE = `'cut -d" " -f7 /proc/$$/stat; echo probe > /dev/tty && echo tty-ok'`;

function inTerminal(leashArgs: string, mark: string) {
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_ENTRY)} run -q ${leashArgs} -- sh -c ${PROBE}`;
  return spawnSync(SCRIPT!, ['-qec', command, '/dev/null'], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
}

test('without --keep-terminal the command has no controlling terminal; with it, it has one', { skip: SCRIPT ? false : 'util-linux script is not installed' }, async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const plain = inTerminal('', mark);
  assert.match(plain.stdout, /^0\r?$/m, plain.stdout);
  assert.doesNotMatch(plain.stdout, /tty-ok/);
  const kept = inTerminal('--keep-terminal', mark);
  assert.equal(kept.status, 0, kept.stdout + kept.stderr);
  assert.match(kept.stdout, /^[1-9][0-9]*\r?$/m, kept.stdout);
  assert.match(kept.stdout, /tty-ok/);
});

test('with --keep-terminal, what the command leaves behind is still taken down', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const result = spawnSync(process.execPath, [CLI_ENTRY, 'run', '-q', '--keep-terminal', '--grace', '1', '--', 'sh', '-c', 'sleep 300 & echo $!'], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  assert.equal(result.status, 0, result.stderr);
  const sleeper = Number(result.stdout.trim());
  assert.ok(sleeper > 0, result.stdout);
  assert.ok(await waitForGone([sleeper], 5000), 'the background sleep outlived leash run --keep-terminal');
});
