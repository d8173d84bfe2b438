// Runs every compiled test file (dist/test/**/*.test.js) with Node's own test runner.
// Node 20's runner takes no glob, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

// test/windows runs under Wine with the Windows node (scripts/test-windows.sh), never here.
// test/containers is a lane of its own that installs and starts container runtimes
// (scripts/test-containers.sh): its files run only when a filter names that folder.
const WINDOWS = join('dist', 'test', 'windows');
const CONTAINERS = 'test/containers/';

function testFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) { if (path !== WINDOWS) found.push(...testFiles(path)); }
    else if (entry.name.endsWith('.test.js')) found.push(path);
  }
  return found.sort();
}

const filter = process.argv.slice(2);
const containersNamed = filter.some((f) => f.includes(CONTAINERS));
const files = testFiles('dist/test').filter((file) =>
  (filter.length === 0 || filter.some((f) => file.includes(f))) && (containersNamed || !file.includes(CONTAINERS)));
if (files.length === 0) {
  console.error('run-tests: no test files matched');
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
