// The chunked parse of JS/TS (js-chunks.ts): only the statements that can matter are parsed, the
// rest blanked. Findings must be exactly those of a whole-file parse, at the same lines and columns.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../helpers/processes.js';
import { copyFixtures } from './harness.js';

// Internal modules of proc-leash-check, not part of its exports: loaded from its build.
type Parsing = 'auto' | 'whole' | 'chunks';
const { analyseJs } = (await import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/js-rules.js')).href)) as {
  analyseJs(text: string, path: string, root?: string, parsing?: Parsing): unknown[];
};
const { relevantText } = (await import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/js-chunks.js')).href)) as {
  relevantText(text: string, path: string, minBlankedShare?: number): string | undefined;
};

const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/;

test('chunked and whole-file analysis report the same findings on every JS/TS fixture', () => {
  let compared = 0;
  for (const suite of ['js', 'js-chunks']) {
    const fixtures = copyFixtures(suite);
    try {
      for (const file of fixtures.files) {
        const text = readFileSync(join(fixtures.dir, file), 'utf8');
        const chunked = analyseJs(text, join(fixtures.dir, file), fixtures.dir, 'chunks');
        const whole = analyseJs(text, join(fixtures.dir, file), fixtures.dir, 'whole');
        assert.deepEqual(chunked, whole, `${suite}/${file}`);
        compared++;
      }
    } finally {
      fixtures.remove();
    }
  }
  assert.ok(compared >= 25, `${compared} files compared`);
});

test('the chunker-edge fixtures are parsed in chunks, lines and columns in place, unless they say why not', () => {
  const fixtures = copyFixtures('js-chunks');
  try {
    let chunked = 0;
    for (const file of fixtures.files) {
      const text = readFileSync(join(fixtures.dir, file), 'utf8');
      const reduced = relevantText(text, file, 0);
      const whole = /^\/\/ parsed whole: /.test(text);
      assert.equal(reduced === undefined, whole, `${file}: ${whole ? 'expected to be parsed whole' : 'expected to be chunked'}`);
      if (reduced === undefined) continue;
      chunked++;
      assert.ok(reduced.replace(/\s/g, '').length < text.replace(/\s/g, '').length, `${file}: something is blanked`);
      // Every line is there, with the same line breaks; a kept character is where it was.
      const before = text.split(LINE_BREAK);
      const after = reduced.split(LINE_BREAK);
      assert.equal(after.length, before.length, `${file}: line count`);
      assert.deepEqual(reduced.match(new RegExp(LINE_BREAK.source, 'g')), text.match(new RegExp(LINE_BREAK.source, 'g')), `${file}: line breaks`);
      after.forEach((line, index) => {
        for (let column = 0; column < line.length; column++) {
          const c = line.charAt(column);
          // A `;` may end a kept statement that a line break ended before.
          if (c !== ' ' && c !== ';') assert.equal(c, before[index]?.charAt(column), `${file}:${index + 1}:${column + 1}`);
        }
      });
    }
    assert.ok(chunked >= 7, `${chunked} files chunked`);
  } finally {
    fixtures.remove();
  }
});

test('what the tokenizer cannot be sure of is parsed whole', () => {
  const spawnLine = "import { spawn } from 'node:child_process';\nspawn('a', [], { detached: true });\n";
  const filler = 'export function f(a) {\n  return a + 1;\n}\n'.repeat(5);
  assert.notEqual(relevantText(spawnLine + filler, 'a.mjs', 0), undefined, 'the plain case is chunked');
  // Shifts and comparisons after a value are operators, not JSX.
  assert.notEqual(relevantText(`${spawnLine}${filler}const budget = 1 << 18, small = budget <= 2, mask = budget <<= 1;\n`, 'a.jsx', 0), undefined, 'a shift');
  const unsure: Array<[string, string]> = [
    ['JSX', `${spawnLine}${filler}export const b = () => <div>{1}</div>;\n`],
    ['a `/` after `}`', `${spawnLine}${filler}const o = {}\n/x/g.test('a');\n`],
    ['an unterminated string', `${spawnLine}${filler}const s = 'abc\n`],
    ['an unclosed bracket', `${spawnLine}${filler}f(1;\n`],
    ['an unterminated template', `${spawnLine}${filler}const t = \`a \${b}\n`],
    ['an escape in a name', `${spawnLine}${filler}const \\u0061b = 1;\n`],
    ['a top-level decorator', `${spawnLine}${filler}@sealed\nclass C {}\n`],
  ];
  for (const [what, text] of unsure) assert.equal(relevantText(text, what === 'a top-level decorator' ? 'a.ts' : 'a.mjs', 0), undefined, what);
});

