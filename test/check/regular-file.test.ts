// The one reader of source files (checked files and followed project modules): bounded, and never
// blocking on what is not a regular file.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type * as Reader from '../../packages/check/src/check/regular-file.js';
import { REPO_ROOT } from '../helpers/processes.js';

// An internal module of proc-leash-check, not part of its exports: loaded from its build by path.
const { readRegularFile, parseSize, formatSize } = (await import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/regular-file.js')).href)) as typeof Reader;

test('readRegularFile reads a regular file up to its bound, and refuses anything else', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'leash-check-reader-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'a.py');
  writeFileSync(file, 'import os\n');
  const bounded = { followSymlink: false, maxBytes: 1 << 20 };
  assert.deepEqual(readRegularFile(file, bounded), { text: 'import os\n' });
  assert.deepEqual(readRegularFile(file, { followSymlink: false, maxBytes: 10 }), { text: 'import os\n' }, 'exactly the bound');
  assert.deepEqual(readRegularFile(file, { followSymlink: false, maxBytes: 9 }), { problem: 'too-large', size: 10 });
  const sparse = join(dir, 'sparse.py');
  writeFileSync(sparse, '');
  truncateSync(sparse, 2 ** 32); // 4 GiB, never read
  assert.deepEqual(readRegularFile(sparse, bounded), { problem: 'too-large', size: 2 ** 32 });
  // A file whose size says nothing (procfs says 0) is still stopped at the bound while reading.
  assert.equal((readRegularFile('/proc/self/status', { followSymlink: true, maxBytes: 100 }) as { problem?: string }).problem, 'too-large');
  assert.match((readRegularFile('/proc/self/status', { followSymlink: true, maxBytes: 1 << 20 }) as { text: string }).text, /^Name:/);
  const fifo = join(dir, 'pipe.py');
  execFileSync('mkfifo', [fifo]);
  assert.deepEqual(readRegularFile(fifo, bounded), { problem: 'not-regular' }, 'a FIFO is not waited on');
  assert.deepEqual(readRegularFile(dir, bounded), { problem: 'not-regular' });
  const link = join(dir, 'link.py');
  symlinkSync(file, link);
  assert.deepEqual(readRegularFile(link, bounded), { problem: 'unopenable', code: 'ELOOP' });
  assert.deepEqual(readRegularFile(link, { ...bounded, followSymlink: true }), { text: 'import os\n' });
  assert.deepEqual(readRegularFile(join(dir, 'missing.py'), bounded), { problem: 'unopenable', code: 'ENOENT' });
});

test('sizes are read and written as people write them', () => {
  assert.equal(parseSize('16M'), 16 << 20);
  assert.equal(parseSize('512k'), 512 << 10);
  assert.equal(parseSize('2G'), 2 ** 31);
  assert.equal(parseSize('1GiB'), 2 ** 30);
  assert.equal(parseSize('1000'), 1000);
  for (const bad of ['', 'M', '1.5M', '-1', '12x', '1T']) assert.equal(parseSize(bad), undefined, bad);
  assert.equal(formatSize(16 << 20), '16 MiB');
  assert.equal(formatSize(2 ** 31), '2 GiB');
  assert.equal(formatSize(1536), '1.5 KiB');
  assert.equal(formatSize(900), '900 bytes');
});
