// The teardown's freeze attacked: an escapee that starts a thread and forks from it while the walk
// is under way, an escapee that forks in a loop, an escapee family larger than the walk's cut, and
// a supervisor SIGKILLed while the groups are frozen. Whatever happens, nothing of the test is left
// stopped, and what the walk found is ended. The supervisor's test hooks
// (LEASH_TEST_SUPERVISOR_PAUSE, LEASH_TEST_SUPERVISOR_WALK_MAX) hold it at a chosen point.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { catchesSignals, isStoppedState, readChildren, readCommandLine, readProcStat } from '../../src/sys/procfs.js';
import { isProcessAlive, ownProcessGroupId } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, markedEnv, markedPids, withMark } from '../helpers/processes.js';
import { SUPERVISOR_MAIN, startTimeOf } from '../helpers/groups.js';
import { GROUP_PATHS, pidfdCount } from '../helpers/group-paths.js';

/** Lines of a child's stdout, awaited one by one with a deadline. */
function linesOf(child: ChildProcess) {
  let text = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => (text += chunk));
  let taken = 0;
  return async (budgetMs = 10_000): Promise<string> => {
    const ok = await waitUntil(() => text.split('\n').length - 1 > taken, budgetMs);
    if (!ok) throw new Error(`no line ${taken + 1} on stdout (so far: ${JSON.stringify(text)})`);
    return text.split('\n')[taken++]!;
  };
}

/** A group led by `sh`, which starts `setsid python3 -c "$ESCAPEE"` and waits. */
function startGroupWithEscapee(mark: string, escapee: string): ChildProcess & { pid: number } {
  const child = spawn('sh', ['-c', 'setsid python3 -c "$ESCAPEE" & wait'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: markedEnv(mark, { ESCAPEE: escapee }),
  });
  return child as ChildProcess & { pid: number };
}

