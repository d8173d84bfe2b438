// `leash run` names what it ended (pid and command) on stderr and in `leash status`, not only
// counts: here the runner exits and leaves a sleeper and a SIGTERM-ignoring process behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { CLI_ENTRY, exited } from '../helpers/processes.js';
import { markedScratch, startLeash } from '../helpers/leash-run.js';

test('leftovers are named with pid and command, on stderr and in leash status', async (t) => {
  const { mark, state } = markedScratch(t);
  const script = `sleep 301 & echo "sleeper $!"; sh -c 'trap "" TERM; exec sleep 302' & echo "ignorer $!"; sleep 0.5; exit 4`;
  const run = startLeash(['run', '--grace', '0.5', '--state', state, 'sh', '-c', script], mark);
  const result = await exited(run.child, 20_000);
  assert.equal(result.code, 4, run.stderr());
  const sleeper = Number(/^sleeper (\d+)$/m.exec(run.stdout())?.[1]);
  const ignorer = Number(/^ignorer (\d+)$/m.exec(run.stdout())?.[1]);
  assert.ok(sleeper > 0 && ignorer > 0, run.stdout());
  // Both got the stop signal by name; the one that ignored it, SIGKILL after the grace.
  const ending = /ending \d+ process(?:es)? with SIGTERM: (.*)$/m.exec(run.stderr())?.[1] ?? '';
  assert.ok(ending.includes(`${sleeper} (sleep 301)`), run.stderr());
  assert.ok(ending.includes(`${ignorer} (sleep 302)`), run.stderr());
  assert.doesNotMatch(ending, /sh -c sleep 301/, 'the runner ended by itself: not one leash ended');
  assert.match(run.stderr(), new RegExp(`killed 1 process with SIGKILL: ${ignorer} \\(sleep 302\\)`));
  const status = spawnSync(process.execPath, [CLI_ENTRY, 'status', state], { encoding: 'utf8' });
  assert.equal(status.status, 0, status.stderr);
  assert.match(status.stdout, new RegExp(`^(ended)? +${sleeper} sleep 301 \\(SIGTERM\\)$`, 'm'), status.stdout);
  assert.match(status.stdout, new RegExp(`^ +${ignorer} sleep 302 \\(SIGKILL\\)$`, 'm'), status.stdout);
  // The document itself keeps its ten keys.
  const json = spawnSync(process.execPath, [CLI_ENTRY, 'status', '--json', state], { encoding: 'utf8' });
  assert.equal(Object.keys(JSON.parse(json.stdout)).length, 10);
  // --quiet drops these lines with the phase lines.
  const quiet = startLeash(['run', '-q', '--grace', '0.5', 'sh', '-c', 'sleep 303 & exit 0'], mark);
  await exited(quiet.child, 20_000);
  assert.equal(quiet.stderr(), '');
});
