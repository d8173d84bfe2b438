// readProcText: procfs files read through one reused buffer must read exactly what readFileSync
// reads, including files larger than the buffer, and fail the same way for a missing file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { readProcText } from '../../src/sys/proc-text.js';

test('readProcText reads small and large procfs files whole, and throws for a missing one', () => {
  // /proc/self/smaps of a Node process is tens of KB: several times the initial buffer.
  const smaps = readProcText('/proc/self/smaps');
  assert.ok(smaps.length > 16 * 1024, `smaps is ${smaps.length} bytes`);
  assert.ok(smaps.endsWith('\n'), 'read to the end');
  // Every mapping has its block (the mappings themselves may change between two reads).
  assert.equal(smaps.match(/^Size:/gm)?.length, smaps.match(/^VmFlags:/gm)?.length);
  assert.ok((smaps.match(/^Size:/gm)?.length ?? 0) > 20);
  assert.equal(readProcText('/proc/self/cmdline'), readFileSync('/proc/self/cmdline', 'latin1'));
  const stat = readProcText('/proc/self/stat');
  assert.match(stat, new RegExp(`^${process.pid} \\(`));
  // A smaller file after a larger one: no stale bytes from the earlier read.
  assert.equal(readProcText('/proc/self/stat').length, stat.length);
  assert.throws(() => readProcText('/proc/self/no-such-file'), { code: 'ENOENT' });
});
