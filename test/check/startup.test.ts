// The start-up path of the check's command (the pre-commit hook's): a file the prefilter clears loads
// no parser, a file that needs one loads only its language's, and the bin loads the bundled command
// (scripts/build.mjs) when it is there. What loaded is read from inside the process: a module
// preloaded with --require lists, as the process exits, what require's cache holds (typescript and
// the tree-sitter runtime are loaded through require) and which command modules were imported.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CLI_ENTRY, killMarked, markedEnv, newMark, REPO_ROOT } from '../helpers/processes.js';
import { project } from './harness.js';

const BIN = join(REPO_ROOT, 'packages/check/bin/leash-check.js');
const mark = newMark();
const scratch = mkdtempSync(join(tmpdir(), 'leash-check-startup-'));
after(async () => {
  await killMarked(mark);
  rmSync(scratch, { recursive: true, force: true });
});

// Hooks the ES module loader too (module.register exists from Node 20.6): the hook, on its own
// thread, appends each URL it loads to a file (a URL holds no blank), so the report also says which of the check's own
// files were imported. Built-ins are read from the process's own list of what it loaded.
const PROBE = join(scratch, 'probe.cjs');
writeFileSync(
  PROBE,
  `const { readFileSync, writeFileSync } = require('node:fs');
const out = process.env.LEASH_PROBE_OUT;
writeFileSync(out + '.imported', '');
require('node:module').register('data:text/javascript,' + encodeURIComponent(
  "import { appendFileSync } from 'node:fs'; let file;" +
  'export function initialize(data) { file = data.file; }' +
  "export async function load(url, context, next) { appendFileSync(file, url + ' '); return next(url, context); }"
), { parentURL: 'file:///', data: { file: out + '.imported' } });
process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((name) => name.startsWith('NativeModule ')).map((name) => name.slice(13));
  const imported = [...new Set(readFileSync(out + '.imported', 'utf8').split(' ').filter(Boolean))];
  writeFileSync(out, JSON.stringify({ required: Object.keys(require.cache), imported, builtins }));
});
`,
);

interface Loaded {
  code: number | null;
  required: string[];
  imported: string[];
  builtins: string[];
  stdout: string;
}

