// proc-leash/mcp where @modelcontextprotocol/sdk (its optional peer) is not installed, resolved by
// Node's own resolver: a scratch project whose node_modules holds a copy of the built package and
// nothing else. import and require both load; start() (so connect()) rejects with an error naming
// the peer and the command that installs it; a warning says it once at load. Before, the import
// itself died with a module-not-found trace pointing into leash's files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { REPO_ROOT } from '../helpers/processes.js';

const project = mkdtempSync(join(tmpdir(), 'leash-no-sdk-'));
after(() => rmSync(project, { recursive: true, force: true }));
const installed = join(project, 'node_modules', 'proc-leash');
mkdirSync(installed, { recursive: true });
writeFileSync(join(installed, 'package.json'), readFileSync(join(REPO_ROOT, 'package.json')));
cpSync(join(REPO_ROOT, 'dist', 'src'), join(installed, 'dist', 'src'), { recursive: true });

const START = `.start().then(() => console.log('started'), (error) => console.log(JSON.stringify({ code: error.code, message: error.message })))`;

function run(file: string, source: string) {
  writeFileSync(join(project, file), source);
  return spawnSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 20_000 });
}

function assertSaysSdkMissing(result: ReturnType<typeof run>): void {
  assert.equal(result.status, 0, `status ${result.status}\n${result.stderr}`);
  // It really ran without the SDK: nothing could have resolved it from here.
  const probe = spawnSync(process.execPath, ['-e', "require.resolve('@modelcontextprotocol/sdk/package.json')"], { cwd: project });
  assert.notEqual(probe.status, 0, 'the SDK resolves from the scratch project');
  const said = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { code: string; message: string };
  assert.equal(said.code, 'LEASH_MCP_SDK_MISSING');
  assert.match(said.message, /optional peer dependency @modelcontextprotocol\/sdk/);
  assert.match(said.message, /npm install @modelcontextprotocol\/sdk/);
  assert.match(result.stderr, /LEASH_MCP_SDK_MISSING/, 'a warning at load names the missing peer');
  assert.doesNotMatch(result.stderr, /Cannot find package/);
}

test('import of proc-leash/mcp without the SDK: loads, and start() names the optional peer', () => {
  const result = run('esm.mjs', `import { OwnedStdioClientTransport } from 'proc-leash/mcp';\nnew OwnedStdioClientTransport({ command: 'true' })${START};\n`);
  assertSaysSdkMissing(result);
});

test('require of proc-leash/mcp without the SDK: loads, and start() names the optional peer', () => {
  const result = run('cjs.cjs', `const { OwnedStdioClientTransport } = require('proc-leash/mcp');\nnew OwnedStdioClientTransport({ command: 'true' })${START};\n`);
  assertSaysSdkMissing(result);
});
