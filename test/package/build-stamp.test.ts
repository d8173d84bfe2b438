// `npm run build` skips itself when its inputs are byte for byte those of the last complete build
// (scripts/build-stamp.mjs). Correct first: any change to an input must build again, so that
// `npm test` after an edit tests the edit.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { REPO_ROOT } from '../helpers/processes.js';

interface Stamp {
  buildInputsDigest(root: string): string;
}
const stampModule = join(REPO_ROOT, 'scripts', 'build-stamp.mjs');
const { buildInputsDigest } = (await import(stampModule)) as Stamp;

const tree = mkdtempSync(join(tmpdir(), 'leash-build-stamp-'));
after(() => rmSync(tree, { recursive: true, force: true }));

test('the digest changes with every changed, added, removed or renamed input, and only then', () => {
  mkdirSync(join(tree, 'src', 'sys'), { recursive: true });
  mkdirSync(join(tree, 'test'), { recursive: true });
  writeFileSync(join(tree, 'src', 'sys', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(tree, 'test', 'a.test.ts'), 'import "../src/sys/a.js";\n');
  writeFileSync(join(tree, 'tsconfig.json'), '{}\n');
  const first = buildInputsDigest(tree);
  assert.match(first, /^[0-9a-f]{64}$/);

  // Touched, not changed: the same build.
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(tree, 'src', 'sys', 'a.ts'), later, later);
  assert.equal(buildInputsDigest(tree), first, 'a touch alone rebuilt');
  // Outputs and installed packages are not inputs.
  mkdirSync(join(tree, 'dist'), { recursive: true });
  writeFileSync(join(tree, 'dist', 'x.js'), 'x');
  mkdirSync(join(tree, 'src', 'node_modules'), { recursive: true });
  writeFileSync(join(tree, 'src', 'node_modules', 'y.js'), 'y');
  assert.equal(buildInputsDigest(tree), first, 'dist/ or node_modules counted as input');

  // Every step below makes a tree not seen before: each digest must be new.
  const seen = new Set([first]);
  const changed = (what: string) => {
    const digest = buildInputsDigest(tree);
    assert.ok(!seen.has(digest), `${what} kept the digest: the build would be skipped`);
    seen.add(digest);
  };
  writeFileSync(join(tree, 'src', 'sys', 'a.ts'), 'export const a = 2;\n'); // same length, one byte
  changed('an edited source');
  writeFileSync(join(tree, 'src', 'sys', 'b.ts'), '');
  changed('an added empty file');
  renameSync(join(tree, 'src', 'sys', 'b.ts'), join(tree, 'src', 'sys', 'c.ts'));
  changed('a renamed file');
  rmSync(join(tree, 'test', 'a.test.ts'));
  changed('a removed file');
  writeFileSync(join(tree, 'package-lock.json'), '{}\n');
  changed('a new lock file');
  writeFileSync(join(tree, 'tsconfig.json'), '{ }\n');
  changed('an edited tsconfig.json');
  mkdirSync(join(tree, 'packages', 'check', 'src'), { recursive: true });
  writeFileSync(join(tree, 'packages', 'check', 'src', 'rule.ts'), 'export {};\n');
  changed("a file of the check's package");
});

test('npm run build right after a build says it is up to date and leaves dist/ alone', (t) => {
  const stampFile = join(REPO_ROOT, 'dist', '.build-inputs');
  let stamp = '';
  try {
    stamp = readFileSync(stampFile, 'utf8').trim();
  } catch {
    t.skip('dist/ has no build stamp (built by something other than scripts/build.mjs)');
    return;
  }
  // A build here would delete dist/ under the running tests: only the up-to-date case is run.
  if (stamp !== buildInputsDigest(REPO_ROOT)) {
    t.skip('sources changed since the last build: run npm run build first');
    return;
  }
  const before = statSync(join(REPO_ROOT, 'dist', 'src', 'index.js')).mtimeMs;
  const result = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts', 'build.mjs')], { encoding: 'utf8', cwd: tree, timeout: 60_000 });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stderr, /build: up to date/);
  assert.equal(statSync(join(REPO_ROOT, 'dist', 'src', 'index.js')).mtimeMs, before, 'dist/ was rebuilt');
});
