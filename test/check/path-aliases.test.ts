// A project that imports its own modules by bare names its tsconfig.json or jsconfig.json maps
// (`baseUrl`, `paths`, through `extends`) has its spawn wrappers followed as through relative
// imports (module-resolution.ts, ts-config.ts); the same name without a config is a package, as
// before; a config that is outside the root, broken, huge or hostile changes nothing and costs
// little. Each case first shows that the wrapper is reported through a relative import, so that a
// missing finding through the alias means the alias, not the wrapper.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Linter } from 'eslint';
import { checkText } from 'proc-leash-check';
import plugin from 'proc-leash-check/eslint';
import { killMarked, newMark, REPO_ROOT } from '../helpers/processes.js';
import { gitInit, project, runCheck } from './harness.js';

// Internal modules of proc-leash-check, not part of its exports: loaded from its build.
const { analyseJs } = (await import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/js-rules.js')).href)) as {
  analyseJs(text: string, path: string, root?: string, parsing?: 'auto' | 'whole' | 'chunks'): Array<{ rule: string; line: number }>;
};
const { parseConfigJson } = (await import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/ts-config.js')).href)) as {
  parseConfigJson(text: string): unknown;
};

/** A wrapper that hands its options on to child_process: a detached spawn where its caller asks for one. */
const WRAPPER = "import { spawn, type SpawnOptions } from 'node:child_process';\nexport const spawnAsync = (command: string, args: string[], options: SpawnOptions = {}) => spawn(command, args, options);\n";
/** A caller that imports the wrapper by `specifier` and nothing else: no relative import, no spawn module's name. */
const caller = (specifier: string) => `import { spawnAsync } from '${specifier}';\n\nexport function start(exe: string) {\n  return spawnAsync(exe, [], { detached: true });\n}\n`;
const CALLER_LINE = 4;

const dirs: string[] = [];
const mark = newMark();
after(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await killMarked(mark);
});
function make(files: Record<string, string>): string {
  const dir = project(files, 'leash-alias-');
  dirs.push(dir);
  return dir;
}

/** The findings of `path` (relative to `root`) as `leash check` makes them there, as [rule, line] pairs. */
async function findings(root: string, path: string, text: string): Promise<Array<[string, number]>> {
  const cwd = process.cwd();
  process.chdir(root);
  try {
    return (await checkText(path, text, 'js')).map((f) => [f.rule, f.line]);
  } finally {
    process.chdir(cwd);
  }
}
const DETACHED: Array<[string, number]> = [['js-detached-spawn', CALLER_LINE]];

test('baseUrl: `backend/utils` is src/backend/utils.ts, as the relative import of it is', async () => {
  // Comments and trailing commas, as tsconfig allows; `/*` inside a string is no comment.
  const config = '{\n  // the sources\n  "compilerOptions": {\n    "baseUrl": "./src/", /* as Heroic */\n    "outDir": "dist/*",\n  },\n}\n';
  const root = make({ 'tsconfig.json': config, 'src/backend/utils.ts': WRAPPER, 'src/backend/utils/readme.md': 'a folder beside the module\n' });
  assert.ok(existsSync(join(root, 'src/backend/utils.ts')));
  assert.deepEqual(await findings(root, 'src/backend/nile/setup.ts', caller('../utils')), DETACHED, 'the wrapper is reported through a relative import');
  assert.deepEqual(await findings(root, 'src/backend/nile/setup.ts', caller('backend/utils')), DETACHED);
  // A file at the root, above the baseUrl, resolves through it too: the config is above it.
  assert.deepEqual(await findings(root, 'main.ts', caller('backend/utils')), DETACHED);
});

test('paths: `@/*`, an exact key, and the second of two targets when the first has no file', async () => {
  const config = JSON.stringify({ compilerOptions: { paths: { '@/*': ['./src/*'], 'run-lib': ['./src/lib/run.ts'], '@lib/*': ['./missing/*', './src/lib/*'] } } });
  const root = make({ 'tsconfig.json': config, 'src/lib/run.ts': WRAPPER });
  assert.deepEqual(await findings(root, 'src/app/main.ts', caller('../lib/run')), DETACHED, 'the wrapper is reported through a relative import');
  for (const specifier of ['@/lib/run', '@/lib/run.js', 'run-lib', '@lib/run']) {
    assert.deepEqual(await findings(root, 'src/app/main.ts', caller(specifier)), DETACHED, specifier);
  }
  // A key that does not match, and a target the match fills with a path that is not there.
  assert.deepEqual(await findings(root, 'src/app/main.ts', caller('@/lib/walk')), []);
  assert.deepEqual(await findings(root, 'src/app/main.ts', caller('~/lib/run')), []);
});

