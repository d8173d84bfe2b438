import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LineFramer, MAX_LINE_BYTES, formatControlLine, parseControlLine } from '../../src/supervisor/protocol.js';

function frame(chunks: Array<string | Buffer>): { lines: string[]; framer: LineFramer } {
  const lines: string[] = [];
  const framer = new LineFramer((line) => lines.push(line));
  for (const chunk of chunks) framer.push(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
  return { lines, framer };
}

test('parses exactly the known commands', () => {
  assert.deepEqual(parseControlLine('register 1234'), { verb: 'register', pgid: 1234 });
  assert.deepEqual(parseControlLine('register 1234 98765'), { verb: 'register', pgid: 1234, startTime: 98765 });
  assert.deepEqual(parseControlLine('unregister 77'), { verb: 'unregister', pgid: 77 });
  assert.deepEqual(parseControlLine('release'), { verb: 'release' });
  assert.deepEqual(parseControlLine('  register\t42  '), { verb: 'register', pgid: 42 });
});

test('rejects garbage, signs, hex, extra words and huge numbers', () => {
  for (const line of [
    '', 'register', 'register -5', 'register +5', 'register 0x10', 'register 1e3', 'register 12 34 56',
    'unregister', 'unregister 5 6', 'release now', 'REGISTER 5', 'kill 5', 'register 99999999999999999',
    'register 12.5', 'register 5 -1', '\u0000register 5',
  ]) {
    assert.equal(parseControlLine(line), undefined, JSON.stringify(line));
  }
});

test('format and parse agree', () => {
  for (const command of [
    { verb: 'register', pgid: 10 } as const,
    { verb: 'register', pgid: 10, startTime: 555 } as const,
    { verb: 'unregister', pgid: 10 } as const,
    { verb: 'release' } as const,
    { verb: 'recall', pgid: 10, startTime: 555 } as const,
    { verb: 'witness', pgid: 10, pid: 11, startTime: 556 } as const,
    { verb: 'handle', pgid: 10, fd: 3 } as const,
  ]) {
    const text = formatControlLine(command);
    assert.ok(text.endsWith('\n'));
    assert.deepEqual(parseControlLine(text.slice(0, -1)), command);
  }
});

test('frames lines split across chunks', () => {
  const { lines } = frame(['regi', 'ster 5\nunre', 'gister 5\n', '\n']);
  assert.deepEqual(lines, ['register 5', 'unregister 5', '']);
});

test('drops an over-long line whole, including the tail after the cap', () => {
  const long = 'x'.repeat(MAX_LINE_BYTES + 10) + ' register 99\nregister 7\n';
  const { lines, framer } = frame([long]);
  assert.deepEqual(lines, ['register 7']);
  assert.equal(framer.overlongLines, 1);
});

test('drops an over-long line that arrives in many small chunks', () => {
  const chunks = Array.from({ length: 100 }, () => 'yyyyyyyy');
  const { lines } = frame([...chunks, 'register 99\n', 'register 8\n']);
  assert.deepEqual(lines, ['register 8']);
});

test('a line of exactly the cap is kept; one byte more is dropped', () => {
  const fits = 'a'.repeat(MAX_LINE_BYTES - 1);
  const over = 'b'.repeat(MAX_LINE_BYTES);
  const { lines } = frame([fits + '\n' + over + '\nok\n']);
  assert.deepEqual(lines, [fits, 'ok']);
});

test('an unterminated tail is never delivered', () => {
  const { lines } = frame(['register 5\nregister 6']);
  assert.deepEqual(lines, ['register 5']);
});

test('memory stays bounded under a stream with no newline', () => {
  const zeros = Buffer.alloc(1 << 20);
  const { lines, framer } = frame(Array.from({ length: 64 }, () => zeros));
  assert.deepEqual(lines, []);
  framer.push(Buffer.from('\nregister 9\n'));
  assert.deepEqual(lines, ['register 9']);
});

test('the identity lines (recall, witness, handle): exact words, a handle only in a slot above stderr', () => {
  assert.deepEqual(parseControlLine('recall 1234 98765'), { verb: 'recall', pgid: 1234, startTime: 98765 });
  assert.deepEqual(parseControlLine('witness 1234 1240 98770'), { verb: 'witness', pgid: 1234, pid: 1240, startTime: 98770 });
  assert.deepEqual(parseControlLine('handle 1234 3'), { verb: 'handle', pgid: 1234, fd: 3 });
  for (const line of [
    'recall 1234', 'recall 1234 5 6', 'recall -1 5', 'witness 1234 1240', 'witness 1234 1240 5 6', 'witness 1234 x 5',
    'handle 1234', 'handle 1234 0', 'handle 1234 2', 'handle 1234 65536', 'handle 1234 3 4', 'handle 0x10 3',
  ]) {
    assert.equal(parseControlLine(line), undefined, JSON.stringify(line));
  }
});
