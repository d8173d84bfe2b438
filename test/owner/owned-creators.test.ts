// execFileOwned, execOwned and forkOwned against Node's execFile, exec and fork (facts from
// Node's lib/child_process.js and its test-child-process-exec*/execfile*/fork* tests). Each case
// runs with Node's creator first (the control: the case tells behaviours apart) and then the owned
// one, asserting the same; then what only the owned ones do: the child leads its own group, what a
// timed-out command started is ended, and the children die with their owner.
import assert from 'node:assert/strict';
import { exec, execFile, fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { execFileOwned, execOwned, forkOwned, ownedProcessGroups } from '../../src/index.js';
import { ownProcessGroupId } from '../../src/sys/processes.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { JsonLines, killMarked, LIBRARY_ENTRY, markedEnv, markedPidRunning, newMark, waitForGone } from '../helpers/processes.js';

const mark = newMark();
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'leash-creators-')));
after(async () => {
  await killMarked(mark);
  rmSync(scratch, { recursive: true, force: true });
});
const env = markedEnv(mark);

type Creator = (...args: unknown[]) => ChildProcess;
type Result = { error: (Error & Record<string, unknown>) | null; stdout: unknown; stderr: unknown; child: ChildProcess };

/** Runs a creator with a callback; resolves with what the callback got. */
function run(create: Creator, ...args: unknown[]): Promise<Result> {
  return new Promise((resolve) => {
    const child: ChildProcess = create(...args, (error: Result['error'], stdout: unknown, stderr: unknown) => resolve({ error, stdout, stderr, child }));
  });
}

const execFiles: Array<[string, Creator]> = [
  ['execFile (control)', execFile as unknown as Creator],
  ['execFileOwned', execFileOwned as unknown as Creator],
];
const execs: Array<[string, Creator]> = [
  ['exec (control)', exec as unknown as Creator],
  ['execOwned', execOwned as unknown as Creator],
];
const forks: Array<[string, Creator]> = [
  ['fork (control)', fork as unknown as Creator],
  ['forkOwned', forkOwned as unknown as Creator],
];

const PRINT = join(scratch, 'print.sh');
writeFileSync(PRINT, '#!/bin/sh\npwd\necho "args:$*"\necho "v=$LEASH_CREATOR_TEST"\necho err >&2\n', { mode: 0o755 });
const printed = (args = '') => `${scratch}\nargs:${args}\nv=${'set'}\n`;
const printEnv = { ...env, LEASH_CREATOR_TEST: 'set' };