test('extends: a relative base (without .json), a list of them, and a cycle that ends', async () => {
  const root = make({
    'tsconfig.json': JSON.stringify({ extends: './config/base', compilerOptions: { strict: true } }),
    // baseUrl is relative to the config that sets it, not to the one extending it.
    'config/base.json': JSON.stringify({ compilerOptions: { baseUrl: '../src' } }),
    'pkg/tsconfig.json': JSON.stringify({ extends: ['../config/none.json', './paths.json'] }),
    'pkg/paths.json': JSON.stringify({ compilerOptions: { paths: { '#run': ['../src/lib/run.ts'] } } }),
    'loop/tsconfig.json': JSON.stringify({ extends: './a.json' }),
    'loop/a.json': JSON.stringify({ extends: './b.json', compilerOptions: { baseUrl: '../src' } }),
    'loop/b.json': JSON.stringify({ extends: './a.json' }),
    'src/lib/run.ts': WRAPPER,
  });
  assert.deepEqual(await findings(root, 'app/main.ts', caller('../src/lib/run')), DETACHED, 'the wrapper is reported through a relative import');
  assert.deepEqual(await findings(root, 'app/main.ts', caller('lib/run')), DETACHED);
  assert.deepEqual(await findings(root, 'pkg/main.ts', caller('#run')), DETACHED);
  // The nearest config wins: pkg's maps no `lib/*` and has no baseUrl.
  assert.deepEqual(await findings(root, 'pkg/main.ts', caller('lib/run')), []);
  assert.deepEqual(await findings(root, 'loop/main.ts', caller('lib/run')), DETACHED);
});

test('without a config the same specifier is a package: nothing is followed, nothing reported', async () => {
  const root = make({ 'src/backend/utils.ts': WRAPPER, 'jsconfig.json.bak': JSON.stringify({ compilerOptions: { baseUrl: 'src' } }) });
  assert.ok(existsSync(join(root, 'src/backend/utils.ts')));
  assert.deepEqual(await findings(root, 'src/backend/nile/setup.ts', caller('../utils')), DETACHED, 'the wrapper is reported through a relative import');
  assert.deepEqual(await findings(root, 'src/backend/nile/setup.ts', caller('backend/utils')), []);
});

test('what a config maps outside the root, into node_modules, or to a Node built-in, is not followed', async () => {
  const top = make({
    'outside/run.ts': WRAPPER,
    'app/node_modules/runner/index.ts': WRAPPER,
    'app/events.ts': WRAPPER,
    'app/src/lib/run.ts': WRAPPER,
    'app/tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@out/*': ['../outside/*'], '@in/*': ['./src/lib/*'], '*': ['node_modules/*'] } } }),
  });
  const root = join(top, 'app');
  assert.deepEqual(await findings(root, 'main.ts', caller('@in/run')), DETACHED, 'the same mapping inside the root is followed');
  assert.deepEqual(await findings(top, 'app/main.ts', caller('../outside/run')), DETACHED, 'the outside wrapper is one when inside the root');
  assert.deepEqual(await findings(root, 'main.ts', caller('@out/run')), []);
  assert.deepEqual(await findings(root, 'main.ts', caller('runner')), []);
  assert.deepEqual(await findings(root, 'main.ts', caller('events')), []);
  assert.deepEqual(await findings(root, 'main.ts', caller('node:events')), []);
});

test('a malformed, unreadable or linked config is as if absent: no failure, the file keeps its other findings', async () => {
  const direct = "import { spawn } from 'node:child_process';\nspawn('x', [], { detached: true });\n";
  const text = `${caller('lib/run')}${direct}`;
  const root = make({
    'tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: 'src' } }),
    'bad/tsconfig.json': '{ "compilerOptions": { "baseUrl": "../src", ',
    'worse/tsconfig.json': '[1, 2, 3]',
    'src/lib/run.ts': WRAPPER,
    'lone/src/lib/run.ts': WRAPPER,
    'lone/tsconfig.json': '{ "compilerOptions": { "baseUrl": "src" } // no end',
  });
  symlinkSync(join(root, 'tsconfig.json'), join(root, 'src/tsconfig.json')); // never followed, as a linked module is not
  const both: Array<[string, number]> = [['js-detached-spawn', CALLER_LINE], ['js-detached-spawn', 7]];
  assert.deepEqual(await findings(root, 'app/main.ts', text), both, 'both spawns are reported where the config is sound');
  // Passed over: the search goes on to the root's config.
  assert.deepEqual(await findings(root, 'bad/main.ts', text), both);
  assert.deepEqual(await findings(root, 'worse/main.ts', text), both);
  // With none above it, the alias is a package: the direct spawn is still reported, and the
  // options handed to the package's function are a loose `detached` literal, not a spawn's.
  assert.deepEqual(await findings(join(root, 'lone'), 'main.ts', text), [['js-detached-literal', CALLER_LINE], ['js-detached-spawn', 7]]);
  assert.deepEqual(await findings(join(root, 'lone'), 'main.ts', caller('lib/run')), []);
  assert.deepEqual(parseConfigJson('{ "a": "//not a comment", /* c */ "b": [1, 2,], }'), { a: '//not a comment', b: [1, 2] });
  assert.equal(parseConfigJson('{ "a": 1 '), undefined);
});

