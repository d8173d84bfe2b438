// The death supervisor as a real process: real groups, real signals, a pipe the test holds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { readProcessMemory } from '../../src/sys/process-memory.js';
import { catchesSignals, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { constants as osConstants } from 'node:os';
import { isProcessAlive } from '../../src/sys/processes.js';
import { ownProcessGroupId } from '../../src/sys/processes.js';
import { exited, markedEnv, markedPids, newMark, waitForGone, withMark } from '../helpers/processes.js';
import { SUPERVISOR_MAIN, readPids, startGroup, startSupervisor, startTimeOf } from '../helpers/groups.js';


test('reaps a registered group at EOF and leaves an unregistered one alone', withMark(async (mark) => {
  const ours = startGroup(mark, 'sleep 1000 & sleep 1000 & wait');
  const other = startGroup(mark, 'exec sleep 1000');
  const dropped = startGroup(mark, 'exec sleep 1000');
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId()), '--grace-ms', '2000']);
  supervisor.stdin!.write(`register ${ours.pid} ${startTimeOf(ours.pid)}\n`);
  supervisor.stdin!.write(`register ${dropped.pid}\nunregister ${dropped.pid}\n`);
  supervisor.stdin!.end();
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  assert.equal(isProcessAlive(ours.pid), false);
  assert.equal(isProcessAlive(other.pid), true, 'a group never registered is not touched');
  assert.equal(isProcessAlive(dropped.pid), true, 'an unregistered group is not touched');
}));

test('a grandchild left behind by a dead leader is still reaped', withMark(async (mark) => {
  // The leader prints its own pid and the grandchild's, then exits; the grandchild keeps the group.
  const group = startGroup(mark, 'echo $$; sleep 1000 & echo $!; sleep 0.2');
  const [leader, grandchild] = await readPids(group, 2);
  const startTime = startTimeOf(leader!);
  await waitForGone([leader!], 5000);
  assert.ok(isProcessAlive(grandchild!));
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId())]);
  supervisor.stdin!.end(`register ${group.pid} ${startTime}\n`);
  await exited(supervisor);
  assert.equal(isProcessAlive(grandchild!), false);
}));

test('children that ignore SIGTERM are killed after the grace', withMark(async (mark) => {
  const group = startGroup(mark, `trap '' TERM; sleep 1000 & echo $!; wait`);
  const [child] = await readPids(group, 1);
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId()), '--grace-ms', '300']);
  supervisor.stdin!.end(`register ${group.pid} ${startTimeOf(group.pid)}\n`);
  const began = Date.now();
  await exited(supervisor);
  const took = Date.now() - began;
  assert.equal(isProcessAlive(group.pid), false);
  assert.equal(isProcessAlive(child!), false);
  assert.ok(took >= 300, `escalated only after the grace (took ${took} ms)`);
}));

test('a group left with only zombies counts as empty: no waiting out the grace', withMark(async (mark) => {
  // A parent outside the group that never reaps makes a group of two: a sleeping leader and a
  // member that exits at once. After SIGTERM both are zombies of a live parent.
  const script = [
    'import os, time',
    'os.setsid()',
    'leader = os.fork()',
    'if leader == 0:',
    '    os.setpgid(0, 0)',
    '    time.sleep(1000)',
    '    os._exit(0)',
    'os.setpgid(leader, leader)',
    'member = os.fork()',
    'if member == 0:',
    '    os.setpgid(0, leader)',
    '    os._exit(0)',
    'print(leader, flush=True)',
    'print(member, flush=True)',
    'time.sleep(1000)',
  ].join('\n');
  const parent = spawn('python3', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'], env: markedEnv(mark) });
  const [leader, member] = await readPids(parent, 2);
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId()), '--grace-ms', '8000']);
  supervisor.stdin!.end(`register ${leader} ${startTimeOf(leader!)}\n`);
  const began = Date.now();
  await exited(supervisor);
  const took = Date.now() - began;
  assert.ok(took < 4000, `the supervisor waited ${took} ms on zombies`);
  // Both are zombies now, still children of the (live) python parent.
  assert.equal(readProcStat(leader!)?.state, 'Z');
  assert.equal(isProcessAlive(member!), false);
  assert.ok(isProcessAlive(parent.pid!), 'the parent outside the group was not touched');
}));

test('refuses to run inside the parent process group, naming it', withMark(async (mark) => {
  const ownPgid = ownProcessGroupId();
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownPgid)], false);
  let stderr = '';
  supervisor.stderr!.on('data', (chunk) => { stderr += chunk; });
  const { code } = await exited(supervisor);
  assert.equal(code, 2);
  assert.match(stderr, new RegExp(`process group ${ownPgid}`));
}));

