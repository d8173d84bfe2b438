// The seed's own contract (issue 28, case 1): a group registered while its leader lived is ended at
// EOF even after the leader exited and left a member behind. The supervisor holds the group by
// identity: the leader's pidfd (PIDFD_SIGNAL_PROCESS_GROUP, Linux >= 6.9), or, on the fallback
// (LEASH_GROUP_HANDLES=off, older kernels), witnesses: members seen in the group while it was
// proven. Every case runs on both paths.
import assert from 'node:assert/strict';
import { readlinkSync } from 'node:fs';
import { test } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { closeFd, loadNativeSync, openPidfd } from '../../src/sys/native.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { isProcessAlive, ownProcessGroupId } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, markedEnv, waitForGone, withMark } from '../helpers/processes.js';
import { listenToSupervisor, readPids, SUPERVISOR_MAIN, startTimeOf } from '../helpers/groups.js';
import { GROUP_PATHS, pidfdCount } from '../helpers/group-paths.js';

const linux = process.platform === 'linux';

function startSupervisorOn(mark: string, env: NodeJS.ProcessEnv, graceMs: number): ChildProcess {
  return spawn(process.execPath, [SUPERVISOR_MAIN, '--parent-pgid', String(ownProcessGroupId()), '--grace-ms', String(graceMs)], {
    detached: true,
    stdio: ['pipe', 'ignore', 'pipe'],
    env: markedEnv(mark, env),
  });
}

/** A leader that forks `member` into its group, prints its pid, then waits for a line before it exits. */
function leaderWithMember(mark: string, member: string): ChildProcess & { pid: number } {
  const child = spawn('sh', ['-c', `${member} & echo $!; read -r _`], { detached: true, stdio: ['pipe', 'pipe', 'ignore'], env: markedEnv(mark) });
  return child as ChildProcess & { pid: number };
}

/** Registers the group and, on the handle path, waits until the supervisor holds its pidfd. */
async function register(supervisor: ChildProcess, roundTrip: () => Promise<void>, pgid: number, handles: boolean): Promise<void> {
  supervisor.stdin!.write(`register ${pgid} ${startTimeOf(pgid)}\n`);
  await roundTrip();
  if (handles) assert.ok(await waitUntil(() => pidfdCount(supervisor.pid!) >= 1, 10_000), 'the supervisor never took the group\'s pidfd');
}

for (const path of GROUP_PATHS) {
  const handles = path.handles;

  test(`[${path.name}] register while the leader lives; the leader exits leaving a member; EOF: the member gets SIGTERM`, { skip: !linux }, withMark(async (mark) => {
    const supervisor = startSupervisorOn(mark, path.env, 3000);
    const { roundTrip, text } = listenToSupervisor(supervisor);
    const leader = leaderWithMember(mark, 'sleep 1000');
    const [member] = await readPids(leader, 1);
    await register(supervisor, roundTrip, leader.pid, handles);
    leader.stdin!.end('\n');
    await exited(leader);
    // The case really happened: the leader is gone (reaped), its member runs on in its group.
    assert.equal(readProcStat(leader.pid), undefined, 'the leader is still there');
    assert.ok(isProcessAlive(member!) && readProcStat(member!)?.pgid === leader.pid, 'no member left in the group');

    supervisor.stdin!.end();
    assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
    assert.ok(await waitForGone([member!], 5000), 'the member survived the owner\'s death');
    assert.doesNotMatch(text(), /provably ours/);
  }));

  test(`[${path.name}] the member ignores SIGTERM: it gets SIGKILL after the grace`, { skip: !linux }, withMark(async (mark) => {
    const supervisor = startSupervisorOn(mark, path.env, 300);
    const { roundTrip, text } = listenToSupervisor(supervisor);
    // An ignored disposition survives exec: this sleep ignores SIGTERM.
    const leader = leaderWithMember(mark, `sh -c 'trap "" TERM; exec sleep 1000'`);
    const [member] = await readPids(leader, 1);
    await register(supervisor, roundTrip, leader.pid, handles);
    leader.stdin!.end('\n');
    await exited(leader);
    assert.ok(await waitUntil(() => readProcStat(member!)?.pgid === leader.pid && /sleep/.test(readlinkSafe(member!)), 5000), 'the member never became sleep');
    assert.equal(readProcStat(leader.pid), undefined, 'the leader is still there');

    supervisor.stdin!.end();
    assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
    assert.ok(await waitForGone([member!], 5000), 'the TERM-ignoring member survived');
    assert.doesNotMatch(text(), /provably ours/);
  }));

  test(`[${path.name}] a member forked after the registration, while the leader lived a while: ended at EOF after the leader's exit`, { skip: !linux }, withMark(async (mark) => {
    const supervisor = startSupervisorOn(mark, path.env, 3000);
    const { roundTrip, text } = listenToSupervisor(supervisor);
    // The leader waits for a line, forks its member, lives on for a second (witnesses are refreshed every 250 ms), then exits.
    const leader = spawn('sh', ['-c', 'read -r _; sleep 1000 & echo $!; sleep 1'], { detached: true, stdio: ['pipe', 'pipe', 'ignore'], env: markedEnv(mark) }) as ChildProcess & { pid: number };
    await register(supervisor, roundTrip, leader.pid, handles);
    leader.stdin!.end('\n');
    const [member] = await readPids(leader, 1);
    await exited(leader);
    assert.equal(readProcStat(leader.pid), undefined, 'the leader is still there');
    assert.ok(isProcessAlive(member!) && readProcStat(member!)?.pgid === leader.pid, 'no member left in the group');

    supervisor.stdin!.end();
    assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
    assert.ok(await waitForGone([member!], 5000), 'the member survived the owner\'s death');
    assert.doesNotMatch(text(), /provably ours/);
  }));
}

