// The Python interpreter the benches run references with: the real one behind `python3` on PATH.
// A pyenv shim is a shell script that starts pyenv before Python (about 0.45 CPU-s and 0.7 s here):
// timed or measured through it, a reference would carry the shim's cost, not its own.
import { spawnSync } from 'node:child_process';

let found: string | null | undefined;

/** The absolute path of the interpreter `python3` runs, or undefined where there is none. */
export function realPython(): string | undefined {
  if (found === undefined) {
    const probe = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
    found = probe.status === 0 && probe.stdout.trim().startsWith('/') ? probe.stdout.trim() : null;
  }
  return found ?? undefined;
}
