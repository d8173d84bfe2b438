// An owner bundled with esbuild into one CommonJS file, as an app would ship it: the library inside
// the bundle cannot find its supervisor next to itself. It must say so once, with the fix, and
// with LEASH_SUPERVISOR_FILE pointing at a copied supervisor.cjs its child must die with it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { requireEsm } from '../../src/cjs/load.cjs';
import { exited, JsonLines, killMarked, LIBRARY_ENTRY, markedEnv, newMark, waitForGone } from '../helpers/processes.js';
import { spawn } from 'node:child_process';
import { SUPERVISOR_MAIN } from '../helpers/groups.js';

const require = createRequire(import.meta.url);
const OWNER = `
const { spawnOwned, supervisorPid } = require(${JSON.stringify(LIBRARY_ENTRY)});
const child = spawnOwned('sleep', ['60'], { stdio: 'ignore' });
setTimeout(() => console.log(JSON.stringify({ owner: process.pid, child: child.pid, supervisor: supervisorPid() ?? null })), 300);
setInterval(() => {}, 1000);
`;

describe('an owner bundled into one CommonJS file', () => {
  let dir = '';
  const mark = newMark();
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'leash-bundle-test-'));
    writeFileSync(join(dir, 'owner.cjs'), OWNER);
    const esbuild = require.resolve('esbuild/bin/esbuild');
    const result = spawnSync(esbuild, [join(dir, 'owner.cjs'), '--bundle', '--platform=node', '--format=cjs', '--log-level=error', `--outfile=${join(dir, 'app.cjs')}`], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(result.status, 0, result.stderr);
    copyFileSync(SUPERVISOR_MAIN, join(dir, 'supervisor.cjs'));
  });
  after(async () => {
    await killMarked(mark);
    rmSync(dir, { recursive: true, force: true });
  });

  async function startApp(extraEnv: NodeJS.ProcessEnv) {
    const app = spawn(process.execPath, [join(dir, 'app.cjs')], { stdio: ['ignore', 'pipe', 'pipe'], env: markedEnv(mark, extraEnv) });
    const lines = new JsonLines(app);
    const info = (await lines.next(10_000)) as { owner: number; child: number; supervisor: number | null };
    return { app, lines, info };
  }

  it('without the supervisor file: one LEASH_SUPERVISOR warning naming the fixes', async () => {
    const { app, lines, info } = await startApp({});
    assert.equal(info.supervisor, null);
    app.kill('SIGKILL');
    await exited(app, 10_000);
    assert.match(lines.stderr, /LEASH_SUPERVISOR.*external.*LEASH_SUPERVISOR_FILE/s);
    assert.equal(lines.stderr.split('LEASH_SUPERVISOR]').length - 1, 1, `one warning, got: ${lines.stderr}`);
    await killMarked(mark);
  });

  it('with LEASH_SUPERVISOR_FILE: the child dies with the owner', async () => {
    const { app, info } = await startApp({ LEASH_SUPERVISOR_FILE: join(dir, 'supervisor.cjs') });
    assert.equal(typeof info.supervisor, 'number');
    app.kill('SIGKILL');
    assert.ok(await waitForGone([info.child], 10_000), 'the owned child outlived its bundled owner');
  });
});

describe('require() on a Node without require(esm)', () => {
  it('names the Node versions it needs instead of ERR_REQUIRE_ESM', () => {
    const old = Object.assign(new Error('require() of ES Module'), { code: 'ERR_REQUIRE_ESM' });
    assert.throws(
      () => requireEsm(() => { throw old; }, 'proc-leash'),
      /require\('proc-leash'\) needs Node\.js \^20\.19\.0 or >=22\.12\.0.*import\('proc-leash'\)/,
    );
    assert.equal(requireEsm(() => 42, 'proc-leash'), 42);
  });
});
