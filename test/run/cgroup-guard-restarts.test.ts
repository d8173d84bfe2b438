// The cgroup guard is restarted for as long as leash lives: each time something SIGKILLs it, another
// takes its place (said with its pid: never "starting another" without one), at most
// RESTARTS_PER_WINDOW in RESTART_WINDOW_MS, then after a pause that is said too. The last one
// still does its work: a SIGKILL of leash afterwards ends the tree and removes the cgroup.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { test } from 'node:test';
import * as guardModule from '../../src/run/cgroup-guard.js';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { usableCgroup } from '../helpers/cgroup.js';
import { guardOf, markedScratch, startLeash } from '../helpers/leash-run.js';
import { exited, markedPids, markedPidRunning } from '../helpers/processes.js';

// Read from the module (a namespace import, so that an older build without them still loads).
const RESTARTS_PER_WINDOW = (guardModule as { RESTARTS_PER_WINDOW?: number }).RESTARTS_PER_WINDOW ?? 5;
const RESTART_BACKOFF_MS = (guardModule as { RESTART_BACKOFF_MS?: number }).RESTART_BACKOFF_MS ?? 1000;

const place = await usableCgroup();
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : false;

test('the cgroup guard, SIGKILLed again and again, is restarted for as long as leash lives (paced past the rate), and the last one ends the tree', { skip }, async (t) => {
  const { mark } = markedScratch(t);
  const leash = startLeash(['run', '--grace', '0.3', '--', 'sh', '-c', 'sleep 1000 & exec sleep 1001'], mark);
  const leashPid = leash.child.pid!;
  assert.ok(await waitUntil(() => markedPidRunning(mark, 'sleep 1001') !== undefined && guardOf(leashPid) !== undefined, 10_000), leash.stderr());
  const directory = /containment: cgroup v2 \((.+)\)$/m.exec(leash.stderr())?.[1];
  assert.ok(directory !== undefined && existsSync(directory), leash.stderr());
  const kills = RESTARTS_PER_WINDOW + 3;
  const guards: number[] = [guardOf(leashPid)!];
  for (let round = 0; round < kills; round += 1) {
    const guard = guards.at(-1)!;
    signalProcess(guard, 'SIGKILL');
    // Past the rate, the next one comes after the pause.
    const budget = 5000 + RESTART_BACKOFF_MS;
    assert.ok(await waitUntil(() => (guardOf(leashPid) ?? guard) !== guard, budget), `round ${round}: no new guard after ${guard}: ${leash.stderr()}`);
    guards.push(guardOf(leashPid)!);
  }
  // Each start said, with the pid of the guard that really started; nothing promised and not done.
  // The last guard can be in /proc before leash's line about it has reached this process: wait for it.
  const last = guards.at(-1)!;
  assert.ok(await waitUntil(() => leash.stderr().includes(`started (pid ${last})`), 5000), `the last guard's start was not said: ${leash.stderr()}`);
  const said = [...leash.stderr().matchAll(/(?:another one started|another cgroup guard started) \(pid (\d+)\)/g)].map((match) => Number(match[1]));
  assert.deepEqual(said, guards.slice(1), leash.stderr());
  assert.doesNotMatch(leash.stderr(), /starting another/);
  assert.ok((leash.stderr().match(/unguarded for/g)?.length ?? 0) >= 1, `the pause was not said: ${leash.stderr()}`);
  // The last guard guards: leash SIGKILLed, the tree ends and the cgroup goes.
  signalProcess(leashPid, 'SIGKILL');
  await exited(leash.child);
  assert.ok(await waitUntil(() => markedPids(mark).length === 0 && !existsSync(directory), 10_000), `left: ${markedPids(mark)}; ${existsSync(directory)}`);
});

// The guard is ended by SIGKILL only (and the signals dash cannot name): any other signal whose
// default is death would leave the tree unguarded until leash noticed. The kernel's SigIgn mask
// says which it ignores; one real SIGUSR1 shows it survives (it once died of it).
test('the cgroup guard ignores every signal a shell can name whose default would end it', { skip }, async (t) => {
  const { mark } = markedScratch(t);
  const leash = startLeash(['run', '--', 'sleep', '1000'], mark);
  const leashPid = leash.child.pid!;
  assert.ok(await waitUntil(() => markedPidRunning(mark, 'sleep 1000') !== undefined && guardOf(leashPid) !== undefined, 10_000), leash.stderr());
  const guard = guardOf(leashPid)!;
  // Its traps are set by its first line: wait until the kernel shows them.
  const fatal: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGALRM', 'SIGPIPE', 'SIGVTALRM', 'SIGPROF', 'SIGXCPU', 'SIGXFSZ', 'SIGTRAP', 'SIGSYS', 'SIGABRT', 'SIGIO', 'SIGPWR'];
  const ignoredMask = () => BigInt(`0x${/^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${guard}/status`, 'utf8'))?.[1] ?? '0'}`);
  const ignores = (signal: NodeJS.Signals) => ((ignoredMask() >> BigInt(constants.signals[signal] - 1)) & 1n) === 1n;
  assert.ok(await waitUntil(() => ignores('SIGTERM'), 5000), 'the guard never set its traps');
  assert.deepEqual(fatal.filter((signal) => !ignores(signal)), []);
  signalProcess(guard, 'SIGUSR1');
  signalProcess(leashPid, 'SIGTERM');
  assert.equal((await exited(leash.child)).code, 143, leash.stderr());
  assert.doesNotMatch(leash.stderr(), /another one started|guard exited/);
});
