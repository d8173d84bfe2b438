// The teardown's command lines, exactly, with a stand-in CLI (a shell script that logs its
// arguments and one variable of its environment): no container runtime needed. The real thing
// is test/containers/docker-topology.test.ts and podman-topology.test.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { planContainerRun } from '../../src/run/containers.js';
import { hasProcfs } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { FIXTURES, killMarked, markedEnv, newMark } from '../helpers/processes.js';

const MODULE = fileURLToPath(new URL('../../src/run/containers.js', import.meta.url));
const ID = 'host/1/2/boot/3';

/** A folder with a stand-in `docker`: `ps` lists one container the first time, none after. */
function fakeCli(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'leash-fake-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'log');
  const cli = join(dir, 'docker');
  writeFileSync(cli, `#!/bin/sh
echo "$* | DOCKER_HOST=$DOCKER_HOST" >> '${log}'
if [ "$3" = ps ] || [ "$1" = ps ]; then
  [ -e '${dir}/listed' ] || { : > '${dir}/listed'; echo abc123; }
fi
exit 0
`);
  chmodSync(cli, 0o755);
  const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
  return { cli, lines, env: { PATH: process.env.PATH, DOCKER_HOST: 'tcp://daemon:2375' } };
}

const label = `proc-leash.run=${ID}`;
const GLOBALS = '-H tcp://other:2375';

test('the guard stops (grace rounded up), then removes (--rm), with the globals and environment of the run', async (t) => {
  if (!existsSync('/bin/sh')) return t.skip('no /bin/sh');
  const fake = fakeCli(t);
  const plan = planContainerRun(fake.cli, ['-H', 'tcp://other:2375', 'run', '--rm', '-i', 'img'], ID, fake.env, 2500);
  assert.ok(plan && (await plan.startGuard()), 'the guard started');
  assert.deepEqual(fake.lines(), [], 'nothing is run before the stop');
  const outcome = await plan.finish();
  assert.equal(outcome.result, 'done');
  assert.deepEqual(fake.lines(), [
    `${GLOBALS} ps -aq --filter label=${label} | DOCKER_HOST=tcp://daemon:2375`,
    `${GLOBALS} stop -t 3 abc123 | DOCKER_HOST=tcp://daemon:2375`,
    `${GLOBALS} rm -f abc123 | DOCKER_HOST=tcp://daemon:2375`,
    `${GLOBALS} ps -aq --filter label=${label} | DOCKER_HOST=tcp://daemon:2375`,
  ]);
  assert.equal((await plan.teardown(2500)).result, 'done', 'a second call shares the first outcome');
  assert.equal(fake.lines().length, 4, 'and runs nothing again');
});

test('a container kept (no --rm) is stopped, never removed; the second look is for running ones', async (t) => {
  if (!existsSync('/bin/sh')) return t.skip('no /bin/sh');
  const fake = fakeCli(t);
  const plan = planContainerRun(fake.cli, ['run', '-i', 'img'], ID, fake.env, 1000);
  assert.ok(plan && (await plan.startGuard()));
  await plan.teardown(1000);
  assert.deepEqual(fake.lines().map((line) => line.split(' | ')[0]), [
    `ps -aq --filter label=${label}`,
    'stop -t 1 abc123',
    `ps -q --filter label=${label}`,
  ]);
});

test('leash killed: the guard alone runs the teardown', async (t) => {
  if (!existsSync('/bin/sh')) return t.skip('no /bin/sh');
  const fake = fakeCli(t);
  const mark = newMark();
  t.after(() => killMarked(mark));
  const child = spawn(process.execPath, [join(FIXTURES, 'containers/plan-then-die.mjs'), MODULE, fake.cli, 'run', '--rm', '-i', 'img'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: markedEnv(mark, fake.env),
  });
  let said = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (said += text));
  const killed = await new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  assert.equal(killed, 'SIGKILL');
  assert.match(said, /guarded/, 'the guard was running when its owner died');
  assert.ok(await waitUntil(() => fake.lines().length >= 4, 10_000), `teardown lines: ${fake.lines().join('; ')}`);
  assert.deepEqual(fake.lines().slice(1, 3).map((line) => line.split(' | ')[0]), ['stop -t 2 abc123', 'rm -f abc123']);
});

test('the guard gone before the stop: leash runs the CLI itself once the run is over', async (t) => {
  if (!existsSync('/bin/sh')) return t.skip('no /bin/sh');
  // The guard is found by its command line, in /proc (hidden in the macOS-paths lane).
  if (!hasProcfs()) return t.skip('no /proc to find the guard by');
  const fake = fakeCli(t);
  const warnings: string[] = [];
  const plan = planContainerRun(fake.cli, ['run', '--rm', '-i', 'img'], ID, fake.env, 1000, (m) => warnings.push(m));
  assert.ok(plan && (await plan.startGuard()));
  // The guard, by its command line (this test's own: its arguments name this test's folder).
  const guardPid = (await import('./runtime.js')).processesMentioning(fake.cli)[0];
  assert.ok(guardPid, 'the guard runs');
  process.kill(guardPid, 'SIGKILL');
  assert.equal((await plan.teardown(1000)).result, 'guard-gone');
  const outcome = await plan.finish();
  assert.equal(outcome.result, 'done');
  assert.deepEqual(fake.lines().map((line) => line.split(' | ')[0]), [`ps -aq --filter label=${label}`, 'stop -t 1 abc123', 'rm -f abc123']);
});
