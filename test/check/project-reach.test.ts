// A JS/TS file whose only way to a spawn function is a project module is parsed only when some
// module it reaches through relative specifiers binds a spawn module (project-reach.ts): the
// answer must never be "no" where the analyser, following the same imports, could find something.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { checkText } from 'proc-leash-check';
import { REPO_ROOT } from '../helpers/processes.js';

// Internal modules of proc-leash-check, not part of its exports: loaded from its build.
const { projectMayBindSpawn } = (await import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/project-reach.js')).href)) as {
  projectMayBindSpawn(path: string, text: string, root?: string): boolean;
};
const { analyseJs } = (await import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/js-rules.js')).href)) as {
  analyseJs(text: string, path: string, root?: string, parsing?: 'auto' | 'whole' | 'chunks'): Array<{ rule: string; line: number }>;
};

/** A scratch project of `files` (path to text); removed by the caller. */
function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'leash-reach-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const MAIN = "import { start } from './lib/run.js';\nstart('x').unref();\n";

test('a spawn module reached through a chain of relative imports, in any spelling, is found', () => {
  const chains: Array<Record<string, string>> = [
    { 'lib/run.ts': "export { start } from '../core';\n", 'core/index.js': "const cp = require('node:child_process');\nexports.start = (c) => cp.spawn(c);\n" },
    { 'lib/run.ts': "export * from './a';\n", 'lib/a.mts': "export * from './b.mjs';\n", 'lib/b.mts': "import { execa } from 'execa';\nexport const start = execa;\n" },
    // A specifier the analyser reads through an escape: what it names is not read from the text.
    { 'lib/run.ts': "const cp = require('child\\u005fprocess');\nexport const start = (c: string) => cp.spawn(c);\n" },
  ];
  for (const files of chains) {
    const root = project(files);
    try {
      assert.equal(projectMayBindSpawn(join(root, 'main.ts'), MAIN, root), true, JSON.stringify(files));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
});

test('modules that bind no spawn module, cycles, and modules the analyser never reads are a no', () => {
  const root = project({
    'app/lib/run.ts': "import { b } from './b';\nexport const start = (c: string) => b(c);\n",
    'app/lib/b.ts': "import { start } from './run';\nexport const b = (c: string) => start(c);\n// a module outside the project is never read:\nimport '../../outside.js';\n",
    'outside.js': "require('child_process').spawn('x', { detached: true });\n",
    'app/big.js': `require('child_process');\n${'x'.repeat(1 << 20)}\n`,
  });
  try {
    const app = join(root, 'app');
    assert.equal(projectMayBindSpawn(join(app, 'main.ts'), MAIN, app), false);
    // Over 1 MB: the analyser reads no exports from it, nor does this.
    assert.equal(projectMayBindSpawn(join(app, 'main.ts'), "import { start } from './big.js';\nstart().unref();\n", app), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a file turned away for its project modules has the findings of a whole parse', async () => {
  const spawning = { 'lib/run.ts': "import { spawn } from 'node:child_process';\nexport function start(c: string) {\n  return spawn(c, []);\n}\n" };
  const inert = { 'lib/run.ts': 'export function start(c: string) {\n  return setTimeout(() => c, 10);\n}\n' };
  const cwd = process.cwd();
  for (const [files, expected] of [[spawning, 1], [inert, 0]] as const) {
    const root = project(files);
    try {
      process.chdir(root);
      const whole = analyseJs(MAIN, 'main.ts', root, 'whole');
      const checked = await checkText('main.ts', MAIN, 'js');
      assert.deepEqual(checked.map((f) => [f.rule, f.line]), whole.map((f) => [f.rule, f.line]));
      assert.equal(checked.length, expected);
    } finally {
      process.chdir(cwd);
      rmSync(root, { recursive: true, force: true });
    }
  }
});

test('a loose `detached` literal and a PTY spawn known by its shape need no spawn module: still reported', async () => {
  const inert = { 'lib/run.ts': 'export function start(c: string) {\n  return setTimeout(() => c, 10);\n}\n' };
  const texts: Array<[string, number]> = [
    // js-detached-literal: an import from the project is a binding.
    ["import { start } from './lib/run.js';\nexport const options = { detached: true, stdio: 'ignore' };\nstart('x');\n", 1],
    ["import { start } from './lib/run.js';\nexport const options = { ['detach' + 'ed']: true, stdio: 'ignore' };\nstart('x');\n", 1],
    // js-pty: `spawn` with `cols` and `rows`, whatever owns it.
    ["import { start } from './lib/run.js';\nconst term = start('x');\nterm.spawn('sh', [], { cols: 80, rows: 24 }).unref();\n", 1],
    // A method called detach and CSS classes hold none of these.
    ["import { start } from './lib/run.js';\nstart('x').detach();\nconst css = 'grid-cols-2 auto-rows-fr';\nstart(css).unref();\n", 0],
  ];
  const cwd = process.cwd();
  const root = project(inert);
  try {
    process.chdir(root);
    for (const [text, expected] of texts) {
      const whole = analyseJs(text, 'main.ts', root, 'whole');
      const checked = await checkText('main.ts', text, 'js');
      assert.deepEqual(checked.map((f) => [f.rule, f.line]), whole.map((f) => [f.rule, f.line]), text);
      assert.equal(checked.length, expected, text);
    }
  } finally {
    process.chdir(cwd);
    rmSync(root, { recursive: true, force: true });
  }
});

test('a module reached through a link, or a path through a file, is no module and no failure', async () => {
  // `./run.js` is a link to a file: lstat says so, and `run.js/index.ts` fails with ENOTDIR (it
  // used to end the check of main.ts with "the analyser failed").
  const root = project({ 'real.js': "export const start = (c) => require('node:child_process').spawn(c);\n", 'lib.js': 'export const x = 1;\n' });
  symlinkSync(join(root, 'real.js'), join(root, 'run.js'));
  const cwd = process.cwd();
  try {
    process.chdir(root);
    for (const text of ["import { start } from './run.js';\nstart('x').unref();\n", "import { start } from './lib.js/run';\nstart('x').unref();\n"]) {
      assert.equal(projectMayBindSpawn(join(root, 'main.ts'), text, root), false, text);
      assert.deepEqual(await checkText('main.ts', text, 'js'), [], text);
    }
    // The same text with the real file is read: the case above is a link's, not a module's absence.
    assert.equal(projectMayBindSpawn(join(root, 'main.ts'), "import { start } from './real.js';\nstart('x').unref();\n", root), true);
  } finally {
    process.chdir(cwd);
    rmSync(root, { recursive: true, force: true });
  }
});
