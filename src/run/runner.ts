// Starting the command `leash run` wraps (the runner), with the shell's exit codes for failures.
import { ChildProcess } from 'node:child_process';
import { spawn } from '../sys/child-process.js';

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
    child.once('spawn', () => resolve(child));
    child.once('error', (error: NodeJS.ErrnoException) => resolve(classifySpawnError(command, error)));
  });
}