function startSupervisor(mark: string, env: NodeJS.ProcessEnv, graceMs = 1000): ChildProcess & { stderrText: () => string } {
  const child = spawn(process.execPath, [SUPERVISOR_MAIN, '--parent-pgid', String(ownProcessGroupId()), '--grace-ms', String(graceMs)], {
    detached: true,
    stdio: ['pipe', 'ignore', 'pipe'],
    env: markedEnv(mark, env),
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  return Object.assign(child, { stderrText: () => stderr });
}

/** The supervisor's watchdog shell, once it runs. */
const watchdogOf = (supervisor: number) =>
  readChildren(supervisor)?.find((pid) => readCommandLine(pid)?.includes('leash-supervisor-watchdog'));

const isStopped = (pid: number) => isStoppedState(readProcStat(pid)?.state ?? '');
const stoppedOf = (mark: string) => markedPids(mark).filter(isStopped);

test('an escapee that starts a thread after the walk read it, and forks from that thread: the child is found', withMark(async (mark) => {
  // Single-threaded until SIGUSR1; then a thread forks a child, which hangs off that thread.
  const escapee = [
    'import os, signal, threading, time',
    'def fork_here():',
    '    child = os.fork()',
    '    if child == 0:',
    '        time.sleep(1000)',
    '        os._exit(0)',
    '    print(child, flush=True)',
    '    time.sleep(1000)',
    'signal.signal(signal.SIGUSR1, lambda *_: threading.Thread(target=fork_here, daemon=True).start())',
    'print(os.getpid(), flush=True)',
    'while True:',
    '    signal.pause()',
  ].join('\n');
  const group = startGroupWithEscapee(mark, escapee);
  const line = linesOf(group);
  const escapeePid = Number(await line());
  assert.ok(await waitUntil(() => catchesSignals(escapeePid, [10]), 10_000), 'the escapee did not install its handler');
  assert.equal(readdirSync(`/proc/${escapeePid}/task`).length, 1, 'the escapee starts single-threaded');

  // The supervisor pauses when the walk meets the escapee (its stat read, one thread).
  const supervisor = startSupervisor(mark, { LEASH_TEST_SUPERVISOR_PAUSE: 'escapee:3000' });
  supervisor.stdin!.end(`register ${group.pid} ${startTimeOf(group.pid)}\n`);
  assert.ok(await waitUntil(() => isStopped(group.pid), 10_000), 'the group was not frozen');
  process.kill(escapeePid, 'SIGUSR1');
  const child = Number(await line());
  assert.ok(readdirSync(`/proc/${escapeePid}/task`).length > 1, 'the escapee has a second thread now');
  const mainThreadChildren = readFileSync(`/proc/${escapeePid}/task/${escapeePid}/children`, 'latin1').split(' ');
  assert.ok(!mainThreadChildren.includes(String(child)), 'the child hangs off the new thread, not the main one');
  assert.ok(readChildren(escapeePid)?.includes(child));

  assert.deepEqual(await exited(supervisor, 15_000), { code: 0, signal: null });
  assert.equal(isProcessAlive(escapeePid), false, 'the escapee was ended');
  assert.equal(isProcessAlive(child), false, 'the child forked from the new thread was found and ended');
}));

test('an escapee forking in a loop is stopped when found: none of its children outlives the teardown', withMark(async (mark) => {
  const escapee = [
    'import os, time',
    'print(os.getpid(), flush=True)',
    'for _ in range(400):',
    '    if os.fork() == 0:',
    '        time.sleep(1000)',
    '        os._exit(0)',
    '    time.sleep(0.003)',
    'time.sleep(1000)',
  ].join('\n');
  const group = startGroupWithEscapee(mark, escapee);
  const escapeePid = Number(await linesOf(group)());
  assert.ok(await waitUntil(() => (readChildren(escapeePid)?.length ?? 0) >= 5, 10_000), 'the escapee is not forking');
  // Held frozen for a while after the walk: a running escapee would fork on meanwhile.
  const supervisor = startSupervisor(mark, { LEASH_TEST_SUPERVISOR_PAUSE: 'frozen:500' });
  supervisor.stdin!.end(`register ${group.pid} ${startTimeOf(group.pid)}\n`);
  assert.deepEqual(await exited(supervisor, 15_000), { code: 0, signal: null });
  const left = markedPids(mark).filter((pid) => pid !== supervisor.pid);
  assert.deepEqual(left, [], `left running or stopped: ${left.length} process(es)`);
}));

test('an escapee family larger than the walk\'s cut: the groups are still ended, the cut is said, nothing is left stopped', withMark(async (mark) => {
  const escapee = [
    'import os, time',
    'for _ in range(30):',
    '    if os.fork() == 0:',
    '        time.sleep(1000)',
    '        os._exit(0)',
    'print(os.getpid(), flush=True)',
    'time.sleep(1000)',
  ].join('\n');
  const group = startGroupWithEscapee(mark, escapee);
  const escapeePid = Number(await linesOf(group)());
  assert.ok(await waitUntil(() => (readChildren(escapeePid)?.length ?? 0) === 30, 10_000));
  const supervisor = startSupervisor(mark, { LEASH_TEST_SUPERVISOR_WALK_MAX: '10' }, 500);
  supervisor.stdin!.end(`register ${group.pid} ${startTimeOf(group.pid)}\n`);
  assert.deepEqual(await exited(supervisor, 15_000), { code: 0, signal: null });
  assert.match(supervisor.stderrText(), /the walk for escapees was cut at 10 processes/);
  assert.equal(isProcessAlive(group.pid), false, 'the group was ended');
  assert.equal(isProcessAlive(escapeePid), false, 'the escapee found before the cut was ended');
  assert.deepEqual(stoppedOf(mark), [], 'nothing is left stopped');
  // What lay below the cut runs on (it is the test's to end).
  const left = markedPids(mark).filter((pid) => pid !== supervisor.pid);
  assert.ok(left.length > 0 && left.length < 30, `${left.length} left below the cut`);
}));

/**
 * A group (sh, a member and a setsid escapee) registered with a supervisor that will hold its
 * freeze for 20 s, once its watchdog runs.
 */
async function frozenLater(mark: string) {
  const group = spawn('sh', ['-c', 'setsid sleep 1000 & echo $!; sleep 1000 & echo $!; wait'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: markedEnv(mark),
  });
  const line = linesOf(group);
  const escapee = Number(await line());
  const member = Number(await line());
  const supervisor = startSupervisor(mark, { LEASH_TEST_SUPERVISOR_PAUSE: 'frozen:20000' }, 5000);
  supervisor.stdin!.write(`register ${group.pid!} ${startTimeOf(group.pid!)}\n`);
  // The watchdog is started at the first registration; an EOF before that finds none.
  assert.ok(await waitUntil(() => watchdogOf(supervisor.pid!) !== undefined, 10_000), 'the supervisor started no watchdog');
  return { frozen: [group.pid!, member, escapee], supervisor };
}

/** SIGKILLs the supervisor and expects none of the test's processes left, stopped or running. */
async function killSupervisorExpectingNothingLeft(mark: string, supervisor: ChildProcess): Promise<void> {
  supervisor.kill('SIGKILL');
  await exited(supervisor, 10_000);
  assert.ok(
    await waitUntil(() => markedPids(mark).length === 0, 10_000),
    `left behind: ${markedPids(mark).map((pid) => `${pid} ${readProcStat(pid)?.state}`).join(', ')}`,
  );
}

test('a supervisor SIGKILLed while the groups and escapees are frozen leaves nothing behind, stopped or running', withMark(async (mark) => {
  const { frozen, supervisor } = await frozenLater(mark);
  const watchdog = watchdogOf(supervisor.pid!)!;
  assert.equal(readProcStat(watchdog)?.pgid, watchdog, 'the watchdog leads a group of its own');
  assert.equal(readFileSync(`/proc/${watchdog}/environ`, 'latin1').includes(mark), false, 'the watchdog carries none of our environment');
  supervisor.stdin!.end();
  assert.ok(await waitUntil(() => frozen.every(isStopped), 10_000), 'the group and its escapee were not frozen');
  await killSupervisorExpectingNothingLeft(mark, supervisor);
  assert.ok(await waitUntil(() => !isProcessAlive(watchdog), 10_000), 'the watchdog did not exit after its work');
}));

test('a supervisor SIGKILLed while 300 escapees are frozen: the watchdog heard of every one (one write per batch) and ends them all', withMark(async (mark) => {
  // One escapee with 300 children: more single-line writes than the list pipe takes at once.
  const group = spawn('sh', ['-c', 'setsid sh -c \'for i in $(seq 300); do sleep 1000 & done; echo $$; wait\' & wait'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: markedEnv(mark),
  });
  const escapee = Number(await linesOf(group)());
  assert.ok(await waitUntil(() => (readChildren(escapee)?.length ?? 0) === 300, 20_000), 'the escapee did not start its 300 children');
  const supervisor = startSupervisor(mark, { LEASH_TEST_SUPERVISOR_PAUSE: 'frozen:20000' }, 5000);
  supervisor.stdin!.write(`register ${group.pid!} ${startTimeOf(group.pid!)}\n`);
  assert.ok(await waitUntil(() => watchdogOf(supervisor.pid!) !== undefined, 10_000), 'the supervisor started no watchdog');
  supervisor.stdin!.end();
  assert.ok(await waitUntil(() => (readChildren(escapee) ?? []).every(isStopped) && isStopped(escapee), 10_000), 'the escapees were not all stopped');
  supervisor.kill('SIGKILL');
  await exited(supervisor, 10_000);
  assert.ok(
    await waitUntil(() => markedPids(mark).length === 0, 10_000),
    `left behind: ${markedPids(mark).length} process(es), ${stoppedOf(mark).length} of them stopped`,
  );
}));

test('a supervisor SIGKILLed during the grace: the watchdog does its SIGKILL (a group that ignores SIGTERM does not outlive it)', withMark(async (mark) => {
  const group = spawn('sh', ['-c', "trap '' TERM; sleep 1000 & echo $!; wait"], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: markedEnv(mark),
  });
  const member = Number(await linesOf(group)());
  // A short hold while frozen, so that the test sees the freeze begin and end.
  const supervisor = startSupervisor(mark, { LEASH_TEST_SUPERVISOR_PAUSE: 'frozen:300' }, 60_000);
  supervisor.stdin!.write(`register ${group.pid!} ${startTimeOf(group.pid!)}\n`);
  assert.ok(await waitUntil(() => watchdogOf(supervisor.pid!) !== undefined, 10_000), 'the supervisor started no watchdog');
  supervisor.stdin!.end();
  assert.ok(await waitUntil(() => isStopped(member), 10_000), 'the group was not frozen');
  assert.ok(await waitUntil(() => !isStopped(member) && !isStopped(group.pid!), 10_000), 'the group was not thawed');
  // Now in the grace (60 s): the group ignores its SIGTERM and runs on.
  assert.ok(isProcessAlive(member) && isProcessAlive(group.pid!));
  supervisor.kill('SIGKILL');
  await exited(supervisor, 10_000);
  assert.ok(
    await waitUntil(() => markedPids(mark).length === 0, 10_000),
    `left behind: ${markedPids(mark).map((pid) => `${pid} ${readProcStat(pid)?.state}`).join(', ')}`,
  );
}));

test('a chain of escapees longer than the watchdog\'s pipe: none is stopped unlisted, so a SIGKILLed supervisor leaves none stopped', withMark(async (mark) => {
  // Each link forks the next: one write to the watchdog per link, past what its pipe takes
  // (about 280 writes). A link stopped on a line still queued in the supervisor would be stopped
  // for good once the supervisor dies.
  const links = 400;
  const escapee = [
    'import os, time',
    'print(os.getpid(), flush=True)',
    `for _ in range(${links - 1}):`,
    '    if os.fork() != 0:',
    '        time.sleep(1000)',
    '        os._exit(0)',
    'print(os.getpid(), flush=True)',
    'time.sleep(1000)',
  ].join('\n');
  const group = startGroupWithEscapee(mark, escapee);
  const line = linesOf(group);
  const head = Number(await line());
  const tail = Number(await line(30_000));
  const supervisor = startSupervisor(mark, { LEASH_TEST_SUPERVISOR_PAUSE: 'frozen:30000' }, 5000);
  supervisor.stdin!.write(`register ${group.pid} ${startTimeOf(group.pid)}\n`);
  assert.ok(await waitUntil(() => watchdogOf(supervisor.pid!) !== undefined, 10_000), 'the supervisor started no watchdog');
  supervisor.stdin!.end();
  // The walk is over once the number of stopped processes holds still (the supervisor then sits
  // in its test pause, everything it stopped still stopped).
  let last = -1;
  let still = 0;
  assert.ok(
    await waitUntil(() => {
      const now = stoppedOf(mark).length;
      still = now === last && now > 0 ? still + 1 : 0;
      last = now;
      return still >= 5;
    }, 20_000),
    'the walk did not settle',
  );
  assert.ok(isStopped(head), 'the chain\'s head was not stopped');
  assert.ok(!isStopped(tail), `the chain's tail was stopped (${last} stopped): the walk stopped links the watchdog never heard of`);
  supervisor.kill('SIGKILL');
  await exited(supervisor, 10_000);
  assert.ok(
    await waitUntil(() => stoppedOf(mark).length === 0 && !isProcessAlive(head), 10_000),
    `left stopped: ${stoppedOf(mark).length}; head alive: ${isProcessAlive(head)}`,
  );
  // The links the walk left running are the test's to end (withMark).
}));

test('a watchdog killed by someone else is started again, and still covers the freeze', withMark(async (mark) => {
  const { frozen, supervisor } = await frozenLater(mark);
  const first = watchdogOf(supervisor.pid!)!;
  // Our supervisor's child, not yet reaped by it: the number is that shell's.
  process.kill(first, 'SIGKILL');
  assert.ok(
    await waitUntil(() => {
      const next = watchdogOf(supervisor.pid!);
      return next !== undefined && next !== first;
    }, 10_000),
    'no new watchdog after the first was killed',
  );
  supervisor.stdin!.end();
  assert.ok(await waitUntil(() => frozen.every(isStopped), 10_000), 'the group and its escapee were not frozen');
  await killSupervisorExpectingNothingLeft(mark, supervisor);
}));

// A group whose leader is gone at EOF (a wrapper that forked its server and exited) cannot be held
// by a `g` line, which needs the leader, and members forked after the registration are known to
// nobody (no witness refresh while a pidfd holds the group; on the fallback, one witness handed
// over). The first member met goes on the watchdog's list as the group's witness (`w`): a
// supervisor SIGKILLed while the group is frozen has the whole group KILLed (before: only the
// members listed one by one; the others were left stopped for good).
for (const path of GROUP_PATHS) {
  test(`[${path.name}] a supervisor SIGKILLed while a group whose leader is gone is frozen: every member is ended, none left stopped`, withMark(async (mark) => {
    const leader = spawn('sh', ['-c', 'read -r _; sleep 1000 & echo $!; sleep 1000 & echo $!; read -r _'], {
      detached: true,
      stdio: ['pipe', 'pipe', 'inherit'],
      env: markedEnv(mark),
    });
    const line = linesOf(leader);
    const supervisor = startSupervisor(mark, { ...path.env, LEASH_TEST_SUPERVISOR_PAUSE: 'frozen:20000' }, 5000);
    supervisor.stdin!.write(`register ${leader.pid!} ${startTimeOf(leader.pid!)}\n`);
    assert.ok(await waitUntil(() => watchdogOf(supervisor.pid!) !== undefined, 10_000), 'the supervisor started no watchdog');
    if (path.handles) assert.ok(await waitUntil(() => pidfdCount(supervisor.pid!) >= 1, 10_000), 'the supervisor never took the group\'s pidfd');
    leader.stdin!.write('\n'); // now it forks its two members
    const members = [Number(await line()), Number(await line())];
    // The fallback needs one witness to prove the group at EOF: the first member, as a replay gives it.
    if (!path.handles) supervisor.stdin!.write(`witness ${leader.pid!} ${members[0]} ${startTimeOf(members[0]!)}\n`);
    leader.stdin!.write('\n'); // and exits, leaving them in its group
    await exited(leader, 10_000);
    assert.ok(members.every((pid) => readProcStat(pid)?.pgid === leader.pid), 'the members did not stay in the group');
    supervisor.stdin!.end();
    assert.ok(await waitUntil(() => members.every(isStopped), 10_000), `the leaderless group was not frozen: ${supervisor.stderrText()}`);
    // Once the walk is over (the hook says so): the members met in it are on the list by then.
    assert.ok(await waitUntil(() => supervisor.stderrText().includes('test pause: frozen'), 10_000), 'the supervisor never paused');
    await killSupervisorExpectingNothingLeft(mark, supervisor);
  }));
}
