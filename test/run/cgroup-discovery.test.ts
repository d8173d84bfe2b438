// Finding the cgroup v2 hierarchy and this process's place in it, and the owner's rules: pure
// parsing (any machine), then the rules applied to given facts; last, the migration primer on
// this process itself (where its cgroup is usable).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assessOwnCgroup, locateCgroup, parseCgroup2Mounts, parseUnifiedPath, primeMigrations } from '../../src/sys/cgroup.js';

const HYBRID = [
  '25 30 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755',
  '40 25 0:37 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate',
  '41 25 0:38 / /sys/fs/cgroup/systemd rw,nosuid shared:11 - cgroup cgroup rw,xattr,name=systemd',
].join('\n');

test('the v2 part of a hybrid mount is found, never assumed at /sys/fs/cgroup', () => {
  assert.deepEqual(parseCgroup2Mounts(HYBRID), [{ root: '/', mountPoint: '/sys/fs/cgroup/unified', readOnly: false }]);
});

test('a unified mount, a mount point with a space, a read-only bind over it (the later one wins)', () => {
  const text = [
    '30 1 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw',
    '31 1 0:26 /user.slice /mnt/my\\040cg rw - cgroup2 cgroup2 rw',
    '32 30 0:26 / /sys/fs/cgroup ro,relatime - cgroup2 cgroup2 rw',
  ].join('\n');
  const mounts = parseCgroup2Mounts(text);
  assert.equal(mounts[1]?.mountPoint, '/mnt/my cg');
  assert.equal(locateCgroup('/system.slice/x.service', mounts)?.mount.readOnly, true);
  // A mount of a subtree shows only what is below its root.
  assert.equal(locateCgroup('/user.slice/user-1000.slice', mounts.slice(0, 1))?.directory, '/sys/fs/cgroup/user.slice/user-1000.slice');
  assert.equal(locateCgroup('/user.slice/a', [mounts[1]!])?.directory, '/mnt/my cg/a');
  assert.equal(locateCgroup('/system.slice', [mounts[1]!]), undefined);
});

test('a cgroup outside the root of this cgroup namespace (0::/../x) is under no mount here', () => {
  const mounts = parseCgroup2Mounts(HYBRID);
  // Joined as it is, the path steps out of the v2 mount into the v1 freezer beside it.
  assert.equal(locateCgroup('/../freezer/x', mounts), undefined);
  assert.equal(locateCgroup('/a/../../b', mounts), undefined);
  assert.equal(locateCgroup('/a..b/c', mounts)?.directory, '/sys/fs/cgroup/unified/a..b/c');
  const assessed = assessOwnCgroup({ mountinfo: HYBRID, procCgroup: '0::/../freezer/x\n', euid: 0, systemd: false });
  assert.equal(assessed.usable, false);
});

test('the 0:: line of /proc/self/cgroup', () => {
  assert.equal(parseUnifiedPath('12:pids:/\n1:name=systemd:/x\n0::/leash-run-1-ab\n'), '/leash-run-1-ab');
  assert.equal(parseUnifiedPath('12:pids:/\n1:name=systemd:/\n'), undefined);
});

test('the owner\'s rules', () => {
  const procCgroup = '0::/\n';
  const none = assessOwnCgroup({ mountinfo: HYBRID.split('\n')[0]!, procCgroup });
  assert.deepEqual(none, { usable: false, reason: 'no cgroup v2 hierarchy is mounted' });
  const outside = assessOwnCgroup({ mountinfo: HYBRID, procCgroup: '1:name=systemd:/\n' });
  assert.equal(outside.usable, false);
  // Under systemd, a cgroup without systemd's delegation mark is never written to, even by root.
  const systemd = assessOwnCgroup({ mountinfo: HYBRID, procCgroup, euid: 0, systemd: true });
  assert.equal(systemd.usable, false);
  assert.match((systemd as { reason: string }).reason, /^systemd manages \/ and it carries no delegation mark \(see docs\/run.md: systemd-run --user --scope -p Delegate=yes env LEASH_CONTAINMENT=cgroup leash run \.\.\.\)$/);
  // The user's word (LEASH_CONTAINMENT=cgroup) stands for the mark a user manager never writes;
  // ownership still counts.
  const declared = assessOwnCgroup({ mountinfo: HYBRID, procCgroup, euid: 4242, systemd: true, declaredDelegated: true });
  assert.match((declared as { reason: string }).reason, /is not delegated to uid 4242/);
  // Not root and not ours: the root cgroup belongs to root.
  const stranger = assessOwnCgroup({ mountinfo: HYBRID, procCgroup, euid: 4242, systemd: false });
  assert.equal(stranger.usable, false);
  assert.match((stranger as { reason: string }).reason, /is not delegated to uid 4242/);
  const readOnly = assessOwnCgroup({ mountinfo: HYBRID.replace('shared:10 - cgroup2', 'shared:10 - cgroup2').replace(' rw,nosuid,nodev,noexec,relatime shared:10', ' ro,nosuid shared:10'), procCgroup, euid: 0, systemd: false });
  assert.deepEqual(readOnly, { usable: false, reason: '/sys/fs/cgroup/unified is mounted read-only' });
});

test('the migration primer moves nobody and never rejects', async (t) => {
  const before = readFileSync('/proc/self/cgroup', 'utf8');
  const place = assessOwnCgroup();
  if (!place.usable) {
    t.skip(`no usable cgroup here: ${place.reason}`);
    return;
  }
  // The primer writes this process's pid into its own cgroup.procs: it must stay where it was.
  await primeMigrations();
  assert.equal(readFileSync('/proc/self/cgroup', 'utf8'), before);
  assert.ok(readFileSync(join(place.place.directory, 'cgroup.procs'), 'utf8').split('\n').includes(String(process.pid)));
});
