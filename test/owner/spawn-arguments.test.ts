// spawnOwned takes its arguments exactly as child_process.spawn does (facts from Node's
// normalizeSpawnArguments and its test-child-process-spawn-* tests). Every case runs twice: against
// spawn itself (the control: it shows the case tells behaviours apart) and against spawnOwned.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ownedProcessGroups, spawnOwned } from '../../src/index.js';
import { killMarked, MARK_VARIABLE, newMark } from '../helpers/processes.js';

const mark = newMark();
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'leash-spawn-args-')));
after(async () => {
  await killMarked(mark);
  rmSync(scratch, { recursive: true, force: true });
});

type Spawner = (command: string, args?: unknown, options?: unknown) => ChildProcess;
const spawners: Array<[string, Spawner]> = [
  ['spawn (control)', spawn as unknown as Spawner],
  ['spawnOwned', spawnOwned as unknown as Spawner],
];

/** What the child printed on stdout, once it has closed. */
function output(child: ChildProcess): Promise<string> {
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', () => resolve(out));
  });
}

/** A command that needs no arguments to print where it runs and one variable of its environment. */
const PRINT = join(scratch, 'print.sh');
writeFileSync(PRINT, '#!/bin/sh\npwd\necho "v=$LEASH_ARGS_TEST"\n', { mode: 0o755 });

for (const [name, create] of spawners) {
  for (const missing of [undefined, null]) {
    test(`${name}(command, ${String(missing)}, options) keeps the options (cwd, env, stdio)`, async () => {
      const printer = create(PRINT, missing, { cwd: scratch, env: { PATH: process.env.PATH, LEASH_ARGS_TEST: 'kept', [MARK_VARIABLE]: mark }, stdio: ['ignore', 'pipe', 'ignore'] });
      assert.deepEqual((await output(printer)).trim().split('\n'), [scratch, 'v=kept']);
    });
  }

  test(`${name}: an env inheriting from a prototype gives the child the inherited variables too`, async () => {
    const env = Object.create({ LEASH_ARGS_TEST: 'inherited' }) as NodeJS.ProcessEnv;
    env.PATH = process.env.PATH;
    env[MARK_VARIABLE] = mark;
    const child = create(PRINT, [], { env, cwd: scratch, stdio: ['ignore', 'pipe', 'ignore'] });
    assert.deepEqual((await output(child)).trim().split('\n'), [scratch, 'v=inherited']);
  });

  const rejected: Array<[string, unknown, unknown, string]> = [
    ['args a string', 'hello', undefined, 'The "args" argument must be of type object. Received type string (\'hello\')'],
    ['args a boolean', true, undefined, 'The "args" argument must be of type object. Received type boolean (true)'],
    ['args a number', 5, {}, 'The "args" argument must be of type object. Received type number (5)'],
    ['options a number', [], 5, 'The "options" argument must be of type object. Received type number (5)'],
    ['options a string', [], 'x', 'The "options" argument must be of type object. Received type string (\'x\')'],
    ['options null', [], null, 'The "options" argument must be of type object. Received null'],
    ['options an array', [], [], 'The "options" argument must be of type object. Received an instance of Array'],
    ['options a long string', null, 'a'.repeat(40), `The "options" argument must be of type object. Received type string ('${'a'.repeat(25)}...')`],
  ];
  for (const [what, args, options, message] of rejected) {
    test(`${name}: ${what} throws ERR_INVALID_ARG_TYPE before any process starts`, () => {
      const before = ownedProcessGroups().length;
      assert.throws(() => create('true', args, options), (error: NodeJS.ErrnoException) => {
        assert.equal(error.name, 'TypeError');
        assert.equal(error.code, 'ERR_INVALID_ARG_TYPE');
        assert.equal(error.message, message);
        return true;
      });
      assert.equal(ownedProcessGroups().length, before, 'no owned group was started');
    });
  }
}