test('bad flags exit 64 with the usage', withMark(async (mark) => {
  for (const args of [[], ['--parent-pgid'], ['--parent-pgid', 'abc'], ['--bogus'], ['--parent-pgid', '5', '--grace-ms', '-1']]) {
    const supervisor = startSupervisor(mark, args);
    let stderr = '';
    supervisor.stderr!.on('data', (chunk) => { stderr += chunk; });
    const { code } = await exited(supervisor);
    assert.equal(code, 64, args.join(' '));
    assert.match(stderr, /usage: leash supervise/);
  }
}));

test('never signals pgid 0 or 1, its own group or the parent group; duplicates are one registration', withMark(async (mark) => {
  // A stand-in "parent group" the test owns, so that a wrong signal would show.
  const parentGroup = startGroup(mark, 'exec sleep 1000');
  const kept = startGroup(mark, 'exec sleep 1000');
  const reaped = startGroup(mark, 'exec sleep 1000');
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(parentGroup.pid), '--grace-ms', '2000']);
  let stderr = '';
  supervisor.stderr!.on('data', (chunk) => { stderr += chunk; });
  const lines = [
    'register 0', 'register 1', `register ${supervisor.pid}`, `register ${parentGroup.pid}`,
    `register ${kept.pid}`, `register ${kept.pid}`, `unregister ${kept.pid}`,
    `register ${reaped.pid}`, `register ${reaped.pid} ${startTimeOf(reaped.pid)}`,
  ];
  supervisor.stdin!.end(lines.join('\n') + '\n');
  // Had it signalled its own group, it would have died of SIGTERM rather than exit 0.
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  assert.ok(isProcessAlive(parentGroup.pid), 'the parent group is never signalled');
  assert.ok(isProcessAlive(kept.pid), 'register twice, unregister once: gone from the set');
  assert.equal(isProcessAlive(reaped.pid), false);
  assert.match(stderr, /unsafe process group 1\b/);
}));

test('garbage, over-long lines and an unterminated tail cost nothing', withMark(async (mark) => {
  const good = startGroup(mark, 'exec sleep 1000');
  const hidden = startGroup(mark, 'exec sleep 1000');
  const tail = startGroup(mark, 'exec sleep 1000');
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId())]);
  const stdin = supervisor.stdin!;
  stdin.write('hello\n\n\u0000\u00ff\u0007 register\nregister x\nunregister\n');
  // The tail of an over-long line must never be read as a command.
  stdin.write('z'.repeat(300) + ` register ${hidden.pid}\n`);
  stdin.write(`register ${good.pid}\n`);
  stdin.end(`register ${tail.pid}`);
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  assert.equal(isProcessAlive(good.pid), false);
  assert.ok(isProcessAlive(hidden.pid), 'tail of an over-long line was parsed');
  assert.ok(isProcessAlive(tail.pid), 'unterminated tail at EOF was parsed');
}));

test('SIGINT and SIGHUP do not stop it; EOF does', withMark(async (mark) => {
  const group = startGroup(mark, 'exec sleep 1000');
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId())]);
  supervisor.stdin!.write(`register ${group.pid} ${startTimeOf(group.pid)}\n`);
  const { SIGINT, SIGHUP } = osConstants.signals;
  assert.ok(await waitUntil(() => catchesSignals(supervisor.pid!, [SIGINT, SIGHUP]), 10_000), 'it never installed its handlers');
  supervisor.kill('SIGINT');
  supervisor.kill('SIGHUP');
  supervisor.stdin!.write('still here\n');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(supervisor.exitCode, null);
  assert.ok(isProcessAlive(group.pid));
  supervisor.stdin!.end();
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  assert.equal(isProcessAlive(group.pid), false);
}));

test("11 s of /dev/zero: growth stops after the first second, and it still works after", withMark(async (mark) => {
  const group = startGroup(mark, 'exec sleep 1000');
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId())]);
  const rss = () => (readProcessMemory(supervisor.pid!)?.rssKb ?? NaN) * 1024;
  // Started: its handlers are in, and its memory has settled (no change over 300 ms).
  assert.ok(await waitUntil(() => catchesSignals(supervisor.pid!, [osConstants.signals.SIGTERM]), 10_000), 'it never started');
  let settled = false;
  for (let last = rss(), round = 0; round < 30 && !settled; round += 1) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = rss();
    settled = now === last;
    last = now;
  }
  assert.ok(settled, 'its memory never settled');
  const zeros = Buffer.alloc(64 * 1024);
  let written = 0;
  const flood = async (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if (!supervisor.stdin!.write(zeros)) await new Promise((resolve) => supervisor.stdin!.once('drain', resolve));
      written += zeros.length;
    }
  };
  // The first second warms the read path up (about 6 MB: compiled code, the reading thread's
  // allocator); what matters is that it stops there.
  const start = rss();
  await flood(1000);
  const before = rss();
  await flood(10_000);
  const after = rss();
  supervisor.stdin!.end(`\nregister ${group.pid} ${startTimeOf(group.pid)}\n`);
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  assert.ok(written > 50 * 1024 * 1024, `wrote only ${written} bytes`);
  console.log(`# /dev/zero: ${(written / 1048576).toFixed(0)} MB written, RSS ${(start / 1048576).toFixed(1)} -> ${(before / 1048576).toFixed(1)} after 1 s -> ${(after / 1048576).toFixed(1)} MB`);
  assert.ok(after - before < 4 * 1024 * 1024, `RSS grew by ${((after - before) / 1048576).toFixed(1)} MB after the first second`);
  assert.ok(after - start < 10 * 1024 * 1024, `RSS grew by ${((after - start) / 1048576).toFixed(1)} MB in all`);
  assert.equal(isProcessAlive(group.pid), false);
}));

