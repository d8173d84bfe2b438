// --die-with-parent reads the parent's death as the kernel means it. The parent here is a small C
// program (compiled by the test) that starts `leash run --die-with-parent` from its main thread:
// - its main thread leaves with a raw exit(2) syscall (not exit_group) while two threads run on:
//   that thread is a zombie with exit status 512, the parent-death signal fires (the thread that
//   forked leash is gone), yet the parent lives: the tree must run on until the process goes;
// - the same parent SIGKILLed: its main thread is a zombie with the signal's number, the process
//   is dying, and the tree is stopped at once.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import { CLI_ENTRY, exited, killMarked, markedEnv, markedPidRunning, markedPids, newMark } from '../helpers/processes.js';

const compiler = ['cc', 'gcc'].find((name) => spawnSync(name, ['--version']).status === 0);
const skip = process.platform !== 'linux' ? 'Linux only' : compiler === undefined ? 'no C compiler (cc, gcc) to build the parent with' : false;

const PARENT_SOURCE = `
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Waits for a byte on the fifo named by the variable \`name\`. */
static void await_word(const char *name) {
  int fd = open(getenv(name), O_RDONLY);
  char c;
  while (read(fd, &c, 1) < 0) {}
}

static void *ender(void *unused) {
  (void)unused;
  await_word("END_ALL");
  syscall(SYS_exit_group, 0); /* now the process goes, as a whole */
  return NULL;
}

static void *idler(void *unused) {
  (void)unused;
  for (;;) pause();
  return NULL;
}

int main(int argc, char **argv) {
  (void)argc;
  pid_t child = fork();
  if (child == 0) {
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  printf("%d\\n", child);
  fflush(stdout);
  pthread_t a, b;
  pthread_create(&a, NULL, ender, NULL);
  pthread_create(&b, NULL, idler, NULL);
  await_word("END_MAIN");
  syscall(SYS_exit, 2); /* this thread only: the other two run on */
  return 0;
}
`;

function buildParent(t: { after: (fn: () => void) => void }): { binary: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'leash-raw-exit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'parent.c'), PARENT_SOURCE);
  execFileSync(compiler!, ['-O1', '-pthread', '-o', join(dir, 'parent'), join(dir, 'parent.c')]);
  execFileSync('mkfifo', [join(dir, 'end-main'), join(dir, 'end-all')]);
  return { binary: join(dir, 'parent'), dir };
}

async function startParent(t: { after: (fn: () => Promise<void> | void) => void }) {
  const { binary, dir } = buildParent(t);
  const mark = newMark();
  t.after(() => killMarked(mark));
  const script = 'sleep 1000 & exec sleep 1001';
  const parent = spawn(binary, [process.execPath, CLI_ENTRY, 'run', '--die-with-parent', '--grace', '0.3', '--', 'sh', '-c', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', END_MAIN: join(dir, 'end-main'), END_ALL: join(dir, 'end-all') }),
  });
  let out = '';
  let err = '';
  parent.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  parent.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
  assert.ok(await waitUntil(() => /^\d+$/m.test(out), 10_000), err);
  const leash = Number(/^(\d+)$/m.exec(out)![1]);
  // The parent-death signal is armed before the running phase is said.
  assert.ok(await waitUntil(() => /phase=running/.test(err) && markedPidRunning(mark, 'sleep 1000') !== undefined, 10_000), err);
  return { parent, leash, mark, dir, stderr: () => err };
}

/** Fields of /proc/<pid>/stat from field 3 on (field N is [N - 3]). */
function statFields(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).trim().split(' ');
}

test('--die-with-parent: the parent\'s main thread leaves with exit(2) while two threads run on: not a death; the tree stops once the process is gone', { skip }, async (t) => {
  const { parent, leash, mark, dir, stderr } = await startParent(t);
  writeFileSync(join(dir, 'end-main'), 'x');
  const pid = parent.pid!;
  // The case really happened: the main thread is a zombie with exit status 2 (512), and two
  // threads of the process still run.
  assert.ok(await waitUntil(() => statFields(pid)[0] === 'Z', 5000), `main thread: ${statFields(pid).join(' ')}`);
  assert.equal(statFields(pid)[49], String(2 << 8));
  const living = readdirSync(`/proc/${pid}/task`).filter((tid) => tid !== String(pid) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')));
  assert.equal(living.length, 2, 'two threads run on');
  // The parent lives: leash must not stop the tree.
  assert.equal(await waitUntil(() => !isProcessAlive(leash) || /phase=stopping/.test(stderr()), 1500), false, `stopped while the parent lives: ${stderr()}`);
  assert.ok(markedPidRunning(mark, 'sleep 1001') !== undefined);
  // Now the process goes as a whole: that is the death.
  const endedAt = performance.now();
  writeFileSync(join(dir, 'end-all'), 'x');
  await exited(parent);
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 5000), `left: ${markedPids(mark)}; ${stderr()}`);
  t.diagnostic(`process gone -> tree gone: ${(performance.now() - endedAt).toFixed(0)} ms`);
  assert.match(stderr(), /reason="parent died"/);
});

test('--die-with-parent: the same parent SIGKILLed (a signal status on its zombie main thread) stops the tree at once', { skip }, async (t) => {
  const { parent, mark, stderr } = await startParent(t);
  const killedAt = performance.now();
  parent.kill('SIGKILL');
  await exited(parent);
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 5000), `left: ${markedPids(mark)}; ${stderr()}`);
  t.diagnostic(`SIGKILL -> tree gone: ${(performance.now() - killedAt).toFixed(0)} ms`);
  assert.match(stderr(), /reason="parent died"/);
});
