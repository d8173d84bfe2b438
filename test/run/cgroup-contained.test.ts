// `leash run` contained in a cgroup v2 of its own (as root on this machine's hybrid hierarchy,
// v2 mounted apart at /sys/fs/cgroup/unified). Every cgroup made here is removed after the test.
// The scrubbed-escapee test fails with LEASH_CONTAINMENT=tree (today's process-tree design, the
// only one before cgroups): its guard never learns the escapee, which outlives leash run.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TreeCgroup, type CgroupLocation } from '../../src/sys/cgroup.js';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { readCommandLine, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { cgroupOf, destroyCgroup, scratchCgroup, usableCgroup } from '../helpers/cgroup.js';
import { guardOf, markedScratch, readJson, startLeash } from '../helpers/leash-run.js';
import { readEndedRecord } from '../../src/run/ended.js';
import { CLI_ENTRY, exited, markedPids, markedPidRunning, waitForGone } from '../helpers/processes.js';
import { readCalls } from './walks.js';

const place = await usableCgroup();
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : false;

/** The run's cgroup directory, from its one containment line; undefined until it is written. */
function runCgroupOf(stderr: string): string | undefined {
  return /containment: cgroup v2 \((.+)\)$/m.exec(stderr)?.[1];
}

/** Destroys the run's cgroup after the test if leash left it (it should not). */
function cleanUpRun(t: { after: (fn: () => Promise<void>) => void }, stderr: () => string): void {
  t.after(async () => {
    const directory = runCgroupOf(stderr());
    if (directory !== undefined) await destroyCgroup(directory);
  });
}