function readlinkSafe(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
}

test('bad identity lines get a notice and cost no registration: a handle that is no pidfd, a witness of an unregistered group', { skip: !linux }, withMark(async (mark) => {
  const supervisor = startSupervisorOn(mark, {}, 2000);
  const { roundTrip, text } = listenToSupervisor(supervisor);
  const leader = leaderWithMember(mark, 'sleep 1000');
  const [member] = await readPids(leader, 1);
  // Descriptor 2 is no handle (refused at parse); 7 is not open; stderr at 3 would be no pidfd.
  supervisor.stdin!.write(`register ${leader.pid} ${startTimeOf(leader.pid)}\nhandle ${leader.pid} 2\nhandle ${leader.pid} 7\nwitness 999999 1000 1\nhandle 999999 7\n`);
  await roundTrip();
  assert.match(text(), /ignoring a malformed control line \("handle \d+ 2"\)/);
  assert.match(text(), new RegExp(`ignoring descriptor 7: it is no pidfd of process group ${leader.pid}'s leader`));
  assert.match(text(), /ignoring a witness of process group 999999, which is not registered/);
  supervisor.stdin!.end();
  assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
  // The registration stands: the group is ended at EOF.
  assert.ok(await waitForGone([leader.pid, member!], 5000), 'the registered group survived');
}));

// A guard that hears a leader's exit sends `register PGID 0` at once, while the leader is still an
// unreaped zombie (its parent has not waited for it yet). The group must stay held: by its pidfd,
// or by the members recorded then (a zombie at the number is the leader itself while a witness
// still holds the group), never dropped as "stale".
for (const path of GROUP_PATHS) {
  test(`[${path.name}] register PGID 0 while the exited leader is an unreaped zombie: the member still ends at EOF`, { skip: !linux }, withMark(async (mark) => {
    const supervisor = startSupervisorOn(mark, path.env, 3000);
    const { roundTrip, text } = listenToSupervisor(supervisor);
    // python3 starts the leader and never waits for it: the leader stays a zombie after its exit.
    const parent = spawn('python3', ['-c', [
      'import subprocess, sys, time',
      "p = subprocess.Popen(['sh', '-c', 'env -i sleep 1000 & echo $!; read -r _'], start_new_session=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)",
      'print(p.pid)',
      'print(p.stdout.readline().decode().strip(), flush=True)',
      'sys.stdin.readline()',
      'p.stdin.write(b"\\n"); p.stdin.flush()',
      'time.sleep(1000)',
    ].join('\n')], { detached: true, stdio: ['pipe', 'pipe', 'inherit'], env: markedEnv(mark) });
    try {
      const [leader, member] = await readPids(parent, 2);
      await register(supervisor, roundTrip, leader!, path.handles);
      parent.stdin!.write('\n'); // the leader exits; nobody reaps it
      assert.ok(await waitUntil(() => readProcStat(leader!)?.state === 'Z', 5000), 'the leader never became a zombie');
      assert.ok(isProcessAlive(member!) && readProcStat(member!)?.pgid === leader, 'no member left in the group');
      supervisor.stdin!.write(`register ${leader} 0\n`);
      await roundTrip();
      supervisor.stdin!.end();
      assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
      assert.ok(await waitForGone([member!], 5000), `the member survived the owner's death: ${text()}`);
    } finally {
      parent.kill('SIGKILL');
    }
  }));
}

