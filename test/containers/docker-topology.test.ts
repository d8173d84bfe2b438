// The Docker topology, for real: the `docker` CLI against an API service (podman's, as dockerd
// would be), so the container is no descendant of the client, of leash or of the CLI. A client
// SIGKILLed leaves the container running unless leash stops it by its label; so must a leash
// SIGKILLed right after its client (the container guard then does it), in both containments.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { runIsGone } from '../../src/reap/containers.js';
import { runIdentity } from '../../src/run/containers.js';
import { CLI_ENTRY, JsonLines, killMarked, markedEnv, markedPids, newMark, startFixture } from '../helpers/processes.js';
import { processesMentioning, startClient, startRuntime, TEST_LABEL, type Runtime } from './runtime.js';

let runtime: Runtime | string = 'not started';
before(async () => {
  runtime = await startRuntime({ service: true });
  if (typeof runtime === 'string') console.log(`SKIP container tests (Docker topology): ${runtime}`);
});
after(async () => {
  if (typeof runtime !== 'string') await runtime.cleanUp();
});

const GRACE_S = 1;
/** PID 1 in a namespace ignores SIGTERM without a handler: a busy loop that never ends by itself. */
const IGNORES_TERM = `echo ready; while :; do :; done`;
/** A handler: SIGTERM ends it at once. */
const HONOURS_TERM = `trap 'exit 0' TERM; echo ready; while :; do sleep 0.1; done`;

function dockerRun(rt: Runtime, mark: string, script: string, extra: string[] = []): string[] {
  // The mark in the container's command line: its processes are found by it, whatever their pid namespace.
  return ['docker', 'run', '--rm', '-i', '--network', 'none', '--label', `${TEST_LABEL}=${mark}`, ...extra, rt.image, 'sh', '-c', `: ${mark}; ${script}`];
}


function running(rt: Runtime, mark: string): string[] {
  return rt.cli('docker', ['ps', '-q', '--no-trunc', '--filter', `label=${TEST_LABEL}=${mark}`]).stdout.split(/\s+/).filter(Boolean);
}

async function cleanUp(rt: Runtime, mark: string): Promise<void> {
  const ids = rt.containers('docker', `${TEST_LABEL}=${mark}`);
  if (ids.length > 0) rt.cli('docker', ['rm', '-f', ...ids]);
  await killMarked(mark);
}

test('control: a client SIGKILLed leaves its `docker run --rm -i` container running', async (t) => {
  if (typeof runtime === 'string') return t.skip(runtime);
  const rt = runtime;
  const mark = newMark();
  t.after(() => cleanUp(rt, mark));
  const { client } = await startClient(rt, mark, dockerRun(rt, mark, IGNORES_TERM));
  const [id] = running(rt, mark);
  assert.ok(id, 'the container runs');
  signalProcess(client.pid as number, 'SIGKILL');
  // Given the time leash would need (grace + 2 s), the container is still there: the leak.
  await new Promise((resolve) => setTimeout(resolve, (GRACE_S + 2) * 1000));
  assert.deepEqual(running(rt, mark), [id], 'the unwrapped container runs on after its client died');
  assert.ok(processesMentioning(`: ${mark};`).length > 0, 'its process runs on');
});

