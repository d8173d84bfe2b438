// Job control as the kernel sees it. Standard library only.
import { readProcStat } from './procfs.js';

/**
 * Whether this process's group is orphaned (POSIX): no member has a parent in another group of
 * the same session, so no shell can continue it once stopped. The kernel drops SIGTSTP, SIGTTIN
 * and SIGTTOU left at their default for such a group; a process that stops itself by SIGSTOP
 * there would stay stopped until someone continues it by hand, and the kernel's SIGHUP and
 * SIGCONT to a group that *becomes* orphaned would never come. Linux: the members that matter
 * are this process and its ancestors in the same group (the link, if any, is the parent of the
 * topmost of them); an unreadable parent (outside our pid namespace, gone) counts as no link.
 */
export function ownGroupIsOrphaned(): boolean {
  const self = readProcStat('self');
  if (!self) return true;
  let member = self;
  for (let hops = 0; hops < 64; hops += 1) {
    const parent = member.ppid > 0 ? readProcStat(member.ppid) : undefined;
    if (!parent) return true;
    if (parent.pgid !== self.pgid) return parent.sid !== self.sid;
    member = parent;
  }
  return true;
}
