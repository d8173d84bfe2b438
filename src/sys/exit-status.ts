// A child's end as the kernel recorded it. Node reports a death by a signal it has no name for
// (the real-time ones, SIGRTMIN..SIGRTMAX) as exit code 0 with no signal: a wrapper that passed
// that on would turn a killed command into a success. A pidfd taken while the child is not yet
// reaped keeps its wait status readable after libuv reaps it (PIDFD_GET_INFO, Linux 6.15+).
import { closeFd, nativeLoaded, openPidfd, pidfdExitStatus } from './native.js';

/**
 * Holds a pidfd of `pid`, a child spawned just now (libuv cannot have reaped it before the event
 * loop runs again). The returned function, called once the child's exit event came, gives its end
 * in the shell's terms (the exit code, or 128 + the signal), or undefined where the kernel keeps
 * no record (before 6.15, no native calls); it closes the pidfd.
 */
export function holdExitStatus(pid: number): () => number | undefined {
  let fd: number | undefined;
  try {
    fd = nativeLoaded() ? openPidfd(pid) : undefined;
  } catch {
    fd = undefined;
  }
  return () => {
    if (fd === undefined) return undefined;
    let status: number | undefined;
    try {
      status = pidfdExitStatus(fd);
    } catch {
      status = undefined;
    }
    closeFd(fd);
    fd = undefined;
    if (status === undefined) return undefined;
    const signal = status & 0x7f;
    // 0: exited (its code in bits 8-15); 0x7f would be a stop, which no exit status is.
    return signal === 0 ? (status >> 8) & 0xff : signal === 0x7f ? undefined : 128 + signal;
  };
}