for (const containment of ['auto', 'tree'] as const) {
  for (const [kind, script] of [['ignores SIGTERM (busy PID 1)', IGNORES_TERM], ['honours SIGTERM', HONOURS_TERM]] as const) {
    test(`leash run (${containment}): client SIGKILLed, the container that ${kind} is gone, and every process`, async (t) => {
      if (typeof runtime === 'string') return t.skip(runtime);
      const rt = runtime;
      const mark = newMark();
      t.after(() => cleanUp(rt, mark));
      const command = [process.execPath, CLI_ENTRY, 'run', '--die-with-parent', '--grace', String(GRACE_S), '--', ...dockerRun(rt, mark, script)];
      const { client, lines } = await startClient(rt, mark, command, containment);
      const [id] = running(rt, mark);
      assert.ok(id, 'the container runs');
      assert.match(lines.stderr, /containers: docker run labelled proc-leash\.run=/);
      const labels = rt.cli('docker', ['inspect', '--format', '{{index .Config.Labels "proc-leash.run"}}', id as string]).stdout.trim();
      assert.match(labels, /^[^/]+\/\d+\/\d+\//, 'the container carries the run label');
      const killedAt = performance.now();
      signalProcess(client.pid as number, 'SIGKILL');
      assert.ok(await waitUntil(() => rt.containers('docker', `${TEST_LABEL}=${mark}`).length === 0, 30_000), 'the container is gone');
      const goneMs = performance.now() - killedAt;
      // Generous: the bench holds the targets (grace + 2 s, 1 s); this says the container went.
      assert.ok(goneMs < (GRACE_S + 15) * 1000, `container gone after ${Math.round(goneMs)} ms`);
      assert.ok(await waitUntil(() => markedPids(mark).length === 0, 20_000), `processes left: ${markedPids(mark).join(' ')}`);
      const leftovers = () => [...processesMentioning(id as string), ...processesMentioning(mark)];
      assert.ok(await waitUntil(() => leftovers().length === 0, 10_000), `nothing of the container (conmon, its processes) is left: ${leftovers().join(' ')}`);
    });
  }

  test(`leash run (${containment}): leash SIGKILLed right after its client, the container guard ends the container`, async (t) => {
    if (typeof runtime === 'string') return t.skip(runtime);
    const rt = runtime;
    const mark = newMark();
    t.after(() => cleanUp(rt, mark));
    const command = [process.execPath, CLI_ENTRY, 'run', '--die-with-parent', '--grace', String(GRACE_S), '--', ...dockerRun(rt, mark, IGNORES_TERM)];
    const { client, server: leash } = await startClient(rt, mark, command, containment);
    const [id] = running(rt, mark);
    assert.ok(id, 'the container runs');
    signalProcess(client.pid as number, 'SIGKILL');
    assert.equal(signalProcess(leash, 'SIGKILL'), 'sent', 'leash was still alive to be killed');
    assert.ok(await waitUntil(() => rt.containers('docker', `${TEST_LABEL}=${mark}`).length === 0, 30_000), 'the container is gone');
    assert.ok(await waitUntil(() => markedPids(mark).length === 0, 20_000), `processes left: ${markedPids(mark).join(' ')}`);
    const leftovers = () => [...processesMentioning(id as string), ...processesMentioning(mark)];
      assert.ok(await waitUntil(() => leftovers().length === 0, 10_000), `nothing of the container (conmon, its processes) is left: ${leftovers().join(' ')}`);
  });
}

test('leash run: a container without --rm is stopped, not removed; the user\'s own label and cidfile are kept', async (t) => {
  if (typeof runtime === 'string') return t.skip(runtime);
  const rt = runtime;
  const mark = newMark();
  t.after(() => cleanUp(rt, mark));
  const cidfile = `${rt.dir}/${mark}.cid`;
  const run = ['docker', 'run', '-i', '--network', 'none', '--label', `${TEST_LABEL}=${mark}`, '--label', 'mine=kept', '--cidfile', cidfile, rt.image, 'sh', '-c', IGNORES_TERM];
  const state = `${rt.dir}/${mark}.json`;
  const { client } = await startClient(rt, mark, [process.execPath, CLI_ENTRY, 'run', '--state', state, '--die-with-parent', '--grace', String(GRACE_S), '--', ...run]);
  const [id] = running(rt, mark);
  assert.ok(id, 'the container runs');
  const status = spawnSync(process.execPath, [CLI_ENTRY, 'status', state], { encoding: 'utf8' });
  assert.match(status.stdout, /^containers +docker run labelled proc-leash\.run=\S+; when the run ends, docker stop -t 1 \(kept: no --rm\)/m, status.stdout + status.stderr);
  signalProcess(client.pid as number, 'SIGKILL');
  assert.ok(await waitUntil(() => running(rt, mark).length === 0, 30_000), 'the container is stopped');
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 20_000), `processes left: ${markedPids(mark).join(' ')}`);
  assert.deepEqual(rt.containers('docker', `${TEST_LABEL}=${mark}`), [id?.slice(0, 12)], 'the stopped container is kept');
  assert.equal(rt.cli('docker', ['inspect', '--format', '{{index .Config.Labels "mine"}}', id as string]).stdout.trim(), 'kept');
  assert.equal(readFileSync(cidfile, 'utf8').trim(), id);
});

