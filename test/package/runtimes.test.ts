// Owners under other runtimes: Bun and Deno run the library (and then the supervisor) themselves.
// Neither is a dependency of this repository, so each test runs only when its binary is named:
//   LEASH_TEST_BUN=/path/to/bun LEASH_TEST_DENO=/path/to/deno node scripts/run-tests.mjs runtimes
// (both install from npm: `npm install bun deno` in a scratch folder, then node_modules/.bin/...).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { JsonLines, killMarked, LIBRARY_ENTRY, markedEnv, newMark, waitForGone } from '../helpers/processes.js';

const OWNER = `
import { spawnOwned, supervisorPid } from ${JSON.stringify(LIBRARY_ENTRY)};
const child = spawnOwned('sleep', ['60'], { stdio: 'ignore' });
setTimeout(() => console.log(JSON.stringify({ owner: process.pid, child: child.pid, supervisor: supervisorPid() ?? null })), 300);
setInterval(() => {}, 1000);
`;

const runtimes: Array<[string, string | undefined, string[]]> = [
  ['Bun', process.env.LEASH_TEST_BUN, []],
  ['Deno', process.env.LEASH_TEST_DENO, ['run', '--allow-all']],
];

for (const [name, binary, flags] of runtimes) {
  test(`an owner under ${name} SIGKILLed: its owned child dies with it`, { skip: binary ? false : `set LEASH_TEST_${name.toUpperCase()} to run it` }, async (t) => {
    const mark = newMark();
    const dir = mkdtempSync(join(tmpdir(), 'leash-runtime-test-'));
    t.after(async () => {
      await killMarked(mark);
      rmSync(dir, { recursive: true, force: true });
    });
    writeFileSync(join(dir, 'owner.mjs'), OWNER);
    const owner = spawn(binary!, [...flags, join(dir, 'owner.mjs')], { stdio: ['ignore', 'pipe', 'pipe'], env: markedEnv(mark) });
    const lines = new JsonLines(owner);
    const info = await lines.next<{ owner: number; child: number; supervisor: number | null }>(20_000);
    assert.equal(typeof info.supervisor, 'number', `no supervisor under ${name}: ${lines.stderr}`);
    // The supervisor runs under the same runtime, not under a node that may not exist.
    const supervisorCommand = readFileSync(`/proc/${info.supervisor}/cmdline`, 'utf8').split('\0');
    assert.ok(supervisorCommand[0]!.includes(name.toLowerCase()), supervisorCommand.join(' '));
    owner.kill('SIGKILL');
    assert.ok(await waitForGone([info.child], 10_000), `the owned child outlived its ${name} owner`);
  });
}
