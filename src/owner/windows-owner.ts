// The owner library on Windows: Job Objects instead of process groups and a supervisor. The kernel
// ends every process of a kill-on-close job when the last handle to it closes, and only this
// process holds the handles, so its death, however it comes, ends what it owns. No extra process.
//
// Two kinds of job:
// - The owner job. At the first spawnOwned this process puts ITSELF into a kill-on-close job.
//   Every process it starts from then on is in that job from its creation (Node cannot spawn
//   suspended, so this is the only way to leave no window in which a child can start a grandchild
//   outside any job). The price: every later child of this process, owned or not, detached or
//   not, dies with it; a process never leaves a job.
// - One job per owned child, nested in the owner job, so that terminateOwned can end one child's
//   tree and tell when it is empty. What a child started in the instant between spawn and its
//   assignment is in the owner job only: it dies with the owner, but terminateOwned misses it.
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import {
  activeProcessCount,
  assignToJob,
  closeHandle,
  createKillOnCloseJob,
  currentProcess,
  isProcessInJob,
  openProcess,
  setKillOnClose,
  terminateJob,
  type Handle,
} from '../sys/windows-jobs.js';
import { waitUntil } from '../sys/wait.js';
import type { Launch, OwnerBackend, TerminateResult } from './owner-backend.js';
import { RoundRobin } from './round-robin.js';

interface OwnedChild {
  job: Handle;
  process: Handle;
}

/** pid -> its job and a process handle (held, so the pid cannot be recycled under us). */
const owned = new Map<number, OwnedChild>();
let ownerJob: Handle | undefined;
let ownerJobFailed = false;

function warn(message: string, code: string): void {
  process.emitWarning(message, { code });
}

/** Puts this process into its kill-on-close owner job, once. False (warned) where it cannot. */
function joinOwnerJob(): boolean {
  if (ownerJob) return true;
  if (ownerJobFailed) return false;
  try {
    const job = createKillOnCloseJob();
    try {
      assignToJob(job, currentProcess());
    } catch (error) {
      closeHandle(job);
      throw error;
    }
    ownerJob = job;
    return true;
  } catch (error) {
    ownerJobFailed = true;
    warn(
      `leash: cannot put this process in a job (${(error as Error).message}); owned children get their own jobs only, ` +
        'so a grandchild started before its parent is assigned may outlive this process',
      'LEASH_WINDOWS_JOB',
    );
    return false;
  }
}

function isEmpty(child: OwnedChild): boolean {
  try {
    return activeProcessCount(child.job) === 0;
  } catch {
    return false;
  }
}

function forget(pid: number): void {
  const child = owned.get(pid);
  if (!child) return;
  owned.delete(pid);
  // Closing a kill-on-close job ends what is left in it: only ever called on an empty job or on
  // one whose kill-on-close was cleared.
  closeHandle(child.job);
  closeHandle(child.process);
}

/** Forgets every owned child whose job is empty: one query per child (for a full listing). */
function pruneEmpty(): void {
  for (const [pid, child] of [...owned]) if (isEmpty(child)) forget(pid);
}

/** Owned children looked at per spawn: more than the one a spawn adds, so gone ones cannot pile up. */
const PRUNE_PER_SPAWN = 2;
const pruneRing = new RoundRobin(owned);

/** Forgets the next few owned children (round-robin) whose jobs are empty: O(1) per spawn. */
function pruneSome(): void {
  for (const pid of pruneRing.take(PRUNE_PER_SPAWN)) {
    const child = owned.get(pid);
    if (child && isEmpty(child)) forget(pid);
  }
}

/** Puts the live process `pid` into a new kill-on-close job of its own; a string says why not. */
function adopt(pid: number): OwnedChild | string {
  let processHandle: Handle | undefined;
  let job: Handle | undefined;
  try {
    processHandle = openProcess(pid);
    if (!processHandle) return `no process ${pid} that this process may open`;
    job = createKillOnCloseJob();
    assignToJob(job, processHandle);
  } catch (error) {
    // Job Objects out of reach (koffi not loadable) or refused: never a throw after the spawn.
    if (job) closeHandle(job);
    if (processHandle) closeHandle(processHandle);
    return (error as Error).message;
  }
  const child = { job, process: processHandle };
  owned.set(pid, child);
  return child;
}

