// ESLint plugin: `leash/no-detached-spawn` reports the JS/TS findings of `leash check` inside the
// editor and in existing lint runs.
//
// The rule does not walk ESLint's tree: it hands the file's text to the same analyser `leash check`
// uses, so both always agree, and it works under any parser ESLint is configured with (espree,
// typescript-eslint, ...). ESLint itself is only a peer dependency of this entry point.
import './preload.js'; // first: typescript from the code cache, before js-rules.ts requires it
import { applyMarkers, mayMatter } from '../check/checker.js';
import { about } from '../check/about.js';
import { analyseJs } from '../check/js-rules.js';
import { describeFailure } from '../check/config.js';
import { forgetProjectLayout } from '../check/module-resolution.js';
import { textOnlyParser } from './text-parser.js';

/** The `leash check` rules that concern JS/TS code as such; parse errors and unused markers are ESLint's own business. */
const REPORTED_RULES = new Set(['js-detached-spawn', 'js-detached-literal', 'js-unref-child', 'js-pty', 'shell-background']);

// Structural types, so that this module compiles and loads without eslint installed.
interface RuleContext {
  filename: string;
  cwd?: string;
  sourceCode: { text: string };
  report(descriptor: { loc: { line: number; column: number }; messageId: string; data: Record<string, string> }): void;
}

export const noDetachedSpawn = {
  meta: {
    type: 'problem' as const,
    docs: {
      description: 'Disallow spawning child processes that outlive their owner (detached, unref, backgrounding shell text)',
      // Read at load time from package.json; the fix is said there once, not in every message.
      url: about().docsUrl,
    },
    schema: [],
    messages: {
      finding: '{{message}} [{{rule}}]',
      failure: 'leash could not check this file, so a detached spawn in it could go unseen: {{reason}}',
    },
  },
  create(context: RuleContext) {
    return {
      'Program:exit'(): void {
        const text = context.sourceCode.text;
        const filename = context.filename && !context.filename.startsWith('<') ? context.filename : 'input.tsx';
        // The editor's process lives on while files and configs change: each file sees the project as it is now.
        forgetProjectLayout();
        if (!mayMatter(text, 'js', { path: filename, root: context.cwd ?? process.cwd() })) return;
        let raw;
        try {
          raw = analyseJs(text, filename, context.cwd);
        } catch (error) {
          // As `leash check` fails this file alone (exit 2 by name), the rule reports it on this
          // file, rather than throwing and ending the whole lint run with a stack trace.
          context.report({ loc: { line: 1, column: 0 }, messageId: 'failure', data: { reason: describeFailure(error) } });
          return;
        }
        for (const finding of applyMarkers(filename, text, raw)) {
          if (finding.suppressed || !REPORTED_RULES.has(finding.rule)) continue;
          context.report({
            loc: { line: finding.line, column: finding.column - 1 },
            messageId: 'finding',
            data: { message: finding.message, rule: finding.rule },
          });
        }
      },
    };
  },
};

const plugin = {
  meta: { name: about().name, version: about().version, namespace: 'leash' },
  rules: { 'no-detached-spawn': noDetachedSpawn },
  configs: {} as Record<string, unknown>,
};

/** Every JS and TS file: a flat config object without `files` reaches only `.js`, `.mjs` and `.cjs`. */
export const LINTED_FILES = ['**/*.{js,mjs,cjs,jsx,ts,mts,cts,tsx}'];
const TYPESCRIPT_FILES = ['**/*.{ts,mts,cts,tsx}'];

/**
 * Flat config: `import leash from 'proc-leash-check/eslint'; export default [leash.configs.recommended];`.
 * It sets no parser: TypeScript files are parsed by the project's typescript-eslint config, or,
 * without one, by `leash.configs.typescript` placed after it.
 */
plugin.configs.recommended = {
  name: 'leash/recommended',
  files: LINTED_FILES,
  plugins: { leash: plugin },
  rules: { 'leash/no-detached-spawn': 'error' },
};

/** For projects without typescript-eslint: TypeScript files read by a text-only parser, for this rule alone. */
plugin.configs.typescript = {
  name: 'leash/typescript',
  files: TYPESCRIPT_FILES,
  plugins: { leash: plugin },
  languageOptions: { parser: textOnlyParser },
  rules: { 'leash/no-detached-spawn': 'error' },
};

export default plugin;
