// What a replacement death supervisor is told about a group it must guard by identity, shared by
// the owner library's replay and leash run's guard: `recall` (records nobody: whoever is in the
// group now may be a stranger who took an emptied group's number), then the group's pidfd as an
// inherited descriptor (`handle`) and its witnesses (docs/protocol.md).
import type { ControlCommand } from '../supervisor/protocol.js';
import { MAX_WITNESSES, type GroupHandle, type Witness } from '../sys/group-handle.js';

/** Handles handed to one replacement supervisor at most (the rest go with their witnesses only). */
export const MAX_INHERITED_HANDLES = 1024;

/** `inherit` of SupervisorLink's replay, handing over at most MAX_INHERITED_HANDLES descriptors. */
export function inheritAtMost(inherit: (fd: number) => number): (fd: number) => number | undefined {
  let slots = 0;
  return (fd) => (slots < MAX_INHERITED_HANDLES ? ((slots += 1), inherit(fd)) : undefined);
}

/**
 * The lines that tell a supervisor what holds group `pgid`, beyond its registration: its pidfd (as
 * an inherited slot, where `inherit` is given and takes it) and its witnesses, with `members`
 * (seen in the group while it was proven) after the handle's own, up to MAX_WITNESSES.
 */
export function identityLines(
  pgid: number,
  handle: GroupHandle | undefined,
  members: readonly Witness[] = [],
  inherit?: (fd: number) => number | undefined,
): ControlCommand[] {
  const lines: ControlCommand[] = [];
  const fd = handle?.hasHandle() ? handle.descriptor : undefined;
  const slot = fd === undefined ? undefined : inherit?.(fd);
  if (slot !== undefined) lines.push({ verb: 'handle', pgid, fd: slot });
  const seen = new Set<number>();
  for (const witness of [...(handle?.witnesses ?? []), ...members]) {
    if (seen.size >= MAX_WITNESSES || seen.has(witness.pid)) continue;
    seen.add(witness.pid);
    lines.push({ verb: 'witness', pgid, pid: witness.pid, startTime: witness.startTime });
  }
  return lines;
}

/** The replay of one group: `recall` with its leader's start time, then identityLines. */
export function recallLines(
  pgid: number,
  leaderStartTime: number,
  handle: GroupHandle | undefined,
  members: readonly Witness[] = [],
  inherit?: (fd: number) => number | undefined,
): ControlCommand[] {
  return [{ verb: 'recall', pgid, startTime: leaderStartTime }, ...identityLines(pgid, handle, members, inherit)];
}
