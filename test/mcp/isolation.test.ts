// The MCP SDK is an optional peer dependency: only src/mcp may import it, so that `leash` (the
// core) loads where the SDK is not installed.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { FIXTURES, REPO_ROOT } from '../helpers/processes.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('no module outside src/mcp imports @modelcontextprotocol/sdk', () => {
  const src = join(REPO_ROOT, 'src');
  const files = sourceFiles(src);
  assert.ok(files.some((file) => file.endsWith(join('mcp', 'owned-stdio-transport.ts'))), 'src/mcp was scanned');
  const importsSdk = /(?:from\s+|import\s*\(\s*|require\(\s*)['"]@modelcontextprotocol\//;
  const offenders = files
    .filter((file) => !relative(src, file).startsWith(`mcp/`))
    .filter((file) => importsSdk.test(readFileSync(file, 'utf8')));
  assert.deepEqual(offenders, []);
});

/** Imports `entry` in a fresh node where resolving the SDK fails; returns node's result. */
function importWithoutSdk(entry: string) {
  const hooks = pathToFileURL(join(FIXTURES, 'mcp', 'deny-sdk-hooks.mjs')).href;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks)});`;
  return spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(entry).href)}); process.stdout.write('loaded');`],
    { encoding: 'utf8', timeout: 15_000 },
  );
}

test('the core loads where the SDK cannot be resolved; leash/mcp does not', () => {
  const core = importWithoutSdk(join(REPO_ROOT, 'dist', 'src', 'index.js'));
  assert.equal(core.stdout, 'loaded', core.stderr);
  // The control: the same hook does stop leash/mcp, so the first check means something.
  const mcp = importWithoutSdk(join(REPO_ROOT, 'dist', 'src', 'mcp', 'index.js'));
  assert.notEqual(mcp.status, 0);
  assert.match(mcp.stderr, /Cannot find package '@modelcontextprotocol\/sdk/);
});
