// Whether this process can see every process on the machine in /proc: what any claim "no
// process holds X" rests on. Linux only.
import { readFileSync } from 'node:fs';
import { pidNamespaceIsNested } from './procfs.js';

/**
 * The options /proc is mounted with (`hidepid=invisible,gid=10`, ...), from /proc/self/mountinfo:
 * the per-mount and the superblock options together. undefined when it cannot be read.
 */
function procMountOptions(): string[] | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'latin1');
  } catch {
    return undefined;
  }
  // Mounts stack: the last one on /proc is the one in effect.
  let options: string[] | undefined;
  for (const line of text.split('\n')) {
    // id parent major:minor root mount-point options [optional...] - type source super-options
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 0 || fields[4] !== '/proc' || fields[dash + 1] !== 'proc') continue;
    options = [...fields[5]!.split(','), ...(fields[dash + 3] ?? '').split(',')];
  }
  return options;
}

/**
 * Why some processes may be missing from this process's view of /proc, or undefined when it
 * sees them all: a nested pid namespace (a container: the outer processes are not listed), or
 * /proc mounted with hidepid=invisible (2) or ptraceable (4) for a caller that is not root and
 * not in the mount's exempt group. A view that cannot be established counts as partial.
 */
export function partialProcessView(): string | undefined {
  const nested = pidNamespaceIsNested();
  if (nested === undefined) return 'its pid namespace cannot be read';
  if (nested) return 'a nested pid namespace (processes outside it are not listed)';
  const uid = process.getuid?.();
  if (uid === 0) return undefined;
  const options = procMountOptions();
  if (!options) return '/proc mount options cannot be read';
  const hidepid = options.find((option) => option.startsWith('hidepid='))?.slice('hidepid='.length);
  if (hidepid !== '2' && hidepid !== 'invisible' && hidepid !== '4' && hidepid !== 'ptraceable') return undefined;
  const exempt = options.find((option) => option.startsWith('gid='))?.slice('gid='.length);
  if (exempt !== undefined && (process.getgroups?.() ?? []).includes(Number(exempt))) return undefined;
  return `/proc is mounted with hidepid=${hidepid} (other users' processes are not listed)`;
}
