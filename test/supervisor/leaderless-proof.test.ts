// Groups whose leader is gone (docs/supervisor.md, "Proof before every signal"): the supervisor
// signals only members it can prove its own: recorded when the group was registered, carrying the
// owner token, or descending from one of those. The seed's contract holds: a bare `register` of a
// group whose wrapper already exited still ends what the wrapper left, and what that starts later.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { readProcStat } from '../../src/sys/procfs.js';
import { isProcessAlive, ownProcessGroupId, signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { exited, markedEnv, newMark, waitForGone, withMark } from '../helpers/processes.js';
import { listenToSupervisor, readPids, startGroup, startSupervisor, startTimeOf } from '../helpers/groups.js';
import { GROUP_PATHS, pidfdCount } from '../helpers/group-paths.js';

test('bare `register` of a group whose leader exited: its member, and a child the member forks later, are ended at EOF', withMark(async (mark) => {
  const dir = mkdtempSync(join(tmpdir(), 'leash-leaderless-'));
  try {
    // The member waits for a flag, then forks a child and writes its pid; the leader exits at once.
    writeFileSync(join(dir, 'member.sh'), `while [ ! -e "${dir}/go" ]; do sleep 0.05; done\nsleep 1000 & echo $! > "${dir}/child"\nwait\n`);
    const group = startGroup(mark, `sh "${dir}/member.sh" & echo $!`);
    const [member] = await readPids(group, 1);
    await exited(group);
    assert.ok(isProcessAlive(member!) && readProcStat(member!)?.pgid === group.pid, 'no leaderless group');
    assert.equal(isProcessAlive(group.pid), false);

    const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId()), '--grace-ms', '2000']);
    const { roundTrip, text } = listenToSupervisor(supervisor);
    supervisor.stdin!.write(`register ${group.pid}\n`);
    await roundTrip();
    writeFileSync(join(dir, 'go'), '');
    assert.ok(await waitUntil(() => /^[0-9]+\n$/.test(safeRead(join(dir, 'child'))), 10_000), 'the member never forked');
    const child = Number(readFileSync(join(dir, 'child'), 'utf8'));
    const stat = readProcStat(child);
    assert.ok(stat && stat.pgid === group.pid && stat.ppid === member, 'the child is not in the group below the member');

    supervisor.stdin!.end();
    assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
    assert.ok(await waitForGone([member!, child], 5000), 'the recorded member or its later child survived');
    assert.doesNotMatch(text(), /provably ours/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}));

// Registered while its leader lived, the leader forks its member and exits at once: with a handle
// (the leader's pidfd, taken at registration) the member is the group's and is ended; on the
// fallback no witness was seen (the member lived less than one refresh under the live leader), so
// only the token proves a member, and the plain one is left and reported (docs/supervisor.md).
for (const path of GROUP_PATHS) {
  test(`[${path.name}] a group registered while its leader lived, the leader gone at EOF: token carriers are ended; a plain member ${path.handles ? 'too (the handle)' : 'is left and reported (no witness seen)'}`, withMark(async (mark) => {
    const token = `tok${newMark()}`;
    // Both leaders wait for a line on stdin, then leave a sleep in their group (through a subshell
    // that exits at once: never a child of the leader) and exit.
    const leave = (env: NodeJS.ProcessEnv) =>
      spawn('sh', ['-c', 'read -r _; (sleep 1000 & echo $!)'], { detached: true, stdio: ['pipe', 'pipe', 'ignore'], env });
    const tokened = leave(markedEnv(mark, { LEASH_OWNER_TOKEN: token }));
    const plain = leave(markedEnv(mark));
    const supervisor = startSupervisor(mark, ['--parent-pgid', String(ownProcessGroupId()), '--owner-token', token, '--grace-ms', '2000'], true, path.env);
    const { roundTrip, text } = listenToSupervisor(supervisor);
    supervisor.stdin!.write(`register ${tokened.pid} ${startTimeOf(tokened.pid!)}\nregister ${plain.pid} ${startTimeOf(plain.pid!)}\n`);
    await roundTrip();
    if (path.handles) assert.ok(await waitUntil(() => pidfdCount(supervisor.pid!) >= 2, 10_000), 'the supervisor never took the pidfds');
    tokened.stdin!.end('go\n');
    plain.stdin!.end('go\n');
    const [[tokenedMember], [plainMember]] = await Promise.all([readPids(tokened, 1), readPids(plain, 1)]);
    await Promise.all([exited(tokened), exited(plain)]);
    const pairs: Array<[number, number]> = [[tokenedMember!, tokened.pid!], [plainMember!, plain.pid!]];
    for (const [member, leader] of pairs) {
      assert.ok(isProcessAlive(member) && readProcStat(member)?.pgid === leader && !isProcessAlive(leader), 'no leaderless group');
    }

    supervisor.stdin!.end();
    assert.deepEqual(await exited(supervisor), { code: 0, signal: null });
    try {
      assert.ok(await waitForGone([tokenedMember!], 5000), 'the token carrier of a leaderless group survived');
      if (path.handles) {
        assert.ok(await waitForGone([plainMember!], 5000), 'the plain member survived its group\'s handle');
        assert.doesNotMatch(text(), /provably ours/);
      } else {
        assert.equal(isProcessAlive(plainMember!), true, 'a member nothing proves was signalled');
        assert.match(text(), new RegExp(`process group ${plain.pid} lost its leader and none of its 1 live member\\(s\\) is provably ours`));
      }
    } finally {
      signalProcess(plainMember!, 'SIGKILL');
    }
  }));
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
