// Starting the command `leash run` wraps (the runner), with the shell's exit codes for failures.
import { ChildProcess } from 'node:child_process';
import { spawn } from '../sys/child-process.js';
import { holdExitStatus } from '../sys/exit-status.js';
import { signalNumber } from '../sys/verified-signal.js';

/** The kernel's record of each runner's end, held from its spawn (sys/exit-status.ts). */
const kernelEnds = new WeakMap<ChildProcess, () => number | undefined>();

/** The outcome of starting the runner: its child handle, or the exit code for why it failed. */
export type StartFailure = { code: 126 | 127; message: string };

/** Maps a spawn error to the shell's conventions: 127 not found, 126 found but not runnable. */
export function classifySpawnError(command: string, error: NodeJS.ErrnoException): StartFailure {
  if (error.code === 'ENOENT') return { code: 127, message: `${command}: command not found` };
  return { code: 126, message: `${command}: cannot execute (${error.code ?? error.message})` };
}

/** Starts the runner in its own session (or, keeping the terminal, in leash's); resolves once it runs, or with why it cannot. */
export function startRunner(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  keepTerminal = false,
): Promise<ChildProcess | StartFailure> {
  return new Promise((resolve) => {
    // detached-spawn: ok — the runner gets its own session under leash's subreaper, which owns the whole tree.
    const child = spawn(command, args, { stdio: 'inherit', detached: !keepTerminal, env });
    // Now, before the event loop runs again: libuv cannot have reaped it yet.
    if (child.pid !== undefined) kernelEnds.set(child, holdExitStatus(child.pid));
    child.once('spawn', () => resolve(child));
    child.once('error', (error: NodeJS.ErrnoException) => resolve(classifySpawnError(command, error)));
  });
}

/**
 * The runner's end in the shell's terms, from its exit event: the kernel's record where it keeps
 * one, else Node's word, which reads a death by a real-time signal as exit code 0.
 */
export function runnerEnd(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): number {
  const kernel = kernelEnds.get(child)?.();
  kernelEnds.delete(child);
  return kernel ?? code ?? 128 + (signal ? signalNumber(signal) : 0);
}
