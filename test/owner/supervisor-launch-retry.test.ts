// A death supervisor that cannot be launched for a while (its file missing for a moment, the
// owner out of file descriptors) is launched once the cause is gone, by the owner itself, with no
// new registration to prompt it: a failed launch used to be final (the plan was kept forever) or
// to burn the restart budget at once and leave the groups unguarded for 10 s and more.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { SUPERVISOR_MAIN } from '../helpers/groups.js';
import { JsonLines, LIBRARY_ENTRY, exited, killMarked, markedEnv, newMark, waitForGone } from '../helpers/processes.js';

/** An owner that owns one `sleep`, then reports each new supervisor pid and each LEASH_SUPERVISOR warning. */
const OWNER = [
  `import { spawnOwned, supervisorPid } from ${JSON.stringify(LIBRARY_ENTRY)};`,
  "process.on('warning', (w) => { if (w.code === 'LEASH_SUPERVISOR') console.log(JSON.stringify({ warning: w.message })); });",
  "const child = spawnOwned('sleep', ['1000'], { stdio: 'ignore' });",
  'console.log(JSON.stringify({ child: child.pid }));',
  'let last = -1;',
  'setInterval(() => { const pid = supervisorPid() ?? null; if (pid !== last) { last = pid; console.log(JSON.stringify({ supervisor: pid })); } }, 20);',
].join('\n');

function startOwner(mark: string, extraEnv: NodeJS.ProcessEnv = {}) {
  const owner = spawn(process.execPath, ['--input-type=module', '-e', OWNER], { stdio: ['ignore', 'pipe', 'pipe'], env: markedEnv(mark, extraEnv) });
  return { owner, lines: new JsonLines(owner) };
}

/** Reads lines until one has `key`, collecting the warnings met on the way. */
async function until(lines: JsonLines, key: string, warnings: string[], budgetMs: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const line = await lines.next(Math.max(1, deadline - Date.now()));
    if (typeof line.warning === 'string') warnings.push(line.warning);
    if (key in line) return line;
  }
}

test('the supervisor file missing at first: the owner launches it by itself once the file is there', async (t) => {
  const mark = newMark();
  const dir = mkdtempSync(join(tmpdir(), 'leash-launch-'));
  t.after(async () => {
    await killMarked(mark);
    rmSync(dir, { recursive: true, force: true });
  });
  const file = join(dir, 'supervisor.cjs');
  const { owner, lines } = startOwner(mark, { LEASH_SUPERVISOR_FILE: file });
  const warnings: string[] = [];
  const { child } = (await until(lines, 'child', warnings, 15_000)) as { child: number };
  assert.deepEqual(await until(lines, 'supervisor', warnings, 5000), { supervisor: null });
  // Several launch tries fail meanwhile (100, 200, 400 ms ...).
  await new Promise((resolve) => setTimeout(resolve, 700));
  copyFileSync(SUPERVISOR_MAIN, file);
  const { supervisor } = (await until(lines, 'supervisor', warnings, 15_000)) as { supervisor: number | null };
  assert.ok(supervisor, 'a supervisor runs once its file exists');
  assert.equal(warnings.length, 1, `one warning for the missing file: ${warnings.join(' | ')}`);
  assert.match(warnings[0]!, /LEASH_SUPERVISOR_FILE names/);
  // It got the registration by replay: the owned sleep dies with the owner.
  signalProcess(owner.pid!, 'SIGKILL');
  await exited(owner);
  assert.ok(await waitForGone([child], 10_000), 'the owned child outlived its SIGKILLed owner');
});

/** The lowest descriptor number `pid` does not use: with the soft RLIMIT_NOFILE there, every open fails (EMFILE). */
function lowestFreeDescriptor(pid: number): number {
  const used = new Set(readdirSync(`/proc/${pid}/fd`).map(Number));
  let fd = 0;
  while (used.has(fd)) fd += 1;
  return fd;
}

const hasPrlimit = spawnSync('prlimit', ['--version'], { stdio: 'ignore' }).status === 0;

test('out of file descriptors when its supervisor dies: a replacement once descriptors are free again', { skip: hasPrlimit ? false : 'no prlimit (util-linux) to lower another process\'s RLIMIT_NOFILE' }, async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const { owner, lines } = startOwner(mark);
  const warnings: string[] = [];
  const { child } = (await until(lines, 'child', warnings, 15_000)) as { child: number };
  const first = (await until(lines, 'supervisor', warnings, 10_000)).supervisor as number;
  assert.ok(first, 'a first supervisor runs');

  const soft = spawnSync('prlimit', ['--pid', String(owner.pid), '--nofile', '--output=SOFT', '--noheadings'], { encoding: 'utf8' }).stdout.trim();
  const lowered = spawnSync('prlimit', ['--pid', String(owner.pid), `--nofile=${lowestFreeDescriptor(owner.pid!)}:`]);
  assert.equal(lowered.status, 0, `prlimit: ${String(lowered.stderr)}`);
  signalProcess(first, 'SIGKILL');
  assert.ok(await waitUntil(() => !isProcessAlive(first), 5000));
  assert.deepEqual(await until(lines, 'supervisor', warnings, 5000), { supervisor: null });
  // Replacements fail with EMFILE meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 600));
  const raised = spawnSync('prlimit', ['--pid', String(owner.pid), `--nofile=${soft}:`]);
  assert.equal(raised.status, 0, `prlimit: ${String(raised.stderr)}`);
  const raisedAt = Date.now();
  const { supervisor } = (await until(lines, 'supervisor', warnings, 15_000)) as { supervisor: number | null };
  const after = Date.now() - raisedAt;
  assert.ok(supervisor && supervisor !== first, 'a replacement supervisor runs');
  // The back-off's next try is at most ~2.5 s away here; a burnt restart budget waited 10 s.
  assert.ok(after < 6000, `the replacement came ${after} ms after descriptors were free again`);
  assert.ok(warnings.some((warning) => /EMFILE/.test(warning)), `the failure was told: ${warnings.join(' | ')}`);
  assert.ok(warnings.length <= 2, `one warning per run of failures: ${warnings.join(' | ')}`);
  signalProcess(owner.pid!, 'SIGKILL');
  await exited(owner);
  assert.ok(await waitForGone([child], 10_000), 'the owned child outlived its SIGKILLed owner');
});