test('the token sweep: at EOF it ends unregistered token carriers; after `release` it does not', withMark(async (mark) => {
  const token = `tok${newMark()}`;
  const carrier = () => {
    const child = spawn('sh', ['-c', 'echo $$; setsid sleep 1000 & echo $!; wait'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: markedEnv(mark, { LEASH_OWNER_TOKEN: token }),
    });
    return readPids(child, 2);
  };
  const stranger = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore', env: markedEnv(mark, { LEASH_OWNER_TOKEN: `${token}x` }) });

  const released = await carrier();
  const calm = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId()), '--owner-token', token]);
  calm.stdin!.end('release\n');
  assert.deepEqual(await exited(calm), { code: 0, signal: null });
  assert.ok(released.every((pid) => isProcessAlive(pid)), 'a clean release swept');

  const swept = await carrier();
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId()), '--owner-token', token, '--grace-ms', '1000']);
  supervisor.stdin!.end();
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  assert.ok([...swept, ...released].every((pid) => !isProcessAlive(pid)), 'a token carrier survived the sweep');
  assert.ok(isProcessAlive(stranger.pid!), 'a process with a different token was swept');
}));

test('a process that calls setsid during the grace is swept too', withMark(async (mark) => {
  const token = `tok${newMark()}`;
  // On SIGTERM the leader starts a session-leaving sleeper, then exits: the group empties at
  // once, and only a second sweep can find the newcomer.
  const group = spawn('sh', ['-c', `trap 'setsid sleep 1000 & exit 0' TERM; while :; do sleep 0.05; done`], {
    detached: true,
    stdio: 'ignore',
    env: markedEnv(mark, { LEASH_OWNER_TOKEN: token }),
  });
  const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId()), '--owner-token', token, '--grace-ms', '3000']);
  supervisor.stdin!.end(`register ${group.pid} ${startTimeOf(group.pid!)}\n`);
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  assert.deepEqual(markedPids(mark), [], 'the newcomer outlived the teardown');
}));

test('--parent-pgid 0 (the group leader is outside our pid namespace) is accepted', withMark(async (mark) => {
  const group = startGroup(mark, 'exec sleep 1000');
  const supervisor = startSupervisor(mark, ['--parent-pgid', '0']);
  supervisor.stdin!.end(`register 0\nregister ${group.pid} ${startTimeOf(group.pid)}\n`);
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  assert.equal(isProcessAlive(group.pid), false);
}));

test('a non-blocking stdin (EAGAIN instead of a blocking read) still carries registrations and EOF', withMark(async (mark) => {
  // Someone may hand the supervisor a descriptor set O_NONBLOCK: its blocking read on the thread
  // pool then answers EAGAIN, and the pipe must be watched by the event loop instead.
  const group = startGroup(mark, 'exec sleep 1000');
  const wrapper = [
    'import fcntl, os, sys',
    'fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_NONBLOCK)',
    'os.execv(sys.argv[1], sys.argv[1:])',
  ].join('\n');
  const supervisor = spawn('python3', ['-c', wrapper, process.execPath, SUPERVISOR_MAIN, '--parent-pgid', String(ownProcessGroupId())], {
    detached: true,
    stdio: ['pipe', 'ignore', 'pipe'],
    env: markedEnv(mark),
  });
  // Its first read met the empty pipe (EAGAIN) and handed fd 0 to the event loop: its epoll
  // instance watches fd 0. Only now the line.
  const epollWatchesStdin = () => {
    try {
      return readdirSync(`/proc/${supervisor.pid}/fd`).some((fd) => {
        if (readlinkSync(`/proc/${supervisor.pid}/fd/${fd}`) !== 'anon_inode:[eventpoll]') return false;
        return /^tfd:\s+0\s/m.test(readFileSync(`/proc/${supervisor.pid}/fdinfo/${fd}`, 'latin1'));
      });
    } catch {
      return false;
    }
  };
  assert.ok(await waitUntil(epollWatchesStdin, 10_000), 'fd 0 was never watched by the event loop');
  assert.ok(catchesSignals(supervisor.pid!, [osConstants.signals.SIGTERM]));
  supervisor.stdin!.write(`register ${group.pid} ${startTimeOf(group.pid)}\n`);
  supervisor.stdin!.end();
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  assert.ok(await waitForGone([group.pid], 5000), 'the registered group outlived EOF');
}));
