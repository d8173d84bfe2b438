// Unpredictable tokens and names without loading node:crypto: its OpenSSL start-up costs a
// long-lived helper such as `leash run` about 0.45 MB of private memory for 20 random bytes.
// The kernel's generator is read directly; where there is no /dev/urandom, node:crypto is used.
import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';

function fromKernel(bytes: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync('/dev/urandom', 'r');
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(bytes);
    let filled = 0;
    while (filled < bytes) {
      const read = readSync(fd, buffer, filled, bytes - filled, null);
      if (read <= 0) return undefined;
      filled += read;
    }
    return buffer;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** `bytes` random bytes from the kernel's generator, as lowercase hex. */
export function randomHex(bytes: number): string {
  const buffer =
    fromKernel(bytes) ??
    (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).randomBytes(bytes);
  return buffer.toString('hex');
}
