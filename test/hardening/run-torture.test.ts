// `leash run` attacked as an adversary (or a careless client) would: killed outright, its stderr
// closed under it, stray signals, a planted symlink or FIFO where it writes its state, and a
// status reader after its death. Whatever happens to leash, nothing of its tree may be left.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { identityState, ownIdentity } from '../../src/sys/process-identity.js';
import { catchesSignals, readCommandLine, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { CLI_ENTRY, exited, markedEnv, markedPids, waitForGone } from '../helpers/processes.js';
import { guardOf, liveDescendantsOf, markedScratch, readJson, startLeash } from '../helpers/leash-run.js';

/**
 * A tree with every shape leash must own: its runner's group, an adopted orphan, a setsid
 * escapee, a TERM-ignorer, and two processes without the run's token (one in the runner's group,
 * one in a group of its own): only the groups leash registered with its guard can reach those.
 */
const EVERY_SHAPE = [
  'sleep 59 &', // the pacer: see settledAndSeen
  'sleep 60 &',
  '(sleep 61 &)',
  'setsid sleep 62 &',
  `sh -c 'trap "" TERM; exec sleep 63' &`,
  'env -u LEASH_OWNER_TOKEN sleep 64 &',
  'setsid env -u LEASH_OWNER_TOKEN sleep 65 &',
  'wait',
].join('\n');
const EVERY_SHAPE_SIZE = 8;

/** Waits until leash's own walk (as its state document says) has seen the whole tree. */
async function seenByLeash(state: string, size: number, stderr: () => string): Promise<void> {
  assert.ok(await waitUntil(() => (readJson(state)?.active_children as number) >= size, 10_000),
    `leash never saw ${size} processes: ${JSON.stringify(readJson(state))} ${stderr()}`);
}

/**
 * Waits until the tree has settled — every process past its last exec, so in its final group — and
 * leash has walked it since. leash counts a `setsid` child from its fork on, and gives its guard the
 * new group only at its next walk (up to 5 s later once the tree holds still): a SIGKILL before that
 * walk would leave the token-less process in it, which tests that race rather than the guard. The
 * proof of a later walk: the pacer (`sleep 59`) is ended here, and leash's state counts it gone.
 * Returns the tree without the pacer.
 */
async function settledAndSeen(leashPid: number, tree: number[], state: string, stderr: () => string): Promise<number[]> {
  const isRunner = (pid: number) => readProcStat(pid)?.ppid === leashPid && readCommandLine(pid)?.[0] === 'sh';
  assert.ok(await waitUntil(() => liveDescendantsOf(leashPid).every((pid) => isRunner(pid) || readCommandLine(pid)?.[0] === 'sleep'), 10_000),
    `the tree never settled: ${stderr()}`);
  const pacer = tree.find((pid) => readCommandLine(pid)?.join(' ') === 'sleep 59');
  assert.ok(pacer !== undefined, 'the pacer is in the tree');
  signalProcess(pacer, 'SIGKILL');
  assert.ok(await waitUntil(() => (readJson(state)?.active_children as number) < EVERY_SHAPE_SIZE, 15_000),
    `leash never saw the pacer go: ${JSON.stringify(readJson(state))} ${stderr()}`);
  return tree.filter((pid) => pid !== pacer);
}

async function runningTree(leashPid: number, size: number, stderr: () => string): Promise<number[]> {
  assert.ok(await waitUntil(() => liveDescendantsOf(leashPid).length >= size, 10_000), `tree never grew: ${stderr()}`);
  return liveDescendantsOf(leashPid);
}

test('leash run SIGKILLed: its guard takes down groups, adopted orphans and setsid escapees', async (t) => {
  const { mark, state } = markedScratch(t);
  const leash = startLeash(['run', '--grace', '1', '--state', state, '--', 'sh', '-c', EVERY_SHAPE], mark);
  const leashPid = leash.child.pid as number;
  await seenByLeash(state, EVERY_SHAPE_SIZE, leash.stderr);
  const tree = await settledAndSeen(leashPid, await runningTree(leashPid, EVERY_SHAPE_SIZE, leash.stderr), state, leash.stderr);
  const guard = guardOf(leashPid);
  assert.ok(guard !== undefined, 'leash run started its guard');

  signalProcess(leashPid, 'SIGKILL');
  await exited(leash.child);
  // SIGTERM at once, SIGKILL for the TERM-ignorer after the 1 s grace.
  assert.ok(await waitForGone(tree, 10_000), `left running: ${tree.filter((pid) => isProcessAlive(pid)).join(' ')}`);
  assert.ok(await waitForGone([guard], 5000), 'the guard leaves once the tree is gone');
  assert.deepEqual(markedPids(mark), []);
});

test('the guard SIGKILLed first, then leash: a replacement guard still takes the tree down', async (t) => {
  const { mark, state } = markedScratch(t);
  // The process tree's guard (a death supervisor with its replay); contained, the guard is a shell.
  const leash = startLeash(['run', '--grace', '1', '--state', state, '--', 'sh', '-c', EVERY_SHAPE], mark, { LEASH_CONTAINMENT: 'tree' });
  const leashPid = leash.child.pid as number;
  await seenByLeash(state, EVERY_SHAPE_SIZE, leash.stderr);
  const tree = await settledAndSeen(leashPid, await runningTree(leashPid, EVERY_SHAPE_SIZE, leash.stderr), state, leash.stderr);
  const first = guardOf(leashPid);
  assert.ok(first !== undefined, 'leash run started its guard');
  signalProcess(first, 'SIGKILL');
  let second: number | undefined;
  assert.ok(await waitUntil(() => (second = guardOf(leashPid)) !== undefined && second !== first, 10_000),
    `no replacement guard: ${leash.stderr()}`);
  // leash writes the replay into the replacement's pipe just after spawn() returns, while the
  // process is already visible here: a SIGKILL in that gap would test a guard that knows no group.
  // Once the replacement's Node has started and installed its handlers, the replay is long written.
  const { SIGINT, SIGHUP } = osConstants.signals;
  assert.ok(await waitUntil(() => catchesSignals(second!, [SIGINT, SIGHUP]), 10_000), 'the replacement guard never started');
  // The replacement knows the tree's groups (replayed) and its token.
  assert.ok(tree.every((pid) => isProcessAlive(pid)), 'the tree is untouched by the guard\'s death');
  signalProcess(leashPid, 'SIGKILL');
  await exited(leash.child);
  assert.ok(await waitForGone(tree, 10_000), `left running: ${tree.filter((pid) => isProcessAlive(pid)).join(' ')}`);
  assert.ok(await waitForGone([second as number], 5000), 'the replacement leaves once the tree is gone');
});

test('the MCP SDK close() sequence with default settings leaves nothing (TERM ignored in the tree)', async (t) => {
  const { mark } = markedScratch(t);
  // The SDK's own transport: stdin end, 2 s, SIGTERM, 2 s, SIGKILL of `leash run`. The tree
  // ignores SIGTERM, so leash is still in its (default, 10 s) grace when it is SIGKILLed.
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_ENTRY, 'run', '--', 'sh', '-c', `trap "" TERM; sleep 70 & setsid sh -c 'trap "" TERM; exec sleep 71' & wait`],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }) as Record<string, string>,
    stderr: 'pipe',
  });
  transport.onerror = () => {};
  await transport.start();
  const leashPid = transport.pid as number;
  const tree = await runningTree(leashPid, 3, () => '');
  const closing = Date.now();
  await transport.close();
  const closeMs = Date.now() - closing;
  assert.ok(closeMs >= 3500, `close() took ${closeMs} ms: leash must still have been in its grace when SIGKILLed`);
  assert.ok(await waitUntil(() => !isProcessAlive(leashPid), 5000), 'the SDK SIGKILLed leash run');
  assert.ok(tree.some((pid) => isProcessAlive(pid)), 'the TERM-ignoring tree outlived leash run');
  // The guard repeats SIGTERM and SIGKILLs after the default 10 s grace.
  assert.ok(await waitForGone(tree, 20_000), `left running: ${tree.filter((pid) => isProcessAlive(pid)).join(' ')}`);
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 5000), `left: ${markedPids(mark).join(' ')}`);
});

