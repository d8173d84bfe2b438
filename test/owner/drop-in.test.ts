// The drop-in, adopted as apps adopt it: child_process's spawn replaced by spawnOwned, for CommonJS
// callers by assignment and for ESM importers by syncBuiltinESMExports(). The app's spawns then go
// through leash, and leash's own internal spawns (its supervisor) must not: they use the functions
// captured when leash loaded (src/sys/child-process.ts). Before, the first spawn recursed into
// itself and hung at 100 % of a core. And promisified execOwned/execFileOwned throw a bad argument
// at once, where Node's promisified exec/execFile throw, instead of rejecting.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { killMarked, LIBRARY_ENTRY, MARK_VARIABLE, newMark } from '../helpers/processes.js';

const APP = String.raw`
import cp from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { promisify } from 'node:util';
const leash = await import(process.env.LIBRARY_URL);
cp.spawn = leash.spawnOwned;
syncBuiltinESMExports();
const { spawn } = await import('node:child_process');
const codeOf = (call) => { try { const result = call(); result?.catch?.(() => {}); return 'no throw'; } catch (error) { return error.code; } };
const thrown = {
  execFile: [codeOf(() => promisify(cp.execFile)(123)), codeOf(() => promisify(leash.execFileOwned)(123))],
  exec: [codeOf(() => promisify(cp.exec)(123)), codeOf(() => promisify(leash.execOwned)(123))],
  execOptions: [codeOf(() => promisify(cp.execFile)('true', [], 'x')), codeOf(() => promisify(leash.execFileOwned)('true', [], 'x'))],
};
const child = spawn(process.execPath, ['-e', 'process.stdout.write("ran")'], { stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
child.stdout.on('data', (chunk) => { out += chunk; });
child.on('exit', async (code) => {
  const ok = await promisify(leash.execFileOwned)(process.execPath, ['-e', 'process.stdout.write("promised")']);
  console.log(JSON.stringify({ replaced: spawn === leash.spawnOwned, out, code, promised: ok.stdout, thrown }));
  process.exit(0);
});
`;

test('spawn replaced by spawnOwned through syncBuiltinESMExports: the app\'s spawn runs, owned; promisified owned exec throws as Node does', { skip: process.platform === 'win32' ? 'POSIX owner' : false }, async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', APP], {
    encoding: 'utf8',
    env: { ...process.env, [MARK_VARIABLE]: mark, LIBRARY_URL: pathToFileURL(LIBRARY_ENTRY).href },
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  assert.equal(result.signal, null, `the app hung (killed after 30 s): ${result.stderr}`);
  assert.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout.trim().split('\n').pop()!) as {
    replaced: boolean;
    out: string;
    code: number;
    promised: string;
    thrown: Record<string, [string, string]>;
  };
  assert.equal(report.replaced, true, 'the ESM binding is spawnOwned: the case really happened');
  assert.equal(report.out, 'ran');
  assert.equal(report.code, 0);
  assert.equal(report.promised, 'promised');
  for (const [name, [node, owned]] of Object.entries(report.thrown)) {
    assert.notEqual(node, 'no throw', `${name}: Node throws here`);
    assert.equal(owned, node, `${name}: the owned one throws the same, synchronously`);
  }
});