/** Like waitUntil, at a fixed short interval: the moment matters here. */
async function pollEvery(ms: number, done: () => boolean, budgetMs: number): Promise<boolean> {
  const deadline = performance.now() + budgetMs;
  while (performance.now() < deadline) {
    if (done()) return true;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
  return done();
}

test('contained: a 20+ process tree with setsid + env -i escapees that ignore SIGTERM ends by cgroup.kill after the grace, and the cgroup is removed', { skip }, async (t) => {
  const { mark, state } = markedScratch(t);
  const escape = `setsid env -i LEASH_TEST_MARK=${mark} sh -c 'trap "" TERM; exec sleep 1002'`;
  const orphans = `(setsid env -i LEASH_TEST_MARK=${mark} sh -c 'trap "" TERM; sleep 1003 & sleep 1003 & wait' &)`;
  const script = `for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1000 & done; for i in 1 2 3 4; do ${escape} & done; ${orphans}; exec sleep 1001`;
  const leash = startLeash(['run', '--grace', '1', '--state', state, '--', 'sh', '-c', script], mark);
  cleanUpRun(t, leash.stderr);
  const leashPid = leash.child.pid as number;
  assert.ok(await waitUntil(() => runCgroupOf(leash.stderr()) !== undefined, 10_000), `no containment line: ${leash.stderr()}`);
  const directory = runCgroupOf(leash.stderr()) as string;
  const members = () => readFileSync(join(directory, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  assert.ok(await waitUntil(() => members().length >= 20, 10_000), `only ${members().length} members: ${leash.stderr()}`);
  // The escapees really escaped: their own sessions, no token, yet in the run's cgroup. Waited
  // for, not read once: twenty members can be there before the last escapee's shell has exec'd
  // its sleep (seen with two suites running at once).
  const escapeesNow = () => markedPids(mark).filter((pid) => ['sleep 1002', 'sleep 1003'].includes((readCommandLine(pid) ?? []).join(' ')));
  assert.ok(await waitUntil(() => escapeesNow().length >= 6, 10_000), `escapees: ${escapeesNow().length}`);
  const escapees = escapeesNow();
  const runner = markedPidRunning(mark, 'sleep 1001') as number;
  const runCgroup = cgroupOf(runner);
  assert.ok(runCgroup !== undefined && directory.endsWith(runCgroup), `runner in ${runCgroup}, not ${directory}`);
  for (const pid of escapees) {
    assert.notEqual(readProcStat(pid)?.sid, readProcStat(runner)?.sid, `escapee ${pid} shares the runner's session`);
    assert.ok(!readFileSync(`/proc/${pid}/environ`, 'latin1').includes('LEASH_OWNER_TOKEN='), `escapee ${pid} has a token`);
    assert.equal(cgroupOf(pid), runCgroup, `escapee ${pid}`);
  }
  // leash and its guard are outside the cgroup: cgroup.kill must not end them.
  assert.ok(!members().includes(leashPid));
  assert.ok(!members().includes(guardOf(leashPid) ?? -1), 'the guard is in the cgroup');
  signalProcess(leashPid, 'SIGTERM');
  const { code } = await exited(leash.child, 20_000);
  assert.equal(code, 143, leash.stderr());
  assert.equal(readJson(state)?.escalated, true, 'the escapees ignore SIGTERM: only the kill after the grace ends them');
  assert.deepEqual(escapees.filter((pid) => isProcessAlive(pid)), []);
  assert.deepEqual(markedPids(mark), []);
  assert.equal(existsSync(directory), false, 'the run cgroup was not removed');
});

test('contained: an escapee that leaves its session and scrubs its environment a few ms before leash run is SIGKILLed is ended by the guard', { skip }, async (t) => {
  const { mark, dir } = markedScratch(t);
  const go = join(dir, 'go');
  execFileSync('mkfifo', [go]);
  // A double fork: the escapee's parent exits at once, so no parent chain leads to it either.
  const script = `read x < '${go}'; (setsid env -i LEASH_TEST_MARK=${mark} sleep 1001 & echo "escapee $!"); exec sleep 1000`;
  const leash = startLeash(['run', '--grace', '2', '--', 'sh', '-c', script], mark);
  cleanUpRun(t, leash.stderr);
  const leashPid = leash.child.pid as number;
  assert.ok(await waitUntil(() => /phase=running/.test(leash.stderr()), 10_000), leash.stderr());
  writeFileSync(go, 'go\n');
  assert.ok(await waitUntil(() => /^escapee \d+$/m.test(leash.stdout()), 10_000), `no escapee: ${leash.stderr()}`);
  const pid = Number(/^escapee (\d+)$/m.exec(leash.stdout())![1]);
  // The moment it has left the session and become the scrubbed sleep, leash is SIGKILLed.
  const escaped = () => {
    const stat = readProcStat(pid);
    return stat?.sid === pid && stat.ppid === leashPid && (readCommandLine(pid) ?? []).join(' ') === 'sleep 1001';
  };
  assert.ok(await pollEvery(1, escaped, 10_000), `escapee ${pid} never escaped: ${JSON.stringify(readProcStat(pid))}`);
  const seenAt = performance.now();
  signalProcess(leashPid, 'SIGKILL');
  const gapMs = performance.now() - seenAt;
  // The case really happened: the escapee ran, in a session of its own, with no token.
  assert.ok(!readFileSync(`/proc/${pid}/environ`, 'latin1').includes('LEASH_OWNER_TOKEN='));
  // Milliseconds, not a sweep's second: kill(2) itself may wait for a CPU on a loaded machine.
  assert.ok(gapMs < 250, `leash was SIGKILLed ${gapMs} ms after the escape was seen`);
  await exited(leash.child);
  assert.ok(await waitForGone([pid], 15_000), `escapee ${pid} outlived leash run`);
});

test('contained and idle: leash run reads nothing (no walk of /proc)', { skip }, async (t) => {
  const { mark } = markedScratch(t);
  const leash = startLeash(['run', '--', 'sh', '-c', 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1000 & done; exec sleep 1001'], mark);
  cleanUpRun(t, leash.stderr);
  const leashPid = leash.child.pid as number;
  assert.ok(await waitUntil(() => markedPids(mark).length >= 11, 10_000), leash.stderr());
  assert.match(leash.stderr(), /containment: cgroup v2/);
  // Past start-up (the first checks), then two quiet seconds.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const before = readCalls(leashPid);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.equal(readCalls(leashPid) - before, 0, 'leash run read something while idle');
  signalProcess(leashPid, 'SIGTERM');
  await exited(leash.child);
  assert.deepEqual(markedPids(mark), []);
});

test('"populated 0" comes as an event (inotify on cgroup.events), with no polling', { skip }, async (t) => {
  const parent = scratchCgroup(t, place as CgroupLocation);
  const cgroup = TreeCgroup.create({ ...(place as CgroupLocation), ...parent });
  assert.ok(cgroup instanceof TreeCgroup, String(cgroup));
  t.after(() => destroyCgroup(cgroup.directory));
  const child = spawn('sh', ['-c', 'echo $$ > "$1/cgroup.procs"; exec sleep 0.5', 'sh', cgroup.directory], { stdio: 'ignore' });
  assert.ok(await waitUntil(() => cgroup.populated(), 5000), 'the child never entered');
  const events: boolean[] = [];
  let emptyAt = 0;
  cgroup.watch(() => {
    const full = cgroup.populated();
    events.push(full);
    if (!full && emptyAt === 0) emptyAt = performance.now();
  });
  assert.ok(cgroup.watching);
  const start = performance.now();
  assert.ok(await waitUntil(() => emptyAt > 0, 10_000), `no event said empty: ${JSON.stringify(events)}`);
  await exited(child);
  assert.ok(emptyAt - start >= 200, 'empty before the child could have ended');
  assert.equal(cgroup.remove(), true);
  assert.equal(existsSync(cgroup.directory), false);
});

test('leash status shows the containment; --json keeps its ten keys', { skip }, async (t) => {
  const { mark, state } = markedScratch(t);
  const leash = startLeash(['run', '--state', state, '--', 'sleep', '1000'], mark);
  cleanUpRun(t, leash.stderr);
  assert.ok(await waitUntil(() => readJson(state)?.phase === 'running', 10_000), leash.stderr());
  const human = execFileSync(process.execPath, [CLI_ENTRY, 'status', state], { encoding: 'utf8' });
  assert.match(human, /^containment +cgroup v2 \(.*leash-run-\d+-[0-9a-f]+(?:-[lp]\d*)?\)$/m);
  const json = JSON.parse(execFileSync(process.execPath, [CLI_ENTRY, 'status', '--json', state], { encoding: 'utf8' })) as object;
  assert.equal(Object.keys(json).length, 10);
  signalProcess(leash.child.pid as number, 'SIGTERM');
  await exited(leash.child);
});

test('LEASH_CONTAINMENT=tree: the process tree, said once', { skip }, async (t) => {
  const { mark } = markedScratch(t);
  const leash = startLeash(['run', '--', 'sh', '-c', 'exit 3'], mark, { LEASH_CONTAINMENT: 'tree' });
  const { code } = await exited(leash.child);
  assert.equal(code, 3);
  assert.equal(leash.stderr().match(/containment: /g)?.length, 1, leash.stderr());
  assert.match(leash.stderr(), /containment: process tree \(subreaper\); no usable cgroup: LEASH_CONTAINMENT=tree$/m);
});

test('contained: a stop of more processes than a line shows: eight named on stderr (only those read before the signal), the rest counted; with a state document, every one named in the record', { skip }, async (t) => {
  const { mark, state } = markedScratch(t);
  // Twelve sleepers, each with its own command line (sleep 311 ... sleep 322).
  const script = 'for i in 11 12 13 14 15 16 17 18 19 20 21 22; do sleep 3$i & done; sleep 0.3; exit 0';
  const plain = startLeash(['run', '--grace', '5', 'sh', '-c', script], mark);
  assert.equal((await exited(plain.child, 20_000)).code, 0, plain.stderr());
  const line = /ending (\d+) processes with SIGTERM: (.*)$/m.exec(plain.stderr());
  // Exact, from the cgroup's list (the process tree names what its last walk saw).
  assert.equal(line?.[1], '12', plain.stderr());
  assert.equal(line?.[2]?.match(/\d+ \(sleep 3\d\d\)/g)?.length, 8, plain.stderr());
  assert.match(line?.[2] ?? '', / and 4 more$/);
  const recorded = startLeash(['run', '--grace', '5', '--state', state, 'sh', '-c', script], mark);
  assert.equal((await exited(recorded.child, 20_000)).code, 0, recorded.stderr());
  const record = readEndedRecord(state);
  assert.equal(record?.ended.filter((entry) => /^sleep 3\d\d$/.test(entry.command) && entry.signal === 'SIGTERM').length, 12, JSON.stringify(record));
  assert.equal(record?.more, 0);
});