test('a statement that only shares a name with a kept one is kept, and a statement of the same line stays in its column', () => {
  const text = [
    "import { spawn } from 'node:child_process';",
    'const shared = { detached: true };',
    'export function unrelated(a) { return a * 2; }',
    'export function far() { return spawn("x", [], shared); }',
    'export const alsoUnrelated = 3; export const near = spawn("y", [], shared);',
  ].join('\n');
  const reduced = relevantText(text, 'a.mjs', 0);
  assert.ok(reduced !== undefined);
  const lines = reduced.split('\n');
  assert.equal(lines[2]?.trim(), '', 'the unrelated function is blanked');
  // A `;` after a kept statement that a line break ended: the next kept one cannot run on into it.
  assert.equal(lines[3], 'export function far() { return spawn("x", [], shared); };');
  assert.equal(lines[4], '                                export const near = spawn("y", [], shared);');
  assert.deepEqual(analyseJs(text, 'a.mjs', REPO_ROOT, 'chunks'), analyseJs(text, 'a.mjs', REPO_ROOT, 'whole'));
  assert.equal(analyseJs(text, 'a.mjs', REPO_ROOT, 'chunks').length, 2);
});

test('the first statement with module syntax is kept, so that a file stays a module (or a script)', () => {
  const filler = 'function f(a) {\n  return a + 1;\n}\n'.repeat(5);
  const unref = 'setTimeout(() => {}, 1).unref();\n';
  // Module syntax only in an unrelated statement: blanking it would make a .js file a script,
  // where sloppy-mode syntax is no parse error.
  const module = `${filler}export const version = 1;\n${filler}${unref}`;
  const reduced = relevantText(module, 'a.js', 0);
  assert.ok(reduced?.includes('export const version = 1;'), reduced);
  // A TypeScript namespace alias is no module syntax: the export after it is what is kept.
  const alias = `import A = N.b;\n${filler}export const version = 1;\n${filler}${unref}`;
  assert.ok(relevantText(alias, 'a.ts', 0)?.includes('export const version = 1;'));
  const script = `${filler}${unref}`;
  assert.ok(!relevantText(script, 'a.js', 0)?.includes('function f'));
  const sloppy = `${filler}export const version = 1;\n${filler}setTimeout(() => 0777, 1).unref();\n`;
  assert.deepEqual(analyseJs(sloppy, 'a.js', REPO_ROOT, 'chunks'), analyseJs(sloppy, 'a.js', REPO_ROOT, 'whole'));
  assert.equal((analyseJs(sloppy, 'a.js', REPO_ROOT, 'chunks') as Array<{ rule: string }>)[0]?.rule, 'parse-error');
});

test('a statement binding a spawn module is kept even when nothing kept names it', () => {
  // Whether anything is bound decides whether a loose `detached` is looked at at all.
  const filler = 'function f(a) {\n  return a + 1;\n}\n'.repeat(5);
  const text = `import { exec } from 'node:child_process';\n${filler}launch({ detached: true, stdio: 'ignore' });\n${filler}`;
  const chunked = analyseJs(text, 'a.mjs', REPO_ROOT, 'chunks') as Array<{ rule: string }>;
  assert.deepEqual(chunked, analyseJs(text, 'a.mjs', REPO_ROOT, 'whole'));
  assert.deepEqual(chunked.map((f) => f.rule), ['js-detached-literal']);
  assert.ok(relevantText(text, 'a.mjs', 0)?.startsWith("import { exec } from 'node:child_process';"));
});

test('a statement binding a project module by `.` or `..` is kept as one binding `./x` is', () => {
  // pm2's examples: `var pm2 = require('..')`, a relative specifier the analyser follows.
  const filler = 'function f(a) {\n  return a + 1;\n}\n'.repeat(5);
  for (const specifier of ['..', '.', '../lib', './x.js']) {
    const text = `var pm2 = require('${specifier}');\n${filler}start(reconnect, { detached: true });\n${filler}`;
    const chunked = analyseJs(text, 'a.js', REPO_ROOT, 'chunks') as Array<{ rule: string }>;
    assert.deepEqual(chunked, analyseJs(text, 'a.js', REPO_ROOT, 'whole'), specifier);
    assert.deepEqual(chunked.map((f) => f.rule), ['js-detached-literal'], specifier);
  }
});

