// `npm run build`: compiles with tsc (strict) the check's package (packages/check, into its own
// dist/: the core's tests and benches import it by name) and the core into dist/, then bundles the
// supervisor into one CommonJS file and `leash run` into one ES module with esbuild. Each step
// says what it does and how long it took:
// tsc alone takes 15-40 s on a small shared machine, and a silent wait that long looks like a hang.
// A build whose inputs are byte for byte those of the last complete build is skipped
// (scripts/build-stamp.mjs; `--force` or LEASH_BUILD_FORCE=1 builds anyway): `npm ci` builds
// (prepare), and `npm test`, `npm run demo` and `npm pack` right after need not build again.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { buildInputsDigest } from './build-stamp.mjs';

const require = createRequire(import.meta.url);
const steps = [
  {
    // One tsc process builds both projects (tsconfig.json references packages/check); the check's
    // is skipped while up to date (its build info lives in packages/check/dist/).
    what: 'compiling proc-leash-check into packages/check/dist/, then the core, tests and benches into dist/ (tsc -b; 15-40 s)',
    command: process.execPath,
    args: [require.resolve('typescript/bin/tsc'), '-b', 'tsconfig.json'],
  },
  {
    what: 'bundling the supervisor into dist/src/supervisor/supervisor.cjs (esbuild)',
    // esbuild's bin is its native binary once its install script ran, a JS launcher otherwise: run it as is.
    command: require.resolve('esbuild/bin/esbuild'),
    args: [
      'dist/src/supervisor/entry.js',
      '--bundle',
      '--platform=node',
      '--format=cjs',
      // Loaded lazily once it is ready (group handles): resolved from the package's node_modules.
      '--external:koffi',
      '--log-level=warning',
      '--outfile=dist/src/supervisor/supervisor.cjs',
      '--define:import.meta.url=import_meta_url',
      "--banner:js=const import_meta_url = require('node:url').pathToFileURL(__filename).href;",
    ],
  },
  {
    // leash run stays alive as long as the server it wraps: one ES module instead of ~20 saves it
    // about 1.7 MB of private memory (the module loader's per-module cost). src/cli/main.ts loads
    // it for `leash run`, and the unbundled modules where it is missing.
    what: 'bundling leash run into dist/src/run/leash-run.mjs (esbuild)',
    command: require.resolve('esbuild/bin/esbuild'),
    args: [
      'dist/src/run/main.js',
      '--bundle',
      '--platform=node',
      '--format=esm',
      '--external:koffi',
      '--log-level=warning',
      '--outfile=dist/src/run/leash-run.mjs',
    ],
  },
  {
    // The check parses JS/TS with TypeScript's parser alone, cut from typescript.js (9 MB) to what
    // createSourceFile reaches (about 1.3 MB): 30-40 ms less CPU of every run that parses JS.
    what: 'cutting TypeScript\'s parser into packages/check/dist/vendor/ (esbuild)',
    command: process.execPath,
    args: ['scripts/build-typescript-parser.mjs'],
  },
  {
    // The check's command (its bin, the pre-commit hook) is a short process that a pre-commit run
    // starts for a handful of files: one module and two lazily loaded chunks (each analyser) load
    // 5-10 ms of CPU faster than ~20 modules. packages/check/bin/leash-check.js falls back to the
    // modules where it is missing; the library and `leash check` load the modules.
    what: 'bundling the check command into packages/check/dist/command/ (esbuild)',
    command: require.resolve('esbuild/bin/esbuild'),
    args: [
      'packages/check/dist/check/main.js',
      '--bundle',
      '--splitting',
      '--platform=node',
      '--format=esm',
      '--external:typescript',
      '--external:@vscode/tree-sitter-wasm',
      // node:fs through require, without its ES facade (packages/check/src/check/node-fs.ts).
      '--alias:node:fs=./packages/check/dist/check/node-fs.js',
      '--log-level=warning',
      '--outdir=packages/check/dist/command',
    ],
  },
];

const ROOT = fileURLToPath(new URL('..', import.meta.url));
process.chdir(ROOT);
const STAMP = 'dist/.build-inputs';
// What a complete build leaves: a stamp next to outputs someone deleted must not skip the build.
const OUTPUTS = ['dist/src/index.js', 'dist/src/supervisor/supervisor.cjs', 'dist/src/run/leash-run.mjs', 'packages/check/dist/index.js', 'packages/check/dist/command/main.js', 'packages/check/dist/vendor/typescript-parser.cjs'];
const force = process.argv.includes('--force') || process.env.LEASH_BUILD_FORCE === '1';
const digest = buildInputsDigest(ROOT);
let built;
try {
  built = readFileSync(STAMP, 'utf8').trim();
} catch {
  built = undefined;
}
if (!force && built === digest && OUTPUTS.every((file) => existsSync(file))) {
  process.stderr.write('build: up to date (no input changed since the last build; --force builds anyway)\n');
  process.exit(0);
}

// Output of files since moved or deleted would otherwise stay in dist/ and be packed.
rmSync('dist', { recursive: true, force: true });
rmSync('packages/check/dist/command', { recursive: true, force: true }); // its chunks' names change

for (const step of steps) {
  const started = Date.now();
  process.stderr.write(`build: ${step.what}...`);
  const result = spawnSync(step.command, step.args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) {
    process.stderr.write(`\nbuild: failed (exit ${result.status ?? result.signal})\n`);
    process.exit(result.status ?? 1);
  }
  process.stderr.write(` ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
// Written last: an interrupted or failed build leaves no stamp, so the next one starts afresh.
writeFileSync(STAMP, `${digest}\n`);
