// The kill of a contained tree on a kernel without cgroup.kill (Linux 5.2 to 5.13): the cgroup is
// frozen, each member SIGKILLed, thawed, until it is empty. This kernel has cgroup.kill, so the
// TreeCgroup is told it has none, and a member that forks without pause is in the tree.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TreeCgroup, type CgroupLocation } from '../../src/sys/cgroup.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited } from '../helpers/processes.js';
import { destroyCgroup, scratchCgroup, usableCgroup } from '../helpers/cgroup.js';

const place = await usableCgroup();
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : false;

test('without cgroup.kill, kill() freezes, SIGKILLs every member and thaws, a fork loop included', { skip }, async (t) => {
  const parent = scratchCgroup(t, place as CgroupLocation);
  const cgroup = TreeCgroup.create({ ...(place as CgroupLocation), ...parent });
  assert.ok(cgroup instanceof TreeCgroup, String(cgroup));
  t.after(() => destroyCgroup(cgroup.directory));
  Object.defineProperty(cgroup, 'hasKill', { value: false });
  const script = [
    'echo $$ > "$1/cgroup.procs"',
    // Ignores SIGTERM (SIGKILL is what kill() sends), and one that forks for as long as it lives.
    `for i in 1 2 3 4 5 6 7 8 9 10; do sh -c 'trap "" TERM; exec sleep 1000' & done`,
    'sh -c "while :; do sleep 1000 & done" &',
    'exec sleep 1001',
  ].join('\n');
  const child = spawn('sh', ['-c', script, 'sh', cgroup.directory], { stdio: 'ignore' });
  const count = () => readFileSync(join(cgroup.directory, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).length;
  assert.ok(await waitUntil(() => count() >= 30, 10_000), `only ${count()} members`);
  cgroup.kill();
  assert.ok(await waitUntil(() => !cgroup.populated(), 5000), `${count()} members left after kill()`);
  assert.equal(readFileSync(join(cgroup.directory, 'cgroup.freeze'), 'utf8').trim(), '0', 'the cgroup was left frozen');
  await exited(child);
  assert.equal(cgroup.remove(), true);
});
