// Build step: TypeScript's parser alone, for `leash check` (packages/check/dist/vendor/).
//
// typescript.js is 9 MB: the compiler, the language service and tsserver. The check uses only
// createSourceFile, forEachChild, the node tests and the service's node objects (getText,
// getStart, an Identifier's text), yet every run that parses JS paid for reading, compiling and
// running all of it (about 30 ms of CPU even from a V8 code cache). This step keeps the compiler's
// and the language service's sections, drops the later layers textually (tsserver, the typings
// installer, the deprecation shims), lets esbuild remove whatever no export and no kept statement
// reaches, and writes a minified CommonJS file of about 1.9 MB. The code is TypeScript's own,
// unchanged but for three kinds of edit, each checked below so that a typescript release whose
// layout differs stops the build instead of giving a different parser:
// - the bundle's wrapper and export list go; the check's names are exported instead;
// - top-level calls and initialisers are marked side-effect free (`/* @__PURE__ */`), so that one
//   that nothing kept uses is dropped with what it alone reaches (registering code fixes and
//   refactors, the checker, the emitter). One is kept as it is: the service's
//   `setObjectAllocator(...)`, which gives nodes their methods;
// - the two statements that configure the compiler's host from the environment (NODE_ENV's
//   assertion level, the debug flag) go: a parse does not read them.
// The exports are every `ts.<name>` the check's sources use that is a value of typescript's API,
// and nothing else. test/check/typescript-parser.test.ts parses this repository's JS/TS (the
// check's fixtures among them) with both this file and typescript and asserts the trees are the same.
import { createRequire } from 'node:module';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const OUT_DIR = join(ROOT, 'packages/check/dist/vendor');
const SOURCES = join(ROOT, 'packages/check/src');

function fail(message) {
  throw new Error(`build-typescript-parser: ${message} (typescript's lib/typescript.js layout changed?)`);
}

function sourceFiles(folder, found = []) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) sourceFiles(path, found);
    else if (/\.[cm]?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** The names the check reads off `ts.` that typescript's API holds as values (types are erased). */
function exportedNames(typescript) {
  const names = new Set();
  for (const file of sourceFiles(SOURCES)) {
    for (const match of readFileSync(file, 'utf8').matchAll(/\bts\.([A-Za-z_$][\w$]*)/g)) {
      if (Object.prototype.hasOwnProperty.call(typescript, match[1])) names.add(match[1]);
    }
  }
  for (const name of names) if (!(name in typescript)) fail(`typescript has no ${name}`);
  return [...names].sort();
}

function parserModuleSource(text, names) {
  const lines = text.split('\n');
  const open = lines.findIndex((line) => line.startsWith('var ts = {}; ((module) => {'));
  const exportsOpen = lines.indexOf('__export(typescript_exports, {');
  const exportsClose = lines.indexOf('});', exportsOpen);
  const firstLaterLayer = lines.findIndex((line) => /^\/\/ src\/(server|typingsInstaller|deprecatedCompat)\//.test(line));
  if (open < 0 || exportsOpen < open || exportsClose < exportsOpen || firstLaterLayer < exportsClose) fail('markers not found');
  const later = lines.slice(firstLaterLayer).filter((line) => line.startsWith('// src/compiler/'));
  if (later.length > 0) fail(`a compiler section after the later layers: ${later[0]}`);
  let marked = 0;
  const body = [...lines.slice(open + 1, exportsOpen), ...lines.slice(exportsClose + 1, firstLaterLayer)]
    .filter((line) => line !== 'module.exports = __toCommonJS(typescript_exports);')
    .map((line) => {
      if (/^[A-Za-z_$][\w$]*\(/.test(line) && !line.startsWith('setObjectAllocator(')) {
        marked++;
        return `/* @__PURE__ */ ${line}`;
      }
      if (/^var [A-Za-z_$][\w$]* = (?!\/\*)[A-Za-z_$(][\w$.]*\(/.test(line)) {
        marked++;
        return line.replace(' = ', ' = /* @__PURE__ */ ');
      }
      return line;
    });
  if (marked < 20) fail(`only ${marked} top-level calls found`);
  let source = body.join('\n');
  for (const statement of [
    'if (sys && sys.getEnvironmentVariable) {\n  setCustomPollingValues(sys);\n  Debug.setAssertionLevel(\n    /^development$/i.test(sys.getEnvironmentVariable("NODE_ENV")) ? 1 /* Normal */ : 0 /* None */\n  );\n}\n',
    'if (sys && sys.debugMode) {\n  Debug.isDebugging = true;\n}\n',
  ]) {
    if (!source.includes(statement)) fail(`statement not found: ${statement.split('\n')[0]}`);
    source = source.replace(statement, '');
  }
  return `${source}\nexport { ${names.join(', ')} };\n`;
}

export async function buildTypeScriptParser() {
  const { build } = require('esbuild');
  const typescript = require('typescript');
  const path = require.resolve('typescript');
  const text = readFileSync(path, 'latin1'); // ASCII: see typescript-cache.ts
  const header = /^\/\*![\s\S]*?\*\//.exec(text);
  if (!header) fail('license header not found');
  const names = exportedNames(typescript);
  const result = await build({
    stdin: { contents: parserModuleSource(text, names), sourcefile: 'typescript.js', loader: 'js' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
  });
  const code = result.outputFiles[0].text;
  mkdirSync(OUT_DIR, { recursive: true });
  const notice = `${header[0]}\n// TypeScript ${typescript.version}'s parser, cut from its lib/typescript.js by proc-leash-check's\n// build (scripts/build-typescript-parser.mjs); LICENSE: typescript-LICENSE.txt beside this file.\n`;
  writeFileSync(join(OUT_DIR, 'typescript-parser.cjs'), notice + code);
  // Its types: typescript's own API (the check uses none of what was cut).
  writeFileSync(join(OUT_DIR, 'typescript-parser.d.cts'), "import ts = require('typescript');\nexport = ts;\n");
  copyFileSync(join(dirname(require.resolve('typescript/package.json')), 'LICENSE.txt'), join(OUT_DIR, 'typescript-LICENSE.txt'));
  return { bytes: Buffer.byteLength(notice + code), names: names.length };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { bytes, names } = await buildTypeScriptParser();
  if (process.argv.includes('--verbose')) process.stdout.write(`typescript-parser.cjs: ${(bytes / 1e6).toFixed(2)} MB, ${names} exports\n`);
}