/** spawnOwned (or forkOwned) on Windows: the spawn is Node's own (options as given, windowsHide and all). */
export function createOwnedWindows(launch: Launch, options: SpawnOptions): ChildProcess {
  joinOwnerJob();
  pruneSome();
  // Options as given: on Windows the child is in the owner job from its creation, detached or not.
  const child = launch(options);
  const pid = child.pid;
  if (pid === undefined) return child;
  const adopted = adopt(pid);
  if (typeof adopted === 'string') {
    // Gone already (its job would have been empty): the owner job holds whatever it started.
    // Without an owner job either, the child is not guarded, and the caller must hear it.
    if (!ownerJob && child.exitCode === null) warn(`spawnOwned: process ${pid} is not guarded: ${adopted}`, 'LEASH_WINDOWS_JOB');
    return child;
  }
  child.once('exit', () => {
    if (owned.get(pid) === adopted && isEmpty(adopted)) forget(pid);
  });
  return child;
}

/** ownProcessGroup on Windows: the argument is a pid; the process gets a job of its own. */
export function ownProcessWindows(pid: number): boolean {
  if (pid <= 0 || pid === process.pid) {
    warn(`ownProcessGroup: refusing pid ${pid} (this process, or not a process id)`, 'LEASH_UNSAFE_GROUP');
    return false;
  }
  if (owned.has(pid)) return true;
  const adopted = adopt(pid);
  if (typeof adopted === 'string') {
    warn(`ownProcessGroup: cannot own process ${pid}: ${adopted}`, 'LEASH_NO_GROUP');
    return false;
  }
  return true;
}

/**
 * releaseProcessGroup on Windows: the process's own job stops killing on close and is let go.
 * A process started after this process joined its owner job cannot leave that job: it stays
 * owned, and the call says so.
 */
export function releaseProcessWindows(pid: number): boolean {
  const child = owned.get(pid);
  if (!child) return false;
  try {
    if (ownerJob && isProcessInJob(child.process, ownerJob)) {
      warn(
        `releaseProcessGroup: process ${pid} was started inside this process's job and cannot leave it on Windows; it stays owned`,
        'LEASH_UNSUPPORTED_PLATFORM',
      );
      return false;
    }
    setKillOnClose(child.job, false);
  } catch (error) {
    warn(`releaseProcessGroup: cannot release process ${pid}: ${(error as Error).message}`, 'LEASH_UNSUPPORTED_PLATFORM');
    return false;
  }
  forget(pid);
  return true;
}

/** Whether nothing of an owned child's tree runs any more (true for a pid not owned). */
export function ownedTreeIsEmptyWindows(pid: number): boolean {
  const child = owned.get(pid);
  return child === undefined || isEmpty(child);
}

/** The pids of owned children whose jobs still hold a process. */
export function ownedWindowsPids(): number[] {
  pruneEmpty();
  return [...owned.keys()];
}

/**
 * terminateOwned on Windows: TerminateJobObject on the child's job; resolves once it is empty.
 * Never rejects. There is no polite step to give: Windows' only one for console programs is a
 * control event to a console process group, and a Node-spawned child has none of its own (a
 * detached child has no console; another shares the owner's group, so the owner would get it
 * too). A caller that wants a graceful exit asks first (ends stdin, as leash/mcp does) and waits.
 */
export async function terminateOwnedWindows(pid: number | undefined): Promise<TerminateResult> {
  const child = pid === undefined ? undefined : owned.get(pid);
  if (pid === undefined || !child) {
    let empty = true;
    if (pid !== undefined) {
      try {
        process.kill(pid, 0);
        empty = false;
      } catch {
        empty = true;
      }
    }
    return { pgid: pid, owned: false, escalated: false, empty };
  }
  let escalated = false;
  try {
    if (!isEmpty(child)) {
      terminateJob(child.job, 1);
      escalated = true;
    }
    await waitUntil(() => isEmpty(child), 5000);
  } catch {
    // Never into the caller; the state below tells what happened.
  }
  const empty = isEmpty(child);
  if (empty) forget(pid);
  return { pgid: pid, owned: true, escalated, empty };
}

export const windowsOwner: OwnerBackend = {
  create: createOwnedWindows,
  own: ownProcessWindows,
  release: releaseProcessWindows,
  owned: ownedWindowsPids,
  // There is no polite step to give (see terminateOwnedWindows): the grace does not apply.
  terminate: (pid) => terminateOwnedWindows(pid),
  // A child's job holds what it starts (breakaway aside): TerminateJobObject ends it all.
  escapees: async () => [],
  isEmpty: ownedTreeIsEmptyWindows,
  // One query of the job: cheap, nothing to slice.
  isEmptySoon: async (pid) => ownedTreeIsEmptyWindows(pid),
  waitEmpty: (pid, budgetMs) => waitUntil(() => ownedTreeIsEmptyWindows(pid), budgetMs),
  // No supervisor: the kernel ends a kill-on-close job when this process's handles close.
  supervisorPid: () => undefined,
};
