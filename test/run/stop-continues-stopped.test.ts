// A process the stop finds stopped (kill -STOP, a debugger, SIGTTIN) acts on SIGTERM only once it
// runs again: leash sends SIGCONT after the stop signal, as systemd does. Before, such a member
// waited out the whole grace and died of SIGKILL (escalated), whatever its SIGTERM handler did.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readProcStat } from '../../src/sys/procfs.js';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { markedScratch, readJson, startLeash } from '../helpers/leash-run.js';
import { exited } from '../helpers/processes.js';

// The member traps SIGTERM and leaves cleanly; the runner stops it, says its pid and waits.
const RUNNER = `sh -c 'trap "exit 0" TERM; while :; do sleep 0.05; done' & m=$!; kill -STOP $m; echo "stopped $m"; wait`;

for (const containment of ['tree', 'auto']) {
  test(`a stopped member is continued after the stop signal and ends by its own handler, within the grace (LEASH_CONTAINMENT=${containment})`, async (t) => {
    const { mark, state } = markedScratch(t);
    const leash = startLeash(['run', '--grace', '20', '--state', state, '--', 'sh', '-c', RUNNER], mark, { LEASH_CONTAINMENT: containment });
    assert.ok(await waitUntil(() => /^stopped \d+$/m.test(leash.stdout()), 15_000), leash.stderr());
    const member = Number(/^stopped (\d+)$/m.exec(leash.stdout())![1]);
    // The case happened: the member is stopped when the stop begins.
    assert.ok(await waitUntil(() => readProcStat(member)?.state === 'T', 5000), `member ${member} is not stopped: ${readProcStat(member)?.state}`);
    const stopAsked = performance.now();
    signalProcess(leash.child.pid!, 'SIGTERM');
    const result = await exited(leash.child, 30_000);
    // Well inside the 20 s grace, and no SIGKILL.
    assert.ok(performance.now() - stopAsked < 10_000, `the stop took ${Math.round(performance.now() - stopAsked)} ms: ${leash.stderr()}`);
    assert.doesNotMatch(leash.stderr(), /escalated=true/);
    assert.equal(readJson(state)?.escalated, false, leash.stderr());
    assert.equal(result.signal, null);
    assert.equal(readProcStat(member), undefined, `member ${member} is left`);
  });
}
