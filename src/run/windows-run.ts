// `leash run` on Windows: the command's whole tree runs in a kill-on-close Job Object.
// - leash joins a kill-on-close job of its own before it spawns, so every process of the tree is
//   in a job from its creation, and if leash dies, however it dies, the kernel ends the tree.
// - The command gets a nested job of its own: its processes can be counted and ended without
//   ending leash. Processes started in the instant before that assignment are only in leash's job;
//   they are found by the job's process list and ended too.
// - When the command exits, whatever it left behind is ended; leash exits with its exit code.
// - --die-with-parent waits on a handle to the parent process (opened at start-up, so a recycled
//   pid can never be mistaken for it) and ends the tree when the parent ends.
// Windows has no polite stop leash can send: a console control event goes to a whole console
// process group, and the command shares leash's (so it already got any Ctrl+C typed there). So
// after Ctrl+C or Ctrl+Break the tree has the grace to leave, then TerminateJobObject ends it;
// a closing console, a dead parent or leftovers get TerminateJobObject at once.
import { ChildProcess } from 'node:child_process';
import { spawn } from '../sys/child-process.js';
import { singleRunnerState, StatePublisher, type Phase } from './state.js';
import { classifySpawnError } from './supervisor.js';
import { waitUntil } from '../sys/wait.js';
import {
  activeProcessCount,
  assignToJob,
  closeHandle,
  createKillOnCloseJob,
  currentProcess,
  jobProcessIds,
  openProcess,
  openProcessForWaiting,
  terminateJob,
  waitForProcessEnd,
  type Handle,
} from '../sys/windows-jobs.js';

export interface WindowsRunOptions {
  command: string;
  args: string[];
  graceMs: number;
  statePath?: string;
  dieWithParent: boolean;
  log: (line: string) => void;
}

/** The exit code TerminateJobObject gives the processes it ends. */
const TERMINATED_EXIT_CODE = 1;
const POLL_MS = 100;
/** Console events the command got too (the grace applies), and the console closing (it does not). */
const POLITE_SIGNALS = ['SIGINT', 'SIGBREAK'] as const;
const STOP_SIGNALS = [...POLITE_SIGNALS, 'SIGHUP'] as const;

export async function runOnWindows(options: WindowsRunOptions): Promise<number> {
  // The parent first, before anything can let it go unnoticed.
  let parent: Handle | undefined;
  if (options.dieWithParent) {
    parent = openProcessForWaiting(process.ppid);
    if (!parent) {
      options.log('parent already gone before the command started; not starting it');
      return 1;
    }
  }
  const ownJob = createKillOnCloseJob();
  assignToJob(ownJob, currentProcess());

  // Not detached: the command shares leash's console (Ctrl+C reaches it) and its stdio.
  const child: ChildProcess | { code: number; message: string } = await new Promise((resolve) => {
    const started = spawn(options.command, options.args, { stdio: 'inherit' });
    started.once('spawn', () => resolve(started));
    started.once('error', (error: NodeJS.ErrnoException) => resolve(classifySpawnError(options.command, error)));
  });
  if (!(child instanceof ChildProcess)) {
    options.log(child.message);
    return child.code;
  }
  const runnerPid = child.pid ?? 0;
  const job = createKillOnCloseJob();
  const runner = openProcess(runnerPid);
  try {
    if (runner) assignToJob(job, runner);
  } finally {
    if (runner) closeHandle(runner);
  }

  let phase: Phase = 'running';
  let exitCode: number | null = null;
  let requested: string | undefined;
  let escalated = false;
  const active = () => {
    try {
      return activeProcessCount(job) + strays().length;
    } catch {
      return 0;
    }
  };
  /** Processes in leash's own job but not in the command's: started before the assignment. */
  const strays = () => {
    const inner = new Set(jobProcessIds(job));
    return jobProcessIds(ownJob).filter((pid) => pid !== process.pid && !inner.has(pid));
  };
  let members = 1;
  const state = new StatePublisher(options.statePath, () => singleRunnerState({
    members, escalated, phase, exitCode, terminationSignal: null,
  }), (message) => options.log(`warning: ${message}`));
  const enter = (next: Phase) => {
    phase = next;
    options.log(`phase=${next} active=${members} escalated=${escalated}` +
      (exitCode === null ? '' : ` runner_exit_code=${exitCode}`) + (requested ? ` reason=${requested}` : ''));
    state.publish(true);
  };
  enter('running');

  const endEverything = () => {
    try {
      terminateJob(job, TERMINATED_EXIT_CODE);
      for (const pid of strays()) {
        try {
          process.kill(pid); // TerminateProcess on Windows
        } catch {
          // Gone already.
        }
      }
    } catch (error) {
      options.log(`warning: cannot end the tree: ${(error as Error).message}`);
    }
  };
  let stopping: Promise<void> | undefined;
  const stop = (reason: string, polite: boolean) => {
    if (stopping) return stopping;
    requested ??= reason;
    stopping = (async () => {
      enter('stopping');
      if (polite) await waitUntil(() => active() === 0, options.graceMs);
      if (active() > 0) {
        escalated = true;
        enter('killing');
        endEverything();
      }
    })();
    return stopping;
  };
  const handlers = STOP_SIGNALS.map((signal) => {
    const handler = () => void stop(signal, (POLITE_SIGNALS as readonly string[]).includes(signal));
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  const abortParentWait = new AbortController();
  if (parent) {
    const parentHandle = parent;
    void waitForProcessEnd(parentHandle, abortParentWait.signal).then((ended) => {
      if (ended) void stop('parent died', false);
    }, (error: Error) => options.log(`warning: cannot wait on the parent: ${error.message}`));
  }
  const exited = new Promise<void>((resolve) => child.once('exit', (code) => {
    exitCode = code ?? TERMINATED_EXIT_CODE;
    resolve();
  }));

  // Job emptiness has no event a Node process can wait on without a completion port: poll the
  // job's counter (one cheap kernel call, no pid scanning).
  const poller = setInterval(() => {
    members = active();
    state.publish();
  }, POLL_MS);
  await exited;
  members = active();
  if (members > 0) {
    options.log(`the command exited leaving ${members} process(es); ending them`);
    await stop('leftovers', false);
  }
  await waitUntil(() => active() === 0, 5000);
  clearInterval(poller);
  abortParentWait.abort();
  for (const [signal, handler] of handlers) process.removeListener(signal, handler);
  members = active();
  enter('exited');
  state.close();
  closeHandle(job);
  if (parent) closeHandle(parent);
  return exitCode ?? 1;
}
