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

/** Runs `script` (an ES module) in a fresh node where resolving the SDK fails; returns node's result. */
function runWithoutSdk(script: string) {
  const hooks = pathToFileURL(join(FIXTURES, 'mcp', 'deny-sdk-hooks.mjs')).href;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks)});`;
  return spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 15_000,
  });
}

const entryUrl = (...path: string[]) => JSON.stringify(pathToFileURL(join(REPO_ROOT, 'dist', 'src', ...path)).href);

test('the core loads where the SDK cannot be resolved; leash/mcp loads and says the SDK is missing', () => {
  const core = runWithoutSdk(`await import(${entryUrl('index.js')}); process.stdout.write('loaded');`);
  assert.equal(core.stdout, 'loaded', core.stderr);
  // The control: the same hook does keep the SDK from leash/mcp, whose start() says so.
  const mcp = runWithoutSdk(
    `const { OwnedStdioClientTransport } = await import(${entryUrl('mcp', 'index.js')});\n` +
      `await new OwnedStdioClientTransport({ command: 'true' }).start().then(() => process.stdout.write('started'), (error) => process.stdout.write(error.code));`,
  );
  assert.equal(mcp.stdout, 'LEASH_MCP_SDK_MISSING', mcp.stderr);
  assert.match(mcp.stderr, /optional peer dependency @modelcontextprotocol\/sdk.*npm install @modelcontextprotocol\/sdk/);
});