for (const [name, create] of execFiles) {
  test(`${name}: every overload gives the callback stdout and stderr as strings`, async () => {
    const full = await run(create, PRINT, ['a', 'b'], { cwd: scratch, env: printEnv });
    assert.equal(full.error, null);
    assert.equal(full.stdout, printed('a b'));
    assert.equal(full.stderr, 'err\n');
    const noArgs = await run(create, PRINT, { cwd: scratch, env: printEnv });
    assert.equal(noArgs.stdout, printed());
    const nullArgs = await run(create, PRINT, null, { cwd: scratch, env: printEnv });
    assert.equal(nullArgs.stdout, printed());
    const bufferOut = await run(create, PRINT, [], { cwd: scratch, env: printEnv, encoding: 'buffer' });
    assert.ok(Buffer.isBuffer(bufferOut.stdout));
    assert.equal(String(bufferOut.stdout), printed());
  });

  test(`${name}: a failing command, a missing one, the error's fields`, async () => {
    const failed = await run(create, 'sh', ['-c', 'echo out; echo bad >&2; exit 3'], { env });
    assert.equal(failed.error?.message, 'Command failed: sh -c echo out; echo bad >&2; exit 3\nbad\n');
    assert.deepEqual([failed.error?.code, failed.error?.killed, failed.error?.signal, failed.error?.cmd], [3, false, null, 'sh -c echo out; echo bad >&2; exit 3']);
    assert.equal(failed.stdout, 'out\n');
    const missing = await run(create, join(scratch, 'no-such-command'), ['x'], { env });
    assert.equal(missing.error?.code, 'ENOENT');
    assert.equal(missing.error?.cmd, `${join(scratch, 'no-such-command')} x`);
  });

  test(`${name}: maxBuffer exceeded: ERR_CHILD_PROCESS_STDIO_MAXBUFFER, output cut at the limit`, async () => {
    const result = await run(create, 'sh', ['-c', 'yes | head -c 100000'], { env, maxBuffer: 10 });
    assert.equal(result.error?.code, 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER');
    assert.equal(result.error?.message, 'stdout maxBuffer length exceeded');
    assert.equal(result.stdout, 'y\ny\ny\ny\ny\n');
  });

  test(`${name}: util.promisify resolves { stdout, stderr }, rejects with them, and has the child`, async () => {
    const promised = promisify(create as typeof execFile)(PRINT, ['p'], { cwd: scratch, env: printEnv });
    assert.ok((promised as unknown as { child: ChildProcess }).child.pid, 'the promise carries the child');
    assert.deepEqual(await promised, { stdout: printed('p'), stderr: 'err\n' });
    await assert.rejects(promisify(create as typeof execFile)('sh', ['-c', 'echo o; echo e >&2; exit 2'], { env }), (error: Record<string, unknown>) => {
      assert.deepEqual([error.code, error.stdout, error.stderr], [2, 'o\n', 'e\n']);
      return true;
    });
  });

  const rejected: Array<[string, unknown[], string, string]> = [
    ['timeout negative', ['true', [], { timeout: -1 }], 'ERR_OUT_OF_RANGE', 'The value of "timeout" is out of range. It must be an unsigned integer. Received -1'],
    ['timeout fractional', ['true', [], { timeout: 1.5 }], 'ERR_OUT_OF_RANGE', 'The value of "timeout" is out of range. It must be an unsigned integer. Received 1.5'],
    ['maxBuffer a string', ['true', [], { maxBuffer: 'x' }], 'ERR_OUT_OF_RANGE', 'The value of "options.maxBuffer" is out of range. It must be a positive number. Received \'x\''],
    ['killSignal unknown', ['true', [], { killSignal: 'SIGFOO' }], 'ERR_UNKNOWN_SIGNAL', 'Unknown signal: SIGFOO'],
    ['killSignal an object', ['true', [], { killSignal: {} }], 'ERR_INVALID_ARG_TYPE', 'The "options.killSignal" property must be one of type string or number. Received an instance of Object'],
    ['callback not a function', ['true', [], {}, 'notfn'], 'ERR_INVALID_ARG_TYPE', 'The "callback" argument must be of type function. Received type string (\'notfn\')'],
    ['args a string', ['true', 'str'], 'ERR_INVALID_ARG_TYPE', 'The "args" argument must be of type object. Received type string (\'str\')'],
    ['options a number', ['true', [], 5], 'ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object. Received type number (5)'],
    ['file a number', [5], 'ERR_INVALID_ARG_TYPE', 'The "file" argument must be of type string. Received type number (5)'],
  ];
  for (const [what, args, code, message] of rejected) {
    test(`${name}: ${what} throws ${code} before any process starts`, () => {
      const before = ownedProcessGroups().length;
      assert.throws(() => create(...args), (error: NodeJS.ErrnoException) => {
        assert.deepEqual([error.code, error.message], [code, message]);
        return true;
      });
      assert.equal(ownedProcessGroups().length, before);
    });
  }
}

for (const [name, create] of execs) {
  test(`${name}: a shell command, its overloads and util.promisify`, async () => {
    const piped = await run(create, 'echo one two | tr o 0', { env });
    assert.deepEqual([piped.error, piped.stdout, piped.stderr], [null, '0ne tw0\n', '']);
    const bare = await run(create, 'exit 4');
    assert.equal(bare.error?.code, 4);
    assert.deepEqual(await promisify(create as typeof exec)('echo "$LEASH_CREATOR_TEST"', { env: printEnv }), { stdout: 'set\n', stderr: '' });
    assert.throws(() => create(5), { code: 'ERR_INVALID_ARG_TYPE', message: 'The "command" argument must be of type string. Received type number (5)' });
  });
}

test('execOwned on timeout: the command gets killSignal as with exec, and what it started is ended too (exec leaves it)', async () => {
  for (const [name, create] of execs) {
    const sleeper = name.includes('Owned') ? 'sleep 301' : 'sleep 302';
    const result = await run(create, `${sleeper} & wait`, { env, timeout: 300 });
    assert.deepEqual([result.error?.killed, result.error?.signal, result.error?.code], [true, 'SIGTERM', null], name);
    const grandchild = markedPidRunning(mark, sleeper);
    if (name.includes('Owned')) {
      // It may already be gone, or about to: either way, gone within the leftover grace.
      assert.ok(await waitUntil(() => markedPidRunning(mark, sleeper) === undefined, 10_000), `${name} left ${sleeper} running`);
    } else {
      assert.ok(grandchild, 'exec leaves what the shell started running (the control)');
    }
  }
});

const CHILD_MODULE = join(scratch, 'echo-child.cjs');
writeFileSync(CHILD_MODULE, "process.on('message', (m) => { process.send({ got: m, argv: process.argv.slice(2), v: process.env.LEASH_CREATOR_TEST }); if (m === 'bye') process.disconnect(); });\n");

for (const [name, create] of forks) {
  test(`${name}: IPC kept, args and options in every overload`, async () => {
    for (const args of [[['x'], { env: printEnv }], [{ env: printEnv }], [null, { env: printEnv }]] as unknown[][]) {
      const child = create(CHILD_MODULE, ...args);
      const reply = new Promise((resolve) => child.once('message', resolve));
      child.send('bye');
      assert.deepEqual(await reply, { got: 'bye', argv: Array.isArray(args[0]) ? ['x'] : [], v: 'set' });
      await new Promise((resolve) => child.once('exit', resolve));
    }
    assert.throws(() => create(CHILD_MODULE, 'str'), { code: 'ERR_INVALID_ARG_TYPE', message: 'The "args" argument must be an instance of Array. Received type string (\'str\')' });
    assert.throws(() => create(CHILD_MODULE, [], 5), { code: 'ERR_INVALID_ARG_TYPE', message: 'The "options" argument must be of type object. Received type number (5)' });
  });
}

test('the owned creators\' children lead their own groups and are owned; Node\'s stay in ours', async () => {
  const owner = ownProcessGroupId();
  const pairs: Array<[ChildProcess, boolean]> = [
    [execFile('sleep', ['30'], { env }), false],
    [execFileOwned('sleep', ['30'], { env }), true],
    [exec('sleep 31', { env }), false],
    [execOwned('sleep 31', { env }), true],
    [fork(CHILD_MODULE, { env }), false],
    [forkOwned(CHILD_MODULE, { env }), true],
  ];
  for (const [child, owned] of pairs) {
    const stat = readProcStat(child.pid!);
    assert.equal(stat?.pgid, owned ? child.pid : owner);
    assert.equal(ownedProcessGroups().includes(child.pid!), owned);
    child.kill('SIGKILL');
  }
});

test('an owner SIGKILLed: the children of execFileOwned, execOwned and forkOwned die with it', async (t) => {
  const ownerScript = join(scratch, 'owner.mjs');
  writeFileSync(
    ownerScript,
    `import { execFileOwned, execOwned, forkOwned } from ${JSON.stringify(LIBRARY_ENTRY)};
const a = execFileOwned('sleep', ['304']);
const b = execOwned('sleep 303 & wait');
const c = forkOwned(${JSON.stringify(CHILD_MODULE)});
setTimeout(() => console.log(JSON.stringify({ pids: [a.pid, b.pid, c.pid] })), 300);
`,
  );
  const owner = spawn(process.execPath, [ownerScript], { stdio: ['ignore', 'pipe', 'pipe'], env });
  t.after(() => owner.kill('SIGKILL'));
  const lines = new JsonLines(owner);
  const { pids } = await lines.next<{ pids: number[] }>(20_000);
  assert.ok(await waitUntil(() => markedPidRunning(mark, 'sleep 303') !== undefined, 10_000), 'the shell started its sleep');
  const grandchild = markedPidRunning(mark, 'sleep 303')!;
  owner.kill('SIGKILL');
  assert.ok(await waitForGone([...pids, grandchild], 15_000), 'an owned child outlived its owner');
});