test('a string whose every `&` is paired (`a && b`) is no trigger; a lone `&` still is', () => {
  // `&&` is never a background `&`, whatever string it is joined to (shell.ts), so an `exec` of
  // `make && make test` does not bring in the statements that share its names.
  const timer = 'export function watchdog(onStall) {\n  const timer = setInterval(onStall, 30_000);\n  timer.unref();\n}\n';
  const build = (command: string) => `export function build(cwd) {\n  return exec('${command}', { cwd });\n}\n`;
  const text = (command: string) => `import { exec } from 'node:child_process';\n${timer}${build(command)}`;
  assert.ok(!relevantText(text('npm run build && npm test'), 'a.mjs', 0)?.includes('exec('), 'paired: blanked');
  assert.ok(!relevantText(text('a &&& b'), 'a.mjs', 0)?.includes('exec('), 'a run of three: blanked');
  assert.ok(!relevantText(text('a \\x26\\x26 b'), 'a.mjs', 0)?.includes('exec('), 'escaped pair: blanked');
  for (const command of ['server &', 'a & b && c', '&', 'a \\x26 b', 'a &\\\\\n& b']) {
    const file = text(command);
    assert.ok(relevantText(file, 'a.mjs', 0)?.includes('exec(') ?? true, `lone: kept (${command})`);
    assert.deepEqual(analyseJs(file, 'a.mjs', REPO_ROOT, 'chunks'), analyseJs(file, 'a.mjs', REPO_ROOT, 'whole'), command);
  }
});

test('member names link where the analyser compares them: under `this.`, by a string or number, and where assigned', () => {
  const filler = (n: number) => `export function filler${n}(list) {\n  return list.map((item) => item.length).filter(Boolean);\n}\n`;
  const text = [
    // Each pair is linked by its member only: three spawn functions imported apart, no other name shared.
    "import { spawn } from 'node:child_process';",
    "import { fork } from 'node:child_process';",
    "import { execFile } from 'node:child_process';",
    filler(1),
    "export class StartsA { a() { this.proc = spawn('one', []); } }",
    "export class StartsB { b() { this['named'] = fork('two'); } }",
    "export class StartsC { c() { this[0] = execFile('three'); } }",
    filler(2),
    'export class StopsA { x() { this.proc.unref(); } }',
    "export class StopsB { y() { this['named'].unref(); } }",
    'export class StopsC { z() { this[0].unref(); } }',
    filler(3),
    'settings.cfg = { detached: true };',
    filler(4),
    'export function go(cfg) { return runTool(cfg); }',
    filler(5),
  ].join('\n');
  const chunked = analyseJs(text, 'a.mjs', REPO_ROOT, 'chunks') as Array<{ rule: string; line: number }>;
  assert.deepEqual(chunked, analyseJs(text, 'a.mjs', REPO_ROOT, 'whole'));
  assert.deepEqual(chunked.map((f) => `${f.line} ${f.rule}`), ['15 js-unref-child', '16 js-unref-child', '17 js-unref-child', '22 js-detached-literal']);
  const reduced = relevantText(text, 'a.mjs', 0) ?? '';
  assert.ok(!reduced.includes('filler'), 'the fillers, sharing only `.length` and `.map` with the rest, are blanked');
});

test('the tokenizer keeps its own stack: templates nested 10,000 deep are read, and blanked when unrelated', () => {
  let nested = 'x';
  for (let k = 0; k < 10_000; k++) nested = `\`a\${${nested}}b\``;
  const text = `import { spawn } from 'node:child_process';\nspawn('a', [], { detached: true });\nconst t = ${nested};\n${'export const n = 1;\n'.repeat(5)}`;
  const reduced = relevantText(text, 'a.mjs', 0);
  assert.ok(reduced !== undefined && !reduced.includes('`'), 'the nested templates are blanked');
  assert.deepEqual((analyseJs(text, 'a.mjs', REPO_ROOT, 'auto') as Array<{ rule: string }>).map((f) => f.rule), ['js-detached-spawn']);
  // Kept (it names the spawn), the TypeScript parser's own recursion overflows: that is the CLI's
  // exit 2 by name (test/check/fail-closed.test.ts), never a hang or a wrong answer.
  assert.throws(() => analyseJs(`${text}spawn(${nested});\n`, 'a.mjs', REPO_ROOT, 'auto'), RangeError);
});

