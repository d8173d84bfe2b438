// `leash run` on Windows, under Wine: exit codes, leftovers, leash killed from Linux,
// --die-with-parent, the state file and `leash status`. Each tree holds a detached grandchild,
// which libuv's job never holds; the controls show it outliving its parent without leash.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FIXTURES, killFromLinux, killMarked, linuxPidsWith, newMark, ownerLinuxPid, waitUntil } from './helpers.js';

const CLI = fileURLToPath(new URL('../../../bin/leash.js', import.meta.url));
const TREE = `${FIXTURES}tree.mjs`;
const marks: string[] = [];
after(async () => {
  for (const mark of marks) await killMarked(mark);
});
function mark(): string {
  const value = newMark();
  marks.push(value);
  return value;
}
const count = (value: string, role: string) => linuxPidsWith(`${value}-${role}`).length;

function leashRun(args: string[]) {
  return spawnSync(process.execPath, [CLI, 'run', ...args], { encoding: 'utf8', timeout: 60_000 });
}

test('leash run passes the exit code through, and 127 for a missing command', () => {
  const seven = leashRun(['--', process.execPath, '-e', 'process.exit(7)']);
  assert.equal(seven.status, 7, seven.stderr);
  const missing = leashRun(['--', 'no-such-command-leash-test.exe']);
  assert.equal(missing.status, 127, missing.stderr);
  assert.match(missing.stderr, /command not found/);
});

test('leash run ends what the command leaves behind when it exits; control: without leash it stays', async () => {
  const withLeash = mark();
  const result = leashRun(['--', process.execPath, TREE, withLeash, '3']);
  assert.equal(result.status, 3, result.stderr);
  assert.match(result.stderr, /leaving 1 process/);
  assert.ok(await waitUntil(() => count(withLeash, 'grandchild') === 0, 5000), 'the leftover survived leash run');

  const control = mark();
  const plain = spawnSync(process.execPath, [TREE, control, '3'], { timeout: 60_000 });
  assert.equal(plain.status, 3);
  assert.ok(await waitUntil(() => count(control, 'grandchild') === 1, 5000));
  assert.ok(!(await waitUntil(() => count(control, 'grandchild') === 0, 1500)), 'the control leftover died: the test proves nothing');
  await killMarked(control);
});

test('leash run killed from Linux (kill -9) takes the whole tree with it', async () => {
  const value = mark();
  const run = spawn(process.execPath, [CLI, 'run', '--', process.execPath, TREE, value, "stay", `${value}-leash`], { stdio: 'ignore' });
  const exited = once(run, 'exit');
  assert.ok(await waitUntil(() => count(value, 'grandchild') === 1, 90_000), 'the tree did not start');
  // leash's own process is the one whose command line runs bin\leash.js with the mark.
  const leash = linuxPidsWith(`${value}-leash`).find((pid) => readFileSync(`Z:\\proc\\${pid}\\cmdline`, 'latin1').includes('leash.js'));
  assert.ok(leash, 'leash is not visible from Linux');
  assert.ok(await killFromLinux([leash]));
  await exited;
  assert.ok(await waitUntil(() => linuxPidsWith(value).length === 0, 10_000), `left running: ${linuxPidsWith(value).join(' ')}`);
});

for (const dieWithParent of [true, false]) {
  test(`leash run ${dieWithParent ? '--die-with-parent ends the tree when its parent is killed' : 'without --die-with-parent (control) outlives its parent'}`, async () => {
    const value = mark();
    const options = dieWithParent ? ['--die-with-parent'] : [];
    const parent = spawn(process.execPath, [`${FIXTURES}run-parent.mjs`, value, ...options], { stdio: 'ignore' });
    const exited = once(parent, 'exit');
    assert.ok(await waitUntil(() => count(value, 'runner-grandchild') === 1, 90_000), 'the tree did not start');
    const parentPid = ownerLinuxPid({ mark: value });
    assert.ok(parentPid, 'the parent is not visible from Linux');
    assert.ok(await killFromLinux([parentPid]));
    await exited;
    if (dieWithParent) {
      assert.ok(await waitUntil(() => linuxPidsWith(value).length === 0, 10_000), `left running: ${linuxPidsWith(value).join(' ')}`);
    } else {
      assert.ok(!(await waitUntil(() => count(value, 'runner-grandchild') === 0, 2000)), 'the tree died without --die-with-parent');
      assert.ok(linuxPidsWith(`${value}-runner`).length >= 1);
    }
  });
}

test('leash run keeps the state file, and leash status reads it', async () => {
  const value = mark();
  const statePath = `${process.env.TEMP ?? 'C:\\windows\\temp'}\\${value}.json`;
  const run = spawn(process.execPath, [CLI, 'run', '--state', statePath, '--', process.execPath, TREE, value, 'stay'], { stdio: 'ignore' });
  const exited = once(run, 'exit');
  const read = () => {
    try {
      return JSON.parse(readFileSync(statePath, 'utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  assert.ok(await waitUntil(() => read()?.phase === 'running' && read()?.active_children === 2, 90_000), JSON.stringify(read()));
  const status = spawnSync(process.execPath, [CLI, 'status', statePath], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(status.status, 0, status.stderr);
  assert.match(status.stdout, /phase\s+running/);
  // End the runner only: the detached grandchild is then a leftover that leash ends.
  const runnerPid = linuxPidsWith(value).filter((pid) => {
    const cmdline = readFileSync(`Z:\\proc\\${pid}\\cmdline`, 'latin1');
    return cmdline.includes('tree.mjs') && !cmdline.includes('leash.js');
  });
  assert.equal(runnerPid.length, 1);
  assert.ok(await killFromLinux(runnerPid));
  await exited;
  const final = read();
  assert.equal(final?.phase, 'exited');
  assert.equal(final?.active_children, 0);
  assert.equal(final?.escalated, true);
  assert.equal(count(value, 'grandchild'), 0);
  rmSync(statePath, { force: true });
});
