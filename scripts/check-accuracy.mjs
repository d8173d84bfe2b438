// Precision and recall of `leash check` (and of its ESLint rule, for JS/TS) on the shared fixture
// set, test/fixtures/check: every `expect: RULE` annotation is a true finding on that line, any
// other finding is a false alarm. Errors and warnings are counted apart (rows `errors`, `warnings`)
// as well as together (`all`), for the CLI and the ESLint rule alike.
//
//   node scripts/check-accuracy.mjs [--cli path/to/bin/leash.js]   (after `npm run build`)
//
// --cli measures another build (an older checkout, say) on today's fixtures; the ESLint rule is
// taken from the same build.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const cliFlag = process.argv.indexOf('--cli');
const CLI = cliFlag >= 0 ? process.argv[cliFlag + 1] : join(REPO, 'bin/leash.js');
const ESLINT_RULES = new Set(['js-detached-spawn', 'js-detached-literal', 'js-unref-child', 'shell-background']);
const WARNINGS = new Set(['js-detached-literal', 'unused-marker']);

function copySuite(suite) {
  const dir = mkdtempSync(join(tmpdir(), `leash-accuracy-${suite}-`));
  const files = [];
  const expected = [];
  for (const name of readdirSync(join(REPO, 'test/fixtures/check', suite)).sort()) {
    if (name.endsWith('.md')) continue;
    const file = name.replace(/\.fixture$/, '');
    cpSync(join(REPO, 'test/fixtures/check', suite, name), join(dir, file));
    files.push(file);
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .forEach((text, index) => {
        for (const match of text.matchAll(/expect: ([\w-]+)/g)) expected.push(`${file}:${index + 1} ${match[1]}`);
      });
  }
  return { dir, files, expected };
}

function runCli(dir, files) {
  let stdout;
  try {
    stdout = execFileSync(process.execPath, [CLI, 'check', '--all', '--format', 'json', ...files], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 26 });
  } catch (error) {
    if (error.status !== 1) throw new Error(`leash check exited ${error.status}: ${error.stderr}`);
    stdout = error.stdout;
  }
  return JSON.parse(stdout).findings.map((f) => `${f.path}:${f.line} ${f.rule}`);
}

async function runEslint(dir, files, expected) {
  const { Linter } = await import('eslint');
  // The rule beside the CLI: in proc-leash-check's package (packages/check), or in the core's dist/ before the split.
  const split = join(dirname(CLI), '../packages/check/dist/eslint/index.js');
  const rule = existsSync(split) ? split : join(dirname(CLI), '../dist/src/eslint/index.js');
  const plugin = (await import(pathToFileURL(rule).href)).default;
  // The rule reads the text, not the tree: for TypeScript an empty program stands in for a parser.
  const textOnly = {
    meta: { name: 'text-only' },
    parseForESLint: (code) => ({
      ast: { type: 'Program', body: [], sourceType: 'module', range: [0, code.length], loc: { start: { line: 1, column: 0 }, end: { line: code.split('\n').length, column: 0 } }, tokens: [], comments: [] },
      visitorKeys: { Program: [] },
    }),
  };
  const linter = new Linter({ configType: 'flat', cwd: dir });
  const got = [];
  const linted = [];
  for (const file of files) {
    if (expected.some((e) => e.startsWith(`${file}:`) && e.endsWith(' parse-error'))) continue; // ESLint rejects the file itself
    const ts = /\.[cm]?tsx?$/.test(file);
    const messages = linter.verify(
      readFileSync(join(dir, file), 'utf8'),
      [{ files: ['**/*.{js,mjs,cjs,jsx,ts,mts,cts,tsx}'], plugins: { leash: plugin }, rules: { 'leash/no-detached-spawn': 'error' }, languageOptions: ts ? { parser: textOnly } : { ecmaVersion: 'latest', sourceType: /\.c?js$/.test(file) ? 'commonjs' : 'module', parserOptions: { ecmaFeatures: { jsx: /\.jsx$/.test(file) } } } }],
      join(dir, file),
    );
    for (const m of messages) got.push(`${file}:${m.line} ${/\[([\w-]+)\]/.exec(m.message)?.[1] ?? m.message}`);
    linted.push(file);
  }
  return { got, expected: expected.filter((e) => ESLINT_RULES.has(e.split(' ')[1]) && linted.includes(e.split(':')[0])) };
}

function score(got, expected, keep = () => true) {
  const want = expected.filter(keep);
  const have = got.filter(keep);
  const left = [...want];
  let truePositives = 0;
  const falseAlarms = [];
  for (const finding of have) {
    const at = left.indexOf(finding);
    if (at >= 0) {
      left.splice(at, 1);
      truePositives++;
    } else falseAlarms.push(finding);
  }
  const precision = have.length === 0 ? 1 : truePositives / have.length;
  const recall = want.length === 0 ? 1 : truePositives / want.length;
  return { expected: want.length, reported: have.length, truePositives, precision: +precision.toFixed(3), recall: +recall.toFixed(3), falseAlarms, misses: left };
}

// By rule: the ESLint rule reports every finding at the level it is configured with, so a
// finding's rule says whether `leash check` makes it a warning.
const isWarning = (finding) => WARNINGS.has(finding.split(' ')[1]);
const isError = (finding) => !isWarning(finding);
const rows = [];
const details = {};
for (const suite of ['js', 'js-chunks', 'python']) {
  const { dir, files, expected } = copySuite(suite);
  try {
    const got = runCli(dir, files);
    rows.push({ suite, checker: 'leash check', scope: 'all', ...score(got, expected) });
    rows.push({ suite, checker: 'leash check', scope: 'errors', ...score(got, expected, isError) });
    rows.push({ suite, checker: 'leash check', scope: 'warnings', ...score(got, expected, isWarning) });
    if (suite !== 'python') {
      const eslint = await runEslint(dir, files, expected);
      rows.push({ suite, checker: 'ESLint rule', scope: 'all', ...score(eslint.got, eslint.expected) });
      rows.push({ suite, checker: 'ESLint rule', scope: 'errors', ...score(eslint.got, eslint.expected, isError) });
      rows.push({ suite, checker: 'ESLint rule', scope: 'warnings', ...score(eslint.got, eslint.expected, isWarning) });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const columns = ['suite', 'checker', 'scope', 'expected', 'reported', 'truePositives', 'precision', 'recall'];
const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
console.log(`leash check accuracy on test/fixtures/check (${CLI})`);
console.log(columns.map((c, i) => c.padEnd(widths[i])).join('  '));
for (const row of rows) console.log(columns.map((c, i) => String(row[c]).padEnd(widths[i])).join('  '));
for (const row of rows) {
  for (const f of row.falseAlarms) details[`${row.suite} ${row.checker} ${row.scope}: false alarm`] = [...(details[`${row.suite} ${row.checker} ${row.scope}: false alarm`] ?? []), f];
  for (const f of row.misses) details[`${row.suite} ${row.checker} ${row.scope}: missed`] = [...(details[`${row.suite} ${row.checker} ${row.scope}: missed`] ?? []), f];
}
for (const [title, list] of Object.entries(details)) console.log(`\n${title}:\n  ${list.join('\n  ')}`);
mkdirSync(join(REPO, 'bench/results'), { recursive: true });
writeFileSync(join(REPO, 'bench/results/check-accuracy.json'), `${JSON.stringify({ cli: CLI, results: rows }, null, 2)}\n`);
