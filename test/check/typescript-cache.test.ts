// The TypeScript compiler loaded from a V8 code cache: written after a run, rewritten when it does
// not validate, and never a reason for different findings.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { execFile, spawnSync } from 'node:child_process';
import { killMarked, markedEnv, newMark, REPO_ROOT } from '../helpers/processes.js';
import { pathToFileURL } from 'node:url';
import { runCheck } from './harness.js';

const { commandFlagsTag } = (await import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/v8-tuning.js')).href)) as { commandFlagsTag(): string };

// Where the command keeps it: the node_modules that holds the package (here, the workspace's).
const CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'proc-leash-check');
const ours = () => {
  try {
    return readdirSync(CACHE).filter((name) => name.startsWith('typescript-parser-') && name.includes(`-node${process.version}-${process.arch}`) && name.endsWith('.v8cache'));
  } catch {
    return [];
  }
};

test('typescript code cache', async (t) => {
  const mark = newMark();
  const dir = mkdtempSync(join(tmpdir(), 'leash-check-tscache-'));
  t.after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await killMarked(mark);
  });
  writeFileSync(join(dir, 'run.mjs'), `import { spawn } from 'node:child_process';\nspawn('a', [], { detached: true });\n`);
  const first = await runCheck(['--format', 'json', 'run.mjs'], dir, mark);
  assert.equal(first.code, 1, first.stderr);
  // The command's own file: named by the V8 flags it sets on itself.
  const tag = commandFlagsTag();
  const files = ours().filter((name) => name.endsWith(tag === '' ? `-${process.arch}.v8cache` : `-${tag}.v8cache`));
  assert.equal(files.length, 1, `one cache file for this typescript, this Node and the command's flags in ${CACHE}: ${ours().join(', ')}`);
  const file = join(CACHE, files[0] as string);

  // Data V8 rejects: the run compiles typescript from source, finds the same, and rewrites the
  // cache, removing those of other versions (left by an upgrade) and nothing else.
  const garbage = Buffer.alloc(4096, 7);
  writeFileSync(file, garbage);
  const stale = join(CACHE, 'typescript-parser-1-1-nodev0.0.1-x64.v8cache');
  // The cache of the whole typescript.js that earlier releases kept here.
  const earlier = join(CACHE, 'typescript-5.9.3-9112572-1796572308955-nodev20.20.2-x64.v8cache');
  // Temporary files: one left by a writer that died an hour ago goes, one being written stays.
  const deadWriter = join(CACHE, `${files[0]}.999999.tmp`);
  const liveWriter = join(CACHE, `${files[0]}.999998.tmp`);
  writeFileSync(deadWriter, garbage);
  utimesSync(deadWriter, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
  writeFileSync(liveWriter, garbage);
  t.after(() => rmSync(liveWriter, { force: true }));
  const other = join(CACHE, 'not-a-cache.txt');
  writeFileSync(stale, garbage);
  writeFileSync(earlier, garbage);
  // This version's cache under flags the command no longer sets goes too.
  const retired = tag === '' ? undefined : `${file.slice(0, -`-${tag}.v8cache`.length)}-retired-flags.v8cache`;
  if (retired) writeFileSync(retired, garbage);
  writeFileSync(other, 'kept');
  t.after(() => rmSync(other, { force: true }));
  const second = await runCheck(['--format', 'json', 'run.mjs'], dir, mark);
  assert.equal(second.code, 1, second.stderr);
  assert.equal(second.stdout, first.stdout);
  assert.notDeepEqual(readFileSync(file), garbage, 'the rejected cache is rewritten');
  assert.ok(!existsSync(stale), 'the other version\'s cache is removed');
  assert.ok(!existsSync(earlier), 'the cache of the whole typescript.js an earlier release kept is removed');
  if (retired) assert.ok(!existsSync(retired), 'the cache of flags no longer set is removed');
  assert.ok(existsSync(other), 'a file that is no typescript cache stays');
  assert.ok(!existsSync(deadWriter), 'a temporary file its writer left an hour ago is removed');
  assert.ok(existsSync(liveWriter), 'a temporary file being written is left to its writer');
  const rewritten = readFileSync(file);
  const third = await runCheck(['--format', 'json', 'run.mjs'], dir, mark);
  assert.equal(third.stdout, first.stdout);
  // The command sets V8 flags on itself (v8-tuning.ts), and V8 rejects a cache made under other
  // flags: the cache it wrote must be the one it accepts, not rewritten on every run.
  assert.deepEqual(readFileSync(file), rewritten, 'the cache the command wrote is accepted by its next run');

  // The ESLint plugin loads typescript the same way: an `eslint .` run is as cold a process. It
  // sets no V8 flags (it runs in ESLint's process), so it keeps a cache of its own beside the
  // command's, and neither run disturbs the other's.
  const lint = [
    "import { Linter } from 'eslint';",
    "import leash from 'proc-leash-check/eslint';",
    "const text = \"import { spawn } from 'node:child_process';\\nspawn('a', [], { detached: true });\\n\";",
    "const messages = new Linter({ configType: 'flat' }).verify(text, [leash.configs.recommended], 'a.mjs');",
    'process.stdout.write(messages.map((m) => m.message).join("\\n"));',
  ].join('\n');
  const lintOnce = () =>
    new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--input-type=module', '-e', lint], { cwd: REPO_ROOT, env: markedEnv(mark), timeout: 60_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(stdout);
      });
    });
  assert.match(await lintOnce(), /\[js-detached-spawn\]$/);
  const lintFiles = ours().filter((name) => name.endsWith(`-${process.arch}.v8cache`));
  assert.equal(lintFiles.length, 1, `the ESLint plugin's own cache beside the command's: ${ours().join(', ')}`);
  const lintFile = join(CACHE, lintFiles[0] as string);
  writeFileSync(lintFile, garbage);
  assert.match(await lintOnce(), /\[js-detached-spawn\]$/);
  assert.notDeepEqual(readFileSync(lintFile), garbage, 'the ESLint plugin compiled typescript through the code cache, and rewrote the rejected one');
  if (lintFile !== file) assert.deepEqual(readFileSync(file), rewritten, "the ESLint plugin's runs left the command's cache alone");

  // A cache another user could have written could hold any code. A valid cache file writable by
  // group or others is not run: it is replaced by one of the run's own (its mode says so). In a
  // folder writable by others, nothing is read or written (the garbage stays as it is).
  if (process.platform !== 'win32') {
    await runCheck(['--format', 'json', 'run.mjs'], dir, mark);
    chmodSync(file, 0o666);
    const loose = await runCheck(['--format', 'json', 'run.mjs'], dir, mark);
    assert.equal(loose.stdout, first.stdout);
    assert.equal(statSync(file).mode & 0o777, 0o644, 'the loose cache file was replaced, not used');
    writeFileSync(file, garbage);
    chmodSync(CACHE, 0o777);
    try {
      const run = await runCheck(['--format', 'json', 'run.mjs'], dir, mark);
      assert.equal(run.stdout, first.stdout);
      assert.deepEqual(readFileSync(file), garbage, 'in a folder writable by others the cache is neither read nor rewritten');
    } finally {
      chmodSync(CACHE, 0o755);
    }
    await runCheck(['--format', 'json', 'run.mjs'], dir, mark);
    assert.notDeepEqual(readFileSync(file), garbage, 'trusted again, it is rewritten');

    // A link in the cache's place is never followed, even to a file that would pass: the data
    // read is judged on the open descriptor. The run compiles from source and puts a file of its
    // own in the link's place; the link's target is left as it was.
    const elsewhere = join(dir, 'valid-cache-elsewhere.v8cache');
    writeFileSync(elsewhere, readFileSync(file));
    rmSync(file);
    symlinkSync(elsewhere, file);
    const before = readFileSync(elsewhere);
    const linked = await runCheck(['--format', 'json', 'run.mjs'], dir, mark);
    assert.equal(linked.stdout, first.stdout);
    assert.ok(!lstatSync(file).isSymbolicLink(), 'the link was replaced by a cache file of the run');
    assert.deepEqual(readFileSync(elsewhere), before, "the link's target was not written");
  }
});

test('the preloaded parser is the one js-rules requires, and loading it does not load crypto', () => {
  // A fresh process: this one has loaded crypto already. (perf_hooks is loaded either way: the
  // global `performance` the lean require hands over is built on it.)
  const script = [
    `const { preloadTypeScript } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/typescript-cache.js')).href)});`,
    'preloadTypeScript();',
    "const { createRequire } = await import('node:module');",
    `const require = createRequire(${JSON.stringify(join(REPO_ROOT, 'packages/check/dist/check/js-rules.js'))});`,
    "const path = require.resolve('../vendor/typescript-parser.cjs');",
    'const preloaded = require.cache[path]?.exports;',
    "const ts = require('../vendor/typescript-parser.cjs');",
    "const sf = ts.createSourceFile('a.js', 'spawn(1)', ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);",
    "const loaded = process.moduleLoadList.filter((name) => /^NativeModule crypto$/.test(name));",
    'process.stdout.write(JSON.stringify({ same: preloaded !== undefined && preloaded === ts, callee: sf.statements[0].expression.expression.getText(sf), loaded }));',
  ].join('\n');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { same: true, callee: 'spawn', loaded: [] });
});
