// The podman CLI topology, for real: `podman run -i --rm` forks conmon, which double-forks; the
// container's first process ends up leash's adopted descendant, but in a cgroup podman makes, out
// of leash's. A SIGTERM to a wrapped run must end the container and let leash exit; unwrapped, the
// CLI's death leaves the container running.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { CLI_ENTRY, exited, killMarked, markedPids, newMark } from '../helpers/processes.js';
import { processesMentioning, startClient, startRuntime, TEST_LABEL, type Runtime } from './runtime.js';

let runtime: Runtime | string = 'not started';
before(async () => {
  runtime = await startRuntime({ service: false });
  if (typeof runtime === 'string') console.log(`SKIP container tests (podman CLI topology): ${runtime}`);
});
after(async () => {
  if (typeof runtime !== 'string') await runtime.cleanUp();
});

const GRACE_S = 1;
const IGNORES_TERM = `echo ready; while :; do :; done`;

function podmanRun(rt: Runtime, mark: string): string[] {
  return ['podman', 'run', '--rm', '-i', '--network', 'none', '--label', `${TEST_LABEL}=${mark}`, rt.image, 'sh', '-c', `: ${mark}; ${IGNORES_TERM}`];
}


const ours = (rt: Runtime, mark: string) => rt.containers('podman', `${TEST_LABEL}=${mark}`);

async function cleanUp(rt: Runtime, mark: string): Promise<void> {
  const ids = ours(rt, mark);
  if (ids.length > 0) rt.cli('podman', ['rm', '-f', '-t', '0', ...ids]);
  await killMarked(mark);
}

test('control: the podman CLI killed leaves its `podman run -i --rm` container running', async (t) => {
  if (typeof runtime === 'string') return t.skip(runtime);
  const rt = runtime;
  const mark = newMark();
  t.after(() => cleanUp(rt, mark));
  const { server } = await startClient(rt, mark, podmanRun(rt, mark));
  assert.equal(ours(rt, mark).length, 1, 'the container runs');
  signalProcess(server, 'SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, (GRACE_S + 2) * 1000));
  assert.equal(ours(rt, mark).length, 1, 'the container is still there');
  assert.ok(processesMentioning(`: ${mark};`).length > 0, 'its process runs on');
});

for (const containment of ['auto', 'tree'] as const) {
  test(`leash run (${containment}): SIGTERM to leash ends the podman container, and leash exits`, async (t) => {
    if (typeof runtime === 'string') return t.skip(runtime);
    const rt = runtime;
    const mark = newMark();
    t.after(() => cleanUp(rt, mark));
    const command = [process.execPath, CLI_ENTRY, 'run', '--grace', String(GRACE_S), '--', ...podmanRun(rt, mark)];
    const { client, lines, server: leash } = await startClient(rt, mark, command, containment);
    assert.equal(ours(rt, mark).length, 1, 'the container runs');
    assert.ok(processesMentioning(`: ${mark};`).length > 0, 'its process runs');
    signalProcess(leash, 'SIGTERM');
    let line = await lines.next<{ exit?: number | null; signal?: string }>(30_000);
    while (line.exit === undefined) line = await lines.next(30_000);
    assert.ok(typeof line.exit === "number", `leash exits: ${lines.stderr}`);
    assert.ok(await waitUntil(() => ours(rt, mark).length === 0, 20_000), 'the container is gone');
    assert.ok(await waitUntil(() => markedPids(mark).filter((pid) => pid !== client.pid).length === 0, 20_000), `processes left: ${markedPids(mark).join(' ')}`);
    // The client's own command line names the mark too: it is the one process left, on purpose.
    const leftovers = () => processesMentioning(mark).filter((pid) => pid !== client.pid);
    assert.ok(await waitUntil(() => leftovers().length === 0, 10_000), `nothing of the container is left: ${leftovers().join(' ')}`);
    signalProcess(client.pid as number, 'SIGKILL');
    await exited(client);
  });
}