// A replacement supervisor gets the owner's pidfds as inherited descriptors, declared by the
// replay's first line (`handles N`: slots 3 to 2+N). One whose `handle` line is refused (its group
// was unregistered before the line came) would stay open for the supervisor's life, one per
// replay: it is closed. A descriptor the line does not declare, or one a group holds, is never
// closed on a refused line; a `handles` line that is not the first is ignored.
test('an inherited handle no group takes is closed; one a group holds, or one not declared, stays open', { skip: !linux }, withMark(async (mark) => {
  assert.ok(loadNativeSync(), 'the native calls did not load');
  const leader = leaderWithMember(mark, 'sleep 1000');
  const [member] = await readPids(leader, 1);
  const stranger = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore', env: markedEnv(mark) }) as ChildProcess & { pid: number };
  const held = openPidfd(leader.pid)!;
  const refused = openPidfd(stranger.pid)!;
  const undeclared = openPidfd(stranger.pid)!;
  let supervisor: ChildProcess | undefined;
  try {
    supervisor = spawn(process.execPath, [SUPERVISOR_MAIN, '--parent-pgid', String(ownProcessGroupId()), '--grace-ms', '2000'], {
      detached: true,
      stdio: ['pipe', 'ignore', 'pipe', held, refused, undeclared],
      env: markedEnv(mark),
    });
    const { roundTrip, text } = listenToSupervisor(supervisor);
    const pid = supervisor.pid!;
    const isPidfd = (fd: number) => /^(anon_inode:\[pidfd\]|pidfd:)/.test(readFdLink(pid, fd));
    assert.ok([3, 4, 5].every(isPidfd), 'the supervisor did not inherit three pidfds');
    supervisor.stdin!.write(
      `handles 2\nrecall ${leader.pid} ${startTimeOf(leader.pid)}\nhandle ${leader.pid} 3\n` +
        // Five notices at most: the sixth would wait for the rate limit's next window.
        `handle ${stranger.pid} 4\nhandle ${stranger.pid} 3\nhandles 3\nhandle ${stranger.pid} 5\n`,
    );
    await roundTrip();
    assert.match(text(), new RegExp(`ignoring the handle of process group ${stranger.pid}, which is not registered`));
    assert.match(text(), /ignoring a `handles` line that is not the first line/);
    assert.ok(await waitUntil(() => !isPidfd(4), 5000), 'the refused inherited handle stayed open');
    assert.ok(isPidfd(3), 'the handle a group holds was closed by a refused line naming it');
    assert.ok(isPidfd(5), 'a descriptor the first line does not declare was closed');
    supervisor.stdin!.end();
    assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
    assert.ok(await waitForGone([leader.pid, member!], 5000), 'the recalled group survived EOF');
    assert.ok(isProcessAlive(stranger.pid), 'the stranger was signalled');
  } finally {
    for (const fd of [held, refused, undeclared]) closeFd(fd);
    stranger.kill('SIGKILL');
    if (supervisor && supervisor.exitCode === null) supervisor.kill('SIGKILL');
  }
}));

// A handle attached, then let go (`unregister` right after a restart) before the supervisor has
// loaded its native calls (here never: the fallback is forced): closed all the same.
test('an inherited handle let go before the native calls load is closed', { skip: !linux }, withMark(async (mark) => {
  assert.ok(loadNativeSync(), 'the native calls did not load');
  const leader = leaderWithMember(mark, 'sleep 1000');
  const [member] = await readPids(leader, 1);
  const handle = openPidfd(leader.pid)!;
  let supervisor: ChildProcess | undefined;
  try {
    supervisor = spawn(process.execPath, [SUPERVISOR_MAIN, '--parent-pgid', String(ownProcessGroupId()), '--grace-ms', '2000'], {
      detached: true,
      stdio: ['pipe', 'ignore', 'pipe', handle],
      env: markedEnv(mark, { LEASH_GROUP_HANDLES: 'off' }),
    });
    const { roundTrip } = listenToSupervisor(supervisor);
    const pid = supervisor.pid!;
    const isPidfd = (fd: number) => /^(anon_inode:\[pidfd\]|pidfd:)/.test(readFdLink(pid, fd));
    assert.ok(isPidfd(3), 'the supervisor did not inherit the pidfd');
    supervisor.stdin!.write(`handles 1\nrecall ${leader.pid} ${startTimeOf(leader.pid)}\nhandle ${leader.pid} 3\n`);
    await roundTrip();
    assert.ok(isPidfd(3), 'the attached handle was closed');
    supervisor.stdin!.write(`unregister ${leader.pid}\n`);
    assert.ok(await waitUntil(() => !isPidfd(3), 5000), 'the handle of the unregistered group stayed open');
    supervisor.stdin!.end();
    assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
    assert.ok(isProcessAlive(member!), 'the unregistered group was signalled');
  } finally {
    closeFd(handle);
    leader.kill('SIGKILL');
    if (member) process.kill(member, 'SIGKILL');
    if (supervisor && supervisor.exitCode === null) supervisor.kill('SIGKILL');
  }
}));

function readFdLink(pid: number, fd: number): string {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return '';
  }
}
