// Data output through writeData is never truncated by a slow reader, even on a description someone
// made non-blocking (process.stdout does that to a pipe), and never ends the process on a closed one.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MODULE = fileURLToPath(new URL('../../src/sys/safe-output.js', import.meta.url));
const SIZE = 1024 * 1024;

function writer(): string {
  // process.stdout on a pipe sets O_NONBLOCK on the shared description: writeData must wait out EAGAIN.
  return `const { writeData } = await import(${JSON.stringify(MODULE)}); process.stdout;
    const whole = writeData('x'.repeat(${SIZE})); process.stderr.write(String(whole));`;
}

test('writeData waits for a slow reader and delivers every byte', async () => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', writer()], { stdio: ['ignore', 'pipe', 'pipe'] });
  let received = 0;
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  // Nobody reads for a while: the pipe fills long before 1 MB.
  child.stdout.pause();
  await new Promise((resolve) => setTimeout(resolve, 500));
  child.stdout.on('data', (chunk: Buffer) => (received += chunk.length));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error('writer never finished')), 20_000);
    child.once('close', (status) => {
      clearTimeout(deadline);
      resolve(status);
    });
  });
  assert.equal(code, 0, stderr);
  assert.equal(received, SIZE);
  assert.equal(stderr, 'true');
});
