// The supervisor's stderr messages: rate-limited, with a count of what was held back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Notices } from '../../src/supervisor/notices.js';
import type { StderrWriter } from '../../src/sys/safe-output.js';

function recorder(): StderrWriter & { lines: string[] } {
  const lines: string[] = [];
  return { lines, broken: false, pending: false, write: (text: string) => (lines.push(text), true) };
}

test('at most 5 messages a second; the next allowed one says how many were held back', () => {
  let now = 10_000;
  const out = recorder();
  const notices = new Notices(out, () => now);
  for (let i = 0; i < 20; i += 1) notices.say(`message ${i}`);
  assert.equal(out.lines.length, 5);
  now += 1000;
  notices.say('later');
  assert.equal(out.lines.length, 6);
  assert.match(out.lines[5]!, /^leash supervise: \(15 similar messages not shown\) later\n$/);
});

test('flush reports what is still held back, once', () => {
  const out = recorder();
  const notices = new Notices(out, () => 0);
  for (let i = 0; i < 7; i += 1) notices.say('x');
  notices.flush();
  notices.flush();
  assert.equal(out.lines.length, 6);
  assert.equal(out.lines[5], 'leash supervise: (2 similar messages not shown)\n');
});