test('a closed stderr (2>&1 | true) never ends leash run', async (t) => {
  const { mark, state } = markedScratch(t);
  const child = spawn(process.execPath, [CLI_ENTRY, 'run', '--grace', '1', '--state', state, '--', 'sh', '-c', 'sleep 30 & sleep 31'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  // The reader goes away before leash writes its first line.
  child.stdout?.destroy();
  child.stderr?.destroy();
  const leashPid = child.pid as number;
  assert.ok(await waitUntil(() => readJson(state)?.phase === 'running', 10_000), 'leash reached running');
  await runningTree(leashPid, 2, () => '');
  // Another log line (the stop) goes to the broken pipe too.
  signalProcess(leashPid, 'SIGTERM');
  const { code, signal } = await exited(child);
  assert.equal(signal, null, 'leash was not killed by a signal');
  assert.equal(code, 143, 'leash ran its stop to the end and passed the runner status on');
  assert.equal(readJson(state)?.phase, 'exited');
  assert.deepEqual(markedPids(mark), []);
});

/** Sockets among a process's descriptors that listen on TCP (the inspector would be one). */
function listeningTcpSockets(pid: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1] as string);
    } catch {
      // closed meanwhile
    }
  }
  let listening = 0;
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // st 0A is LISTEN; field 9 is the inode.
      if (fields[3] === '0A' && inodes.has(fields[9] as string)) listening += 1;
    }
  }
  return listening;
}