test('chunked and whole-file analysis agree on the syntax a statement splitter can trip on (ASI, TS forms, regular expressions, labels)', () => {
  const sp = "import { spawn } from 'node:child_process';\n";
  const filler = 'export function f(a) {\n  return a + 1;\n}\n'.repeat(4);
  const cases: Record<string, string> = {
    letName: `${sp}const opts = { detached: true }\nlet\nx = opts\n${filler}spawn('a', [], x)\n`,
    yieldRe: `${sp}function* g() { yield\n/detached/g }\n${filler}spawn('a', [], { detached: true })\n`,
    asiPlus: `${sp}const o = { detached: true }\nlet y = o\n++z\n${filler}spawn('a', [], y)\n`,
    typeUnion: `${sp}type A = B\n| C\nconst o: A = { detached: true }\n${filler}spawn('a', [], o)\n`,
    generics: `${sp}const o = f<T>\n(x)\nconst p = { detached: true }\n${filler}spawn('a', [], p)\n`,
    label: `${sp}outer:\nfor (const a of b) { spawn('a', [], { detached: true }) }\n${filler}`,
    getter: `${sp}class K { get\ndetached() { return true } }\nconst c = new K()\n${filler}spawn('a', [], c)\n`,
    declare: `${sp}declare const o: any\nconst p = o\n${filler}spawn('a', [], { ...p, detached: true })\n`,
    namespace: `${sp}namespace N { export const o = { detached: true } }\n${filler}spawn('a', [], N.o)\n`,
    enumx: `${sp}enum E { A }\nconst o = { detached: E.A === 0 }\n${filler}spawn('a', [], o)\n`,
    privateIn: `${sp}class K { #p; static has(o) { return #p in o } }\nconst o = { detached: true }\n${filler}spawn('a', [], o)\n`,
    arrowAsync: `${sp}const run = async\n(x) => spawn(x, [], { detached: true })\n${filler}`,
    exportDefault: `${sp}export default\nfunction go() { return spawn('a', [], { detached: true }) }\n${filler}`,
    regexClass: `${sp}const r = /[/'"]/g\nconst o = { detached: true }\n${filler}spawn('a', [], o)\n`,
    templateCmd: `${sp}const cmd = \`nohup \${x} &\`\n${filler}spawn('sh', ['-c', cmd])\n`,
    shebang: `#!/usr/bin/env node\n${sp}${filler}spawn('a', [], { detached: true })\n`,
    satisfies: `${sp}const o = { detached: true } satisfies\nSpawnOptions\n${filler}spawn('a', [], o)\n`,
    usingDecl: `${sp}using r = res()\nconst o = { detached: true }\n${filler}spawn('a', [], o)\n`,
    unicodeName: `${sp}const ö = { detached: true }\n${filler}spawn('a', [], ö)\n`,
    lineSep: `${sp}const o = { detached: true }\u2028const p = o\n${filler}spawn('a', [], p)\n`,
    objectAfterBrace: `${sp}if (a) {}\n({ detached: true }).x\nconst p = 1\n${filler}spawn('a', [], p)\n`,
    ofRegex: `${sp}for (const x of /detached/.exec(s)) {}\n${filler}spawn('a', [], { detached: true })\n`,
    questionDot: `${sp}const o = a?.b\n?.c\nconst p = { detached: true }\n${filler}spawn('a', [], p)\n`,
    bigComment: `${sp}/* a\n detached */\nconst p = {}\n${filler}spawn('a', [], p)\n`,
    importAttr: `${sp}import data from './d.json' with { type: 'json' }\nconst p = { detached: data.x }\n${filler}spawn('a', [], p)\n`,
    importMeta: `${sp}const u = import.meta\n.url\nconst p = { detached: true }\n${filler}spawn('a', [], p)\n`,
    overload: `${sp}function s(a: string): void\nfunction s(a: any) { spawn(a, [], { detached: true }) }\n${filler}`,
    abstractCls: `${sp}abstract class A { abstract go(): void }\nconst p = { detached: true }\n${filler}spawn('a', [], p)\n`,
    exportEq: `${sp}const p = { detached: true }\nexport = p\n${filler}spawn('a', [], p)\n`,
  };
  for (const [name, text] of Object.entries(cases)) {
    for (const path of ['a.ts', 'a.mjs', 'a.js', 'a.tsx']) {
      assert.deepEqual(analyseJs(text, path, REPO_ROOT, 'chunks'), analyseJs(text, path, REPO_ROOT, 'whole'), `${name} as ${path}`);
    }
  }
});

test('the closure over shared names is linear: a chain of 20,000 statements, each naming the one before', () => {
  // Followed a round of whole-text searches per link, this took about 25 s; the index of names after
  // a few rounds makes it one pass.
  let text = 'const v0 = 1;\n';
  for (let i = 1; i < 20_000; i++) text += `const v${i} = v${i - 1};\n`;
  text += "spawn('x', [], { detached: v19999 });\nconst unrelated = 1;\n";
  const started = Date.now();
  const relevant = relevantText(text, 'chain.js', 0);
  const seconds = (Date.now() - started) / 1000;
  assert.ok(relevant !== undefined && relevant.includes('const v0 = 1;') && relevant.includes('detached: v19999') && !relevant.includes('unrelated'));
  assert.ok(seconds < 10, `${seconds} s`); // well under a second on a loaded 2-core machine
});
