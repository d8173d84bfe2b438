// The round-robin cursor behind the owner's per-registration pruning (POSIX and Windows): a few
// keys per call, every key reached in its turn, deletions and additions during the walk allowed,
// and a cost per call that does not grow with the set (Windows pruned the whole set at every
// spawn: n spawns cost n² job queries).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RoundRobin } from '../../src/owner/round-robin.js';

test('take(k) gives k keys, wrapping, each once per call', () => {
  const map = new Map([[1, 'a'], [2, 'b'], [3, 'c']]);
  const ring = new RoundRobin(map);
  assert.deepEqual(ring.take(2), [1, 2]);
  assert.deepEqual(ring.take(2), [3, 1]);
  assert.deepEqual(ring.take(5), [2, 3, 1], 'never more keys than the map has');
  assert.deepEqual(new RoundRobin(new Map()).take(3), []);
});

test('pruning two per registration: linear cost, and gone entries never pile up', () => {
  const map = new Map<number, { gone: boolean }>();
  const ring = new RoundRobin(map);
  let checks = 0;
  let mostHeld = 0;
  for (let id = 0; id < 10_000; id += 1) {
    for (const key of ring.take(2)) {
      checks += 1;
      if (map.get(key)!.gone) map.delete(key);
    }
    // Every entry ends at once but the last 50 added: they stay live.
    map.set(id, { gone: false });
    for (const [key, entry] of map) if (key < id - 50) entry.gone = true;
    mostHeld = Math.max(mostHeld, map.size);
  }
  assert.ok(checks <= 2 * 10_000, `${checks} checks for 10,000 registrations`);
  assert.ok(mostHeld <= 2 * 51 + 2, `gone entries piled up: ${mostHeld} held with 51 live`);
});

test('keys deleted or added during the walk', () => {
  const map = new Map([[1, 0], [2, 0], [3, 0], [4, 0]]);
  const ring = new RoundRobin(map);
  assert.deepEqual(ring.take(1), [1]);
  map.delete(2);
  map.set(5, 0);
  assert.deepEqual(ring.take(3), [3, 4, 5]);
  assert.deepEqual(ring.take(2), [1, 3]);
});
