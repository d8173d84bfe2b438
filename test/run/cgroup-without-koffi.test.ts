// Contained, without koffi: leash cannot be a child subreaper, so orphans go to init. They are
// still in the run's cgroup from their fork on, so they are ended with the tree. (With koffi,
// leash is a subreaper before the command starts: subreaper-first.test.ts.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { destroyCgroup, usableCgroup } from '../helpers/cgroup.js';
import { markedScratch } from '../helpers/leash-run.js';
import { REPO_ROOT, exited, markedEnv, markedPids } from '../helpers/processes.js';

const place = await usableCgroup();
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : false;

test('contained, koffi missing: the run goes on in its cgroup, says what it lacks, and still ends the tree', { skip }, async (t) => {
  const { mark, dir } = markedScratch(t);
  // The package without its one dependency: the run bundle is all `leash run` loads besides koffi.
  const root = join(dir, 'package');
  for (const part of ['bin', 'dist/src/run', 'package.json']) cpSync(join(REPO_ROOT, part), join(root, part), { recursive: true });
  mkdirSync(join(root, 'node_modules'));
  const leash = spawn(process.execPath, [join(root, 'bin/leash.js'), 'run', '--die-with-parent', '--', 'sh', '-c', '(setsid sleep 1001 &); sleep 0.3; exit 4'], {
    stdio: ['pipe', 'ignore', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  let stderr = '';
  leash.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  t.after(async () => {
    const directory = /containment: cgroup v2 \((.+)\)$/m.exec(stderr)?.[1];
    if (directory !== undefined) await destroyCgroup(directory);
  });
  const { code } = await exited(leash, 20_000);
  assert.equal(code, 4, stderr);
  assert.match(stderr, /containment: cgroup v2/);
  assert.match(stderr, /warning: native calls unavailable \(.*koffi.*\): orphans go to init \(still in the cgroup, ended with the tree\); the parent is looked at once a second, stdin's writers not at all/);
  assert.match(stderr, /ending 1 process with SIGTERM: \d+ \(sleep 1001\)/);
  assert.deepEqual(markedPids(mark), []);
});
