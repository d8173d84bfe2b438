// forkOwned: child_process.fork, with the child owned as spawnOwned owns it. Node's fork hands its
// options on to spawn, so fork itself does the work (execArgv, the IPC channel, serialization);
// only which argument holds the options is read here, to add what the platform needs to them.
import type { ChildProcess, ForkOptions } from 'node:child_process';
import { fork } from '../sys/child-process.js';
import { createOwned } from './owned-groups.js';
import { invalidArgType, isOptionsObject, withOwnEnvironment } from './spawn-arguments.js';

/**
 * `child_process.fork`, except that the child (a Node.js process with its IPC channel, as fork
 * gives it) dies with this process, however it dies, and leads its own process group.
 */
export function forkOwned(modulePath: string | URL, options?: ForkOptions): ChildProcess;
export function forkOwned(modulePath: string | URL, args?: readonly string[] | null, options?: ForkOptions): ChildProcess;
export function forkOwned(modulePath: string | URL, argsIn?: unknown, optionsIn?: unknown): ChildProcess {
  let args = argsIn;
  let options = optionsIn;
  if (args === undefined || args === null) args = [];
  else if (typeof args === 'object' && !Array.isArray(args)) {
    options = args;
    args = [];
  } else if (!Array.isArray(args)) {
    throw invalidArgType('args', 'an instance of Array', args);
  }
  if (options !== undefined && options !== null && !isOptionsObject(options)) throw invalidArgType('options', 'of type object', options);
  const given = withOwnEnvironment({ ...(options as ForkOptions | undefined) });
  return createOwned((final) => fork(modulePath, args as string[], final as ForkOptions), given);
}
