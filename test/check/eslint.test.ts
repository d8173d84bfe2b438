// The JS/TS fixture suite through the ESLint rule: the same findings `leash check` must report.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { ESLint, Linter } from 'eslint';
import { about } from 'proc-leash-check';
import plugin from 'proc-leash-check/eslint';
import { REPO_ROOT } from '../helpers/processes.js';
import { copyFixtures, key, type Expectation } from './harness.js';

const ESLINT_RULES = new Set(['js-detached-spawn', 'js-detached-literal', 'js-unref-child', 'js-pty', 'shell-background']);

// ESLint's own parser reads only JavaScript. The rule reads the source text, not the tree, so for
// TypeScript a stand-in parser that yields an empty program is enough (projects use typescript-eslint).
const textOnlyParser = {
  meta: { name: 'text-only' },
  parseForESLint(code: string) {
    const lines = code.split('\n');
    return {
      ast: {
        type: 'Program',
        body: [],
        sourceType: 'module',
        range: [0, code.length],
        loc: { start: { line: 1, column: 0 }, end: { line: lines.length, column: (lines.at(-1) ?? '').length } },
        tokens: [],
        comments: [],
      },
      visitorKeys: { Program: [] },
    };
  },
};

for (const suite of ['js', 'js-chunks']) test(`the ESLint rule reports the same JS/TS fixture findings as leash check (${suite})`, () => {
  const fixtures = copyFixtures(suite);
  try {
    const linter = new Linter({ configType: 'flat', cwd: fixtures.dir });
    const got: Expectation[] = [];
    let linted = 0;
    for (const file of fixtures.files) {
      const text = readFileSync(join(fixtures.dir, file), 'utf8');
      if (fixtures.expected.some((e) => e.file === file && e.rule === 'parse-error')) continue; // ESLint rejects it itself
      // TypeScript and Flow (`@flow`): espree reads neither, a project lints them with a parser of its
      // own (typescript-eslint, hermes-eslint); the rule reads the file's text either way.
      const isTypeScript = /\.[cm]?tsx?$/.test(file) || /@flow\b/.test(text.slice(0, 200));
      const messages = linter.verify(
        text,
        [
          {
            files: ['**/*.{js,mjs,cjs,jsx,ts,mts,cts,tsx}'],
            plugins: { leash: plugin as never },
            rules: { 'leash/no-detached-spawn': 'error' },
            languageOptions: isTypeScript
              ? { parser: textOnlyParser as never }
              : { ecmaVersion: 'latest', sourceType: /\.c?js$/.test(file) ? 'commonjs' : 'module', parserOptions: { ecmaFeatures: { jsx: /\.jsx$/.test(file) } } },
          },
        ],
        join(fixtures.dir, file),
      );
      for (const message of messages) {
        assert.equal(message.fatal, undefined, `${file}: ${message.message}`);
        assert.equal(message.ruleId, 'leash/no-detached-spawn', `${file}:${message.line}: ${message.message}`);
        const rule = /\[([\w-]+)\]/.exec(message.message)?.[1] ?? '?';
        got.push({ file, line: message.line, rule });
      }
      linted++;
    }
    assert.ok(linted >= 8, 'the suite was linted');
    const expected = fixtures.expected.filter((e) => ESLINT_RULES.has(e.rule) && !fixtures.expected.some((p) => p.file === e.file && p.rule === 'parse-error'));
    assert.deepEqual(got.map(key).sort(), expected.map(key).sort());
  } finally {
    fixtures.remove();
  }
});

test('the ESLint plugin names itself and its version from its package.json (proc-leash-check), and says the fix in its docs, not in every message', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'packages/check/package.json'), 'utf8')) as { name: string; version: string };
  assert.equal(plugin.meta.name, pkg.name);
  assert.equal(plugin.meta.version, pkg.version);
  const rule = plugin.rules['no-detached-spawn'];
  assert.equal(rule.meta.docs.url, about().docsUrl);
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify("import { spawn } from 'node:child_process';\nspawn('a', [], { detached: true });\n", [plugin.configs.recommended as never], 'a.mjs');
  assert.equal(messages.length, 1);
  assert.doesNotMatch(messages[0]?.message ?? '', /spawnOwned/);
  assert.match(messages[0]?.message ?? '', /\[js-detached-spawn\]$/);
});

test('a file the analyser cannot judge is reported on that file, not a crash of the lint run', () => {
  const linter = new Linter({ configType: 'flat' });
  const deep = `import { spawn } from 'node:child_process';\nspawn('a', [], { detached: ${'('.repeat(3000)}true${')'.repeat(3000)} });\n`;
  // Under a parser that copes (espree itself runs out of stack here; so may typescript-eslint).
  const config = { files: ['**/*.ts'], plugins: { leash: plugin as never }, rules: { 'leash/no-detached-spawn': 'error' as const }, languageOptions: { parser: textOnlyParser as never } };
  const messages = linter.verify(deep, [config], 'deep.ts');
  assert.deepEqual(
    messages.map((m) => `${m.line} ${m.ruleId} ${m.message}`),
    ['1 leash/no-detached-spawn leash could not check this file, so a detached spawn in it could go unseen: the analyser ran out of stack on this file (nested too deeply)'],
  );
});

test('the recommended config reaches .ts, .tsx, .mts and .cts files in a real `eslint .` run, with typescript-eslint or with leash.configs.typescript', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'leash-eslint-ts-'));
  try {
    const detaching = "import { spawn } from 'node:child_process';\nspawn('server', [], { detached: true });\n";
    const typed = "import { spawn } from 'node:child_process';\nconst options: { detached: boolean } = { detached: true };\nspawn('server', [], options as never);\n";
    const files: Record<string, string> = { 'plain.mjs': detaching, 'plain.ts': detaching, 'typed.ts': typed, 'typed.mts': typed, 'typed.cts': typed, 'view.tsx': typed };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const lint = async (config: unknown[]) => {
      const eslint = new ESLint({ cwd: dir, overrideConfigFile: true, overrideConfig: config as never });
      const results = await eslint.lintFiles(['.']);
      return new Map(results.map((r) => [basename(r.filePath), r.messages.map((m) => `${m.line} ${m.fatal ? 'fatal' : /\[([\w-]+)\]/.exec(m.message)?.[1]}`)]));
    };
    // Alone: every extension is linted. ESLint's own parser reads the TypeScript file written in plain JS;
    // the ones with type annotations need a TypeScript parser, which it says, rather than skipping them.
    const alone = await lint([plugin.configs.recommended]);
    assert.deepEqual([...alone.keys()].sort(), Object.keys(files).sort(), 'every JS/TS extension is linted');
    assert.deepEqual(alone.get('plain.ts'), ['2 js-detached-spawn']);
    assert.deepEqual(alone.get('plain.mjs'), ['2 js-detached-spawn']);
    for (const name of ['typed.ts', 'typed.mts', 'typed.cts', 'view.tsx']) assert.equal(alone.get(name)?.[0]?.endsWith('fatal'), true, name);
    // With the text-only parser for TypeScript (projects without typescript-eslint), every file is judged.
    const withParser = await lint([plugin.configs.recommended, plugin.configs.typescript]);
    for (const name of Object.keys(files)) {
      assert.deepEqual(withParser.get(name), [name.startsWith('typed') || name === 'view.tsx' ? '3 js-detached-spawn' : '2 js-detached-spawn'], name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