function runProbed(cwd: string, args: string[], cli: string = BIN): Promise<Loaded> {
  const out = join(scratch, `probe-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((resolve) => {
    execFile(process.execPath, ['--require', PROBE, ...(cli === CLI_ENTRY ? [cli, 'check'] : [cli]), ...args], { cwd, env: markedEnv(mark, { LEASH_PROBE_OUT: out, NODE_OPTIONS: '' }), timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      assert.ok(existsSync(out), `the probe wrote nothing (exit ${code}): ${stderr}`);
      const report = JSON.parse(readFileSync(out, 'utf8')) as { required: string[]; imported: string[]; builtins: string[] };
      resolve({ code, stdout, ...report });
    });
  });
}

// The JS parser: TypeScript's, as the build cut it (dist/vendor/typescript-parser.cjs), or the whole package.
const typescriptLoaded = (run: Loaded) => run.required.some((path) => /[\\/]typescript-parser\.cjs$|[\\/]typescript[\\/]lib[\\/]typescript\.js$/.test(path));
const wholeTypescriptLoaded = (run: Loaded) => run.required.some((path) => /[\\/]typescript[\\/]lib[\\/]typescript\.js$/.test(path));
const treeSitterLoaded = (run: Loaded) => run.required.some((path) => /[\\/]@vscode[\\/]tree-sitter-wasm[\\/]/.test(path));

const files = {
  // Trigger words the prefilter clears: a flag set to its harmless value, prose in comments.
  'clean.py': 'import subprocess\n\n# a new session (start_new_session=True) is not wanted here\nsubprocess.Popen(["ls"], start_new_session=False)\n',
  'clean.mjs': "import { spawn } from 'node:child_process';\n// spawned detached? no\nspawn('ls', [], { detached: false });\n",
  // A word without a spawn module: the JS gate clears it.
  'nodes.mjs': 'export const tree = { detached: true, nodes: [] };\n',
  'run.py': 'import subprocess\n\nsubprocess.Popen(["sleep", "1"], start_new_session=True)\n',
  'spawn.mjs': "import { spawn } from 'node:child_process';\nspawn('sleep', ['1'], { detached: true });\n",
};
const dir = project(files, 'leash-check-startup-files-');
after(() => rmSync(dir, { recursive: true, force: true }));

test('files the prefilter clears load no parser, and the command does not load child_process to check named files', async () => {
  const run = await runProbed(dir, ['clean.py', 'clean.mjs', 'nodes.mjs']);
  assert.equal(run.code, 0, run.stdout);
  assert.match(run.stdout, /3 file\(s\) checked/);
  assert.ok(!typescriptLoaded(run), 'typescript loaded for files the prefilter clears');
  assert.ok(!treeSitterLoaded(run), 'tree-sitter loaded for files the prefilter clears');
  assert.ok(run.builtins.includes('fs'), `the probe saw no built-ins: ${run.builtins.join(' ')}`);
  assert.ok(!run.builtins.includes('child_process'), 'node:child_process loaded with every path named');
});

test('a Python finding loads tree-sitter and not typescript; a JS finding typescript and not tree-sitter', async () => {
  const python = await runProbed(dir, ['run.py']);
  assert.equal(python.code, 1, python.stdout);
  assert.match(python.stdout, /run\.py:3:\d+ py-new-session/);
  assert.ok(treeSitterLoaded(python), 'the probe did not see tree-sitter load for a Python finding');
  assert.ok(!typescriptLoaded(python), 'typescript loaded for a Python file');

  const js = await runProbed(dir, ['spawn.mjs']);
  assert.equal(js.code, 1, js.stdout);
  assert.match(js.stdout, /spawn\.mjs:2:\d+ js-detached-spawn/);
  assert.ok(typescriptLoaded(js), 'the probe did not see typescript load for a JS finding');
  assert.ok(!wholeTypescriptLoaded(js), 'the whole typescript.js loaded, not the cut parser');
  assert.ok(!treeSitterLoaded(js), 'tree-sitter loaded for a JS file');
});

test('the bin runs the bundled command where the build made one, and the modules without it', async () => {
  const bundle = join(REPO_ROOT, 'packages/check/dist/command/main.js');
  assert.ok(existsSync(bundle), 'npm run build made no bundle of the command');
  const run = await runProbed(dir, ['run.py']);
  const ours = run.imported.filter((url) => url.includes('/packages/check/dist/') || url.includes('/proc-leash-check/dist/'));
  assert.ok(ours.some((url) => url.endsWith('/dist/command/main.js')), `the bundle was not loaded: ${ours.join(' ')}`);
  assert.ok(!ours.some((url) => url.includes('/dist/check/')), `modules loaded beside the bundle: ${ours.join(' ')}`);
  // `leash check` (the core finds the package) loads the command the package declares: the bundle.
  const viaCore = await runProbed(dir, ['run.py'], CLI_ENTRY);
  assert.equal(viaCore.code, 1, viaCore.stdout);
  const loaded = viaCore.imported.filter((url) => url.includes('/packages/check/dist/'));
  assert.ok(loaded.some((url) => url.endsWith('/dist/command/main.js')), `leash check did not load the bundle: ${loaded.join(' ')}`);
  assert.ok(!loaded.some((url) => url.includes('/dist/check/')), `leash check loaded modules beside the bundle: ${loaded.join(' ')}`);

  // The package without its bundle (built by tsc alone): the bin loads the modules. A clean file
  // needs no parser, so the copy needs no node_modules.
  const copy = join(scratch, 'unbundled');
  cpSync(join(REPO_ROOT, 'packages/check/bin'), join(copy, 'bin'), { recursive: true });
  cpSync(join(REPO_ROOT, 'packages/check/dist/check'), join(copy, 'dist/check'), { recursive: true });
  cpSync(join(REPO_ROOT, 'packages/check/package.json'), join(copy, 'package.json'));
  const out = join(scratch, 'unbundled.json');
  const unbundled = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--require', PROBE, join(copy, 'bin/leash-check.js'), 'clean.py'], { cwd: dir, env: markedEnv(mark, { LEASH_PROBE_OUT: out, NODE_OPTIONS: '' }), timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
  assert.equal(unbundled.code, 0, unbundled.stdout + unbundled.stderr);
  assert.match(unbundled.stdout, /1 file\(s\) checked/);
  const imported = (JSON.parse(readFileSync(out, 'utf8')) as { imported: string[] }).imported;
  assert.ok(imported.some((url) => url.endsWith('/unbundled/dist/check/main.js')), imported.join(' '));
});
