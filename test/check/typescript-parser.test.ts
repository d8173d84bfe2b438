// The check parses JS/TS with TypeScript's parser as the build cut it from typescript.js
// (scripts/build-typescript-parser.mjs). Differential: every JS/TS file of this repository (the
// check's fixtures included) and a set of broken and unusual sources are parsed by the cut parser
// and by the whole typescript package, and the trees must be the same node for node (kind, span,
// flags, names and literal texts, the service's getText and getStart) with the same diagnostics.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import type * as TypeScript from 'typescript';
import { REPO_ROOT } from '../helpers/processes.js';

const require = createRequire(import.meta.url);
const CUT = join(REPO_ROOT, 'packages/check/dist/vendor/typescript-parser.cjs');
const cut = require(CUT) as typeof TypeScript;
const whole = require('typescript') as typeof TypeScript;

const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
function sources(folder: string, found: string[] = []): string[] {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name === '.git' || entry.name === 'src' && folder.endsWith('corpus')) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) sources(path, found);
    else if (entry.isFile() && SOURCE.test(entry.name.replace(/\.fixture$/, '')) && !entry.name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

function scriptKind(ts: typeof TypeScript, path: string): TypeScript.ScriptKind {
  if (/\.[cm]?ts$/.test(path)) return ts.ScriptKind.TS;
  if (path.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (path.endsWith('.jsx')) return ts.ScriptKind.JSX;
  return ts.ScriptKind.JS;
}

/** The tree as the check sees it, flattened. */
function shape(ts: typeof TypeScript, path: string, text: string): string {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, scriptKind(ts, path));
  const out: unknown[] = [];
  const walk = (node: TypeScript.Node): void => {
    out.push(node.kind, node.pos, node.end, node.flags, node.getStart(sf), node.parent?.kind);
    if (ts.isIdentifier(node) || ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isNumericLiteral(node)) out.push(node.text);
    ts.forEachChild(node, walk);
  };
  walk(sf);
  const diagnostics = (sf as unknown as { parseDiagnostics: TypeScript.DiagnosticWithLocation[] }).parseDiagnostics;
  for (const d of diagnostics) out.push(d.start, d.length, d.code, ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  const last = sf.statements.at(-1);
  if (last) out.push(last.getText(sf).length, sf.getLineAndCharacterOfPosition(last.end).line);
  return JSON.stringify(out);
}

test('the cut parser is a cut: a fraction of typescript.js, without the checker', () => {
  const cutText = readFileSync(CUT, 'latin1');
  const wholeSize = statSync(require.resolve('typescript')).size;
  assert.ok(cutText.length < wholeSize / 3, `${cutText.length} bytes against typescript.js's ${wholeSize}`);
  assert.ok(!cutText.includes('createTypeChecker'), 'the type checker was kept');
  assert.equal(cut.version, undefined, 'only the names the check uses are exported');
  assert.equal(typeof cut.createSourceFile, 'function');
});

test('the cut parser and typescript give the same trees and diagnostics on every JS/TS file of this repository', () => {
  const files = sources(REPO_ROOT);
  assert.ok(files.length > 300, `only ${files.length} files found`);
  assert.ok(files.filter((file) => file.includes(join('test', 'fixtures', 'check'))).length > 20, 'the check\'s fixtures were not read');
  const differ: string[] = [];
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    const file = path.replace(/\.fixture$/, '');
    if (shape(cut, file, text) !== shape(whole, file, text)) differ.push(path);
  }
  assert.deepEqual(differ, []);
});

test('the cut parser and typescript agree on broken and unusual sources', () => {
  const cases: Array<[string, string]> = [
    ['broken.js', 'spawn("a", [], { detached: true \n function (\n'],
    ['unterminated.ts', 'const s = `abc ${x\nlet y = /re[/;\n'],
    ['jsx.jsx', 'const a = <div onClick={() => spawn("x", [], { detached })}>{"&"} text</div>;\n'],
    ['tsx.tsx', 'export const C = <T,>(p: T) => <span>{String(p)}</span>;\nenum E { A = 1 << 2 }\n'],
    ['types.mts', 'import type { A } from "./a.js";\nexport = x;\ndeclare module "m" { export function f(): void }\nabstract class K<T extends keyof U = never> { #p?: T; static { } }\n'],
    ['jsdoc.js', '/** @type {import("child_process").SpawnOptions} */\nconst o = { detached: true };\n/** @param {string} a @returns {void} */ function f(a) {}\n'],
    ['unicode.js', 'const ü = "\\u{1F600}"; const 𝑥 = 1; /* ﬀ */ spawn(ü, { detached: 𝑥 });\n'],
    ['regex.js', 'const r = a / b / c; const s = x => /=>/.test(x) ? 1 : 2;\nlabel: for (;;) { break label }\n'],
    ['deep.js', `${'('.repeat(500)}1${')'.repeat(500)};\n`],
  ];
  for (const [name, text] of cases) assert.equal(shape(cut, name, text), shape(whole, name, text), name);
});
