// leash run's guard token and state-file names come from the kernel's generator (src/sys/random.ts),
// without node:crypto: they must still be unpredictable-looking hex of the asked length, never repeated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomHex } from '../../src/sys/random.js';

test('randomHex: the asked number of bytes as lowercase hex, a new value every call', () => {
  const values = Array.from({ length: 200 }, () => randomHex(12));
  for (const value of values) assert.match(value, /^[0-9a-f]{24}$/);
  assert.equal(new Set(values).size, values.length);
  assert.match(randomHex(8), /^[0-9a-f]{16}$/);
  // Not stuck on a constant: across 200 values every hex digit shows up in every position class.
  assert.equal(new Set(values.join('')).size, 16);
});
