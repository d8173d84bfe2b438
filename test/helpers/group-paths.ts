// The two paths of group handles (issue 28): the leader's pidfd with PIDFD_SIGNAL_PROCESS_GROUP
// (Linux >= 6.9, native calls loaded), and the witness fallback, forced with LEASH_GROUP_HANDLES=off.
// Every handle test runs on both.
import { readdirSync, readlinkSync } from 'node:fs';

export interface GroupPath {
  name: string;
  /** Added to the environment of what the test starts. */
  env: NodeJS.ProcessEnv;
  handles: boolean;
}

export const GROUP_PATHS: readonly GroupPath[] = [
  { name: 'handles', env: {}, handles: true },
  { name: 'fallback: LEASH_GROUP_HANDLES=off', env: { LEASH_GROUP_HANDLES: 'off' }, handles: false },
];

/** How many pidfds a process holds (a group handle is one). */
export function pidfdCount(pid: number): number {
  let count = 0;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return 0;
  }
  for (const fd of fds) {
    try {
      if (/^(anon_inode:\[pidfd\]|pidfd:)/.test(readlinkSync(`/proc/${pid}/fd/${fd}`))) count += 1;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}