test('a hostile config costs little: FIFO, over the size bound, thousands of patterns, many targets', async () => {
  const patterns: Record<string, string[]> = {};
  for (let i = 0; i < 5000; i++) patterns[`@p${i}/*`] = [`./nowhere${i}/*`];
  patterns['@lib/*'] = ['./src/lib/*'];
  const targets = Array.from({ length: 1000 }, (_, i) => `./t${i}/*`);
  const root = make({
    'many/tsconfig.json': JSON.stringify({ compilerOptions: { paths: patterns } }),
    'wide/tsconfig.json': JSON.stringify({ compilerOptions: { paths: { '@w/*': [...targets, '../src/lib/*'] } } }),
    'huge/tsconfig.json': `${JSON.stringify({ compilerOptions: { baseUrl: '../src' } })}${' '.repeat(1 << 20)}`,
    // Under the bound, and no JSON: every quote could start a string that the next backslash escapes.
    'quotes/tsconfig.json': '"\\'.repeat(100_000),
    'many/src/lib/run.ts': WRAPPER,
    'src/lib/run.ts': WRAPPER,
  });
  mkdirSync(join(root, 'fifo'));
  execFileSync('mkfifo', [join(root, 'fifo/tsconfig.json')]);
  const started = process.hrtime.bigint();
  // Every pattern is tried once per specifier: many specifiers against 5000 patterns stay fast.
  const specifiers = Array.from({ length: 200 }, (_, i) => `import { x${i} } from '@p${i}/mod${i}';`).join('\n');
  assert.deepEqual(await findings(root, 'many/main.ts', `${specifiers}\n${caller('@lib/run')}`), [['js-detached-spawn', CALLER_LINE + 200]]);
  // Only the first targets of a key are tried (real ones list one to three).
  assert.deepEqual(await findings(root, 'wide/main.ts', caller('@w/run')), []);
  // Over 256 KiB: no config, whatever it says.
  assert.deepEqual(await findings(root, 'huge/main.ts', caller('lib/run')), []);
  assert.deepEqual(await findings(root, 'quotes/main.ts', caller('lib/run')), []);
  // A FIFO is never waited on.
  assert.deepEqual(await findings(root, 'fifo/main.ts', caller('lib/run')), []);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  assert.ok(seconds < 5, `took ${seconds} s`);
});

test('a file of chunks keeps its aliased imports: the chunked parse has the whole parse\'s findings', () => {
  // The import shares no name with the `detached` literal: it is kept for binding a project module
  // (a file with a binding has its loose literals reported), which only the config says it is.
  const filler = Array.from({ length: 60 }, (_, i) => `export function f${i}(a: number) {\n  return a + ${i};\n}\n`).join('');
  const text = `import { helper } from '@/lib/side';\n${filler}export const options = { detached: true, stdio: 'ignore' };\nhelper();\n`;
  const root = make({ 'tsconfig.json': JSON.stringify({ compilerOptions: { paths: { '@/*': ['./src/*'] } } }), 'src/lib/side.ts': 'export const helper = () => 1;\n' });
  const whole = analyseJs(text, join(root, 'main.ts'), root, 'whole');
  assert.deepEqual(whole.map((f) => [f.rule, f.line]), [['js-detached-literal', 182]]);
  assert.deepEqual(analyseJs(text, join(root, 'main.ts'), root, 'chunks'), whole);
  // Without the config the import binds a package: no binding, no literal reported, chunked or whole.
  const bare = make({ 'src/lib/side.ts': 'export const helper = () => 1;\n' });
  assert.deepEqual(analyseJs(text, join(bare, 'main.ts'), bare, 'whole'), []);
  assert.deepEqual(analyseJs(text, join(bare, 'main.ts'), bare, 'chunks'), []);
});

test('leash check, the command, follows the alias in a git project', async () => {
  const root = make({ 'tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: 'src' } }), 'src/backend/utils.ts': WRAPPER, 'src/backend/nile/setup.ts': caller('backend/utils') });
  gitInit(root);
  const run = await runCheck(['--format', 'json'], root, mark);
  assert.equal(run.code, 1, run.stderr);
  const found = (JSON.parse(run.stdout) as { findings: Array<{ path: string; line: number; rule: string }> }).findings.map((f) => `${f.path}:${f.line} ${f.rule}`);
  assert.deepEqual(found, [`src/backend/nile/setup.ts:${CALLER_LINE} js-detached-spawn`]);
});

test('the ESLint rule follows the alias, and sees the config as it is now in a process that lives on', () => {
  const root = make({ 'tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: 'src' } }), 'src/backend/utils.ts': WRAPPER });
  const file = join(root, 'src/backend/nile/setup.js');
  const text = caller('backend/utils').replace('(exe: string)', '(exe)');
  const linter = new Linter({ configType: 'flat', cwd: root });
  const lint = () =>
    linter
      .verify(text, [{ files: ['**/*.js'], plugins: { leash: plugin as never }, rules: { 'leash/no-detached-spawn': 'error' }, languageOptions: { sourceType: 'module' } }], file)
      .map((message) => `${message.line} ${message.ruleId}: ${message.message}`);
  assert.deepEqual(lint().map((line) => line.replace(/:.*\[/, ' [')), [`${CALLER_LINE} leash/no-detached-spawn [js-detached-spawn]`]);
  // The editor's process stays; the config loses its baseUrl: the name is a package again.
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: {} }));
  assert.deepEqual(lint(), []);
});
