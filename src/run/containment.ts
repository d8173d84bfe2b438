// Which containment `leash run` uses: a cgroup v2 of its own where the hierarchy's owner allows
// it (src/sys/cgroup.ts says when), else the process tree it supervises as a child subreaper.
import { assessOwnCgroup, moveProcess, TreeCgroup } from '../sys/cgroup.js';

/**
 * LEASH_CONTAINMENT: `auto` (the default), `tree` (never a cgroup), or `cgroup` (this process's
 * cgroup was delegated to it, mark or not: a systemd user manager's Delegate=yes scope).
 */
export const CONTAINMENT_VARIABLE = 'LEASH_CONTAINMENT';

export type Containment = { cgroup: TreeCgroup } | { cgroup: undefined; reason: string };

/**
 * Whether choosing needs the native calls first: wherever a cgroup may be made, since it is
 * claimed (flocked and marked: sys/cgroup-ownership.ts) before anything runs in it, and under
 * systemd only a mark (an extended attribute, read through koffi) says the cgroup may get children.
 */
export function containmentNeedsNative(env: NodeJS.ProcessEnv): boolean {
  return (env[CONTAINMENT_VARIABLE] || 'auto') !== 'tree';
}

/**
 * Makes the run's cgroup where one is usable; otherwise says why not. The trial move below comes
 * after the caller primed the kernel's migrations (primeMigrations), so it costs 0.1-0.3 ms.
 */
export async function chooseContainment(env: NodeJS.ProcessEnv, warn: (message: string) => void): Promise<Containment> {
  const wanted = env[CONTAINMENT_VARIABLE] || 'auto';
  if (wanted === 'tree') return { cgroup: undefined, reason: `${CONTAINMENT_VARIABLE}=tree` };
  if (!['auto', 'cgroup'].includes(wanted)) warn(`${CONTAINMENT_VARIABLE}='${wanted}' is none of auto, tree, cgroup; using auto`);
  const assessment = assessOwnCgroup({ declaredDelegated: wanted === 'cgroup' });
  if (!assessment.usable) return { cgroup: undefined, reason: assessment.reason };
  const cgroup = TreeCgroup.create(assessment.place);
  if (typeof cgroup === 'string') return { cgroup: undefined, reason: cgroup };
  // Moving a process needs write access to the common ancestor's cgroup.procs too: try it on
  // leash itself now, not at the runner's start.
  try {
    await moveProcess(cgroup, 'in');
    await moveProcess(cgroup, 'out');
  } catch (error) {
    try {
      cgroup.leave();
    } catch {
      // never entered
    }
    cgroup.remove();
    return { cgroup: undefined, reason: `cannot move a process into ${cgroup.directory}: ${(error as NodeJS.ErrnoException).code ?? String(error)}` };
  }
  return { cgroup };
}