test('leash run: a detached `docker run -d` is named and left alone', async (t) => {
  if (typeof runtime === 'string') return t.skip(runtime);
  const rt = runtime;
  const mark = newMark();
  t.after(() => cleanUp(rt, mark));
  const run = ['docker', 'run', '-d', '--network', 'none', '--label', `${TEST_LABEL}=${mark}`, rt.image, 'sleep', '1000'];
  const leash = startFixture('containers/client.mjs', [process.execPath, CLI_ENTRY, 'run', '--', ...run], mark, {
    stdio: ['ignore', 'pipe', 'pipe'],
    extraEnv: { ...rt.env, LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', LEASH_CONTAINMENT: "auto" },
  });
  const lines = new JsonLines(leash);
  let line = await lines.next<{ exit?: number }>(30_000);
  while (line.exit === undefined) line = await lines.next(30_000);
  assert.equal(line.exit, 0, lines.stderr);
  assert.match(lines.stderr, /detached container: not labelled, left running/);
  const [id] = running(rt, mark);
  assert.ok(id, 'the detached container still runs after leash ended');
  assert.equal(rt.cli('docker', ['inspect', '--format', '{{index .Config.Labels "proc-leash.run"}}', id as string]).stdout.trim(), '');
});

test('leash reap lists a container whose leash run is gone, not one whose run lives, and --kill stops it', async (t) => {
  if (typeof runtime === 'string') return t.skip(runtime);
  const rt = runtime;
  const mark = newMark();
  t.after(() => cleanUp(rt, mark));
  // A run that is gone: the identity of a process that ran and ended.
  const gone = spawnSync('sh', ['-c', 'cat /proc/self/stat'], { encoding: 'utf8' });
  const fields = gone.stdout.slice(gone.stdout.lastIndexOf(')') + 2).split(' ');
  const deadPid = gone.stdout.split(' ')[0] as string;
  const live = runIdentity();
  const deadRun = live.split('/').map((part, index) => (index === 1 ? deadPid : index === 2 ? fields[19] : part)).join('/');
  assert.ok(runIsGone(deadRun) && !runIsGone(live), 'one label names a gone run, the other this live one');
  for (const [name, run] of [[`reap-${mark}-gone`, deadRun], [`reap-${mark}-live`, live]]) {
    const started = rt.cli('docker', ['run', '-d', '--name', name as string, '--network', 'none', '--label', `${TEST_LABEL}=${mark}`, '--label', `proc-leash.run=${run}`, rt.image, 'sleep', '1000']);
    assert.equal(started.code, 0, started.stderr);
  }
  const reap = (args: string[]) => spawnSync(process.execPath, [CLI_ENTRY, 'reap', '--json', '--match', `^reap-${mark}-`, ...args], {
    encoding: 'utf8', env: markedEnv(mark, { ...rt.env, LEASH_CONTAINER_CLIS: 'docker' }),
  });
  const listed = reap([]);
  const containers = (JSON.parse(listed.stdout) as { containers: Array<{ name: string }> }).containers;
  assert.deepEqual(containers.map((c) => c.name), [`reap-${mark}-gone`], listed.stderr);
  assert.equal(listed.status, 1);
  const killed = reap(['--kill', '--grace', '1']);
  assert.equal(killed.status, 1, killed.stderr);
  assert.deepEqual(running(rt, mark).length, 1, 'the live run\'s container is left alone');
  assert.equal(rt.cli('docker', ['inspect', '--format', '{{.State.Running}}', `reap-${mark}-gone`]).stdout.trim(), 'false');
});