test('stray signals: forwarded to the runner, ignored, or a stop; never the death of leash, never the inspector', async (t) => {
  const { mark, dir, state } = markedScratch(t);
  const log = join(dir, 'got');
  // Every forwarded signal, by name (dash knows SIGSTKFLT by number only: 16 on Linux).
  const forwarded = [['SIGUSR1', 'USR1'], ['SIGUSR2', 'USR2'], ['SIGALRM', 'ALRM'], ['SIGWINCH', 'WINCH'], ['SIGVTALRM', 'VTALRM'],
    ['SIGPROF', 'PROF'], ['SIGIO', 'IO'], ['SIGPWR', 'PWR'], ['SIGURG', 'URG'], ['SIGSTKFLT', '16'], ['SIGCONT', 'CONT']] as const;
  const traps = forwarded.map(([, name]) => `trap 'echo ${name} >> "${log}"' ${name}`).join('; ');
  const script = `${traps}; sleep 61 & while :; do sleep 0.05; done`;
  const leash = startLeash(['run', '--grace', '1', '--state', state, '--', 'sh', '-c', script], mark);
  const leashPid = leash.child.pid as number;
  await runningTree(leashPid, 2, leash.stderr);
  // The runner and its long sleeper (the loop's short sleeps come and go).
  let lasting: number[] = [];
  assert.ok(await waitUntil(() => (lasting = liveDescendantsOf(leashPid).filter((pid) =>
    ['sh', 'sleep 61'].includes((readCommandLine(pid) ?? []).slice(0, 2).join(' ').replace(/^sh -c$/, 'sh')))).length === 2, 5000));
  const received = () => {
    try {
      return readFileSync(log, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };

  // leash's own (its write errors): held, not forwarded; leash and its tree carry on. (SIGXCPU is a
  // graceful stop, SIGTSTP/SIGTTIN/SIGTTOU suspend: test/run/stray-signals.test.ts.)
  for (const signal of ['SIGPIPE', 'SIGXFSZ'] as const) {
    assert.equal(signalProcess(leashPid, signal), 'sent');
  }
  // Forwarded to the runner, one at a time (a shell runs one trap per signal kind at a time).
  for (const [signal, name] of forwarded) {
    assert.equal(signalProcess(leashPid, signal), 'sent');
    assert.ok(await waitUntil(() => received().includes(name), 5000), `${signal} reached the runner: ${received().join(',')}`);
  }
  assert.ok(isProcessAlive(leashPid), `leash survived every stray signal: ${leash.stderr()}`);
  assert.ok(lasting.every((pid) => isProcessAlive(pid)), 'the tree was not stopped');
  assert.equal(readJson(state)?.phase, 'running');
  // SIGUSR1 did not open Node's inspector.
  assert.doesNotMatch(leash.stderr(), /Debugger|inspector/i);
  assert.equal(listeningTcpSockets(leashPid), 0, 'leash run listens on no TCP port');

  // SIGQUIT stops the tree like SIGTERM, passed on as itself.
  signalProcess(leashPid, 'SIGQUIT');
  await exited(leash.child);
  assert.equal(readJson(state)?.termination_signal, 3);
  assert.equal(readJson(state)?.phase, 'exited');
  assert.deepEqual(markedPids(mark), []);
});

/** Starts leash through a shell that plants a file at the old, predictable temporary name first. */
function startWithPlant(plant: string, dir: string, mark: string, runner: string) {
  const state = join(dir, 'state.json');
  // $$ is the shell's pid, and exec keeps it: leash runs with the pid the plant guessed.
  const script = `${plant} "${dir}/.state.json.$$.tmp"; exec "$0" "$@"`;
  const child = spawn('sh', ['-c', script, process.execPath, CLI_ENTRY, 'run', '--state', state, '--', 'sh', '-c', runner], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' }),
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return { child, state, stderr: () => stderr };
}

test('state file: a symlink planted at the temporary name redirects nothing', async (t) => {
  const { mark, dir } = markedScratch(t);
  const precious = join(dir, 'precious');
  writeFileSync(precious, 'not yours\n');
  chmodSync(precious, 0o644);
  const leash = startWithPlant(`ln -s "${precious}"`, dir, mark, 'exit 0');
  const { code } = await exited(leash.child);
  assert.equal(code, 0, leash.stderr());
  assert.equal(readFileSync(precious, 'utf8'), 'not yours\n', 'the link target is untouched');
  assert.equal(statSync(precious).mode & 0o777, 0o644, 'its mode is untouched');
  const written = join(dir, 'state.json');
  assert.ok(lstatSync(written).isFile(), 'the state file is a regular file, not the planted link');
  assert.equal(readJson(written)?.phase, 'exited');
  assert.equal(statSync(written).mode & 0o777, 0o600);
});

test('state file: a FIFO planted at the temporary name blocks nothing', async (t) => {
  const { mark, dir } = markedScratch(t);
  const leash = startWithPlant('mkfifo', dir, mark, 'sleep 0.2; exit 3');
  // On a blocking open leash would hang here for good, and SIGTERM would not help.
  const { code } = await exited(leash.child, 10_000);
  assert.equal(code, 3, leash.stderr());
  assert.equal(readJson(join(dir, 'state.json'))?.phase, 'exited');
  assert.deepEqual(markedPids(mark), []);
});

test('leash status after leash run died: says the writer is gone, the document keeps its ten keys', async (t) => {
  const { mark, state } = markedScratch(t);
  const leash = startLeash(['run', '--grace', '0.5', '--state', state, '--', 'sleep', '30'], mark);
  assert.ok(await waitUntil(() => readJson(state)?.phase === 'running', 10_000), leash.stderr());
  const status = (args: string[]) => {
    const run = spawn(process.execPath, [CLI_ENTRY, 'status', ...args, state], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    run.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
    run.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
    return exited(run).then(({ code }) => ({ code, out, err }));
  };
  const alive = await status([]);
  assert.equal(alive.code, 0);
  assert.match(alive.out, /writer\s+leash run pid \d+, running/);

  signalProcess(leash.child.pid as number, 'SIGKILL');
  await exited(leash.child);
  const dead = await status([]);
  assert.equal(dead.code, 69, dead.out + dead.err);
  assert.match(dead.out, /phase\s+running/);
  assert.match(dead.out, /writer\s+leash run pid \d+ is gone/);
  const json = await status(['--json']);
  assert.equal(json.code, 69);
  assert.deepEqual(Object.keys(JSON.parse(json.out)).length, 10);
  assert.match(json.err, /is gone/);
  // And the guard still took the tree down.
  assert.ok(await waitUntil(() => markedPids(mark).length === 0, 10_000));
});

test('a writer record names one process: another start time, boot or pid namespace is not it', () => {
  const self = ownIdentity();
  assert.ok(self, 'procfs gives this process an identity');
  assert.equal(identityState(self), 'running');
  assert.equal(identityState({ ...self, start_time: self.start_time + 1 }), 'gone', 'a recycled pid');
  assert.equal(identityState({ ...self, boot_id: 'another-boot' }), 'gone', 'a reboot since');
  assert.equal(identityState({ ...self, pid_namespace: 'pid:[1]' }), 'unknown', 'pids from elsewhere mean nothing here');
});

test('leash status does not wait on a FIFO planted as the writer record', async (t) => {
  const { dir, state } = markedScratch(t);
  writeFileSync(state, '{"active_children":0,"adopted_children":0,"escalated":false,"orphaned_children_total":0,' +
    '"phase":"running","reaped_children_total":0,"reaped_orphans_total":0,"runner_exit_code":null,' +
    '"termination_signal":null,"updated_at":"2026-01-01T00:00:00.000Z"}\n');
  const fifo = spawn('mkfifo', [join(dir, '.state.json.writer')], { stdio: 'ignore' });
  assert.equal((await exited(fifo)).code, 0);
  const run = spawn(process.execPath, [CLI_ENTRY, 'status', state], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  run.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  const { code } = await exited(run, 10_000);
  assert.equal(code, 0);
  assert.match(out, /writer\s+not recorded/);
});
