// execFileOwned and execOwned: child_process.execFile and exec, with the child owned as spawnOwned
// owns it. Node's execFile cannot be reused as such: it passes spawn a fixed set of options
// (never `detached`), so the child would stay in this process's group. The argument rules, the
// buffering, the error objects and util.promisify's form are Node's, written again here on top
// of Node's spawn; spawn itself still validates file, args, cwd, env, uid, gid, shell and signal.
import type { ChildProcess, ExecException, ExecFileOptions, ExecOptions, PromiseWithChild } from 'node:child_process';
import { spawn } from '../sys/child-process.js';
import { constants } from 'node:os';
import { getSystemErrorName, promisify } from 'node:util';
import { createOwned, terminateOwned } from './owned-groups.js';
import { invalidArgType, isOptionsObject, outOfRange, withOwnEnvironment } from './spawn-arguments.js';

/** Node's default maxBuffer for exec and execFile: 1 MiB per stream. */
const DEFAULT_MAX_BUFFER = 1024 * 1024;
/** What is left of the group once the timed-out child has exited: this long after SIGTERM, SIGKILL. */
const LEFTOVER_GRACE_MS = 1000;

type Output = string | Buffer;
export type ExecCallback = (error: ExecException | null, stdout: Output, stderr: Output) => void;
export type OwnedExecFileOptions = ExecFileOptions & { encoding?: BufferEncoding | 'buffer' | null };
export type OwnedExecOptions = ExecOptions & { encoding?: BufferEncoding | 'buffer' | null };

/** A signal as Node's sanitizeKillSignal takes it: a known name or number. */
function validKillSignal(signal: unknown): NodeJS.Signals | number {
  const known = constants.signals as Record<string, number>;
  if (typeof signal === 'string') {
    if (signal in known) return signal as NodeJS.Signals;
  } else if (typeof signal === 'number') {
    if (Object.values(known).includes(signal)) return signal;
  } else {
    throw invalidArgType('options.killSignal', 'one of type string or number', signal);
  }
  const error = new TypeError(`Unknown signal: ${String(signal)}`) as TypeError & { code: string };
  error.code = 'ERR_UNKNOWN_SIGNAL';
  throw error;
}

/** execFile's overloads: (file, args?, options?, callback?), any of the middle ones left out. */
function execFileArguments(
  argsIn: unknown,
  optionsIn: unknown,
  callbackIn: unknown,
): { args: unknown; options: OwnedExecFileOptions; callback: ExecCallback | undefined } {
  let args = argsIn;
  let options = optionsIn;
  let callback = callbackIn;
  if (Array.isArray(args)) args = [...(args as unknown[])];
  else if (args !== null && typeof args === 'object') {
    callback = options;
    options = args;
    args = undefined;
  } else if (typeof args === 'function') {
    callback = args;
    options = undefined;
    args = undefined;
  }
  // Anything else (a string, say) goes to spawn as it is, and spawn throws as it does for execFile.
  if (args === undefined || args === null) args = [];
  if (typeof options === 'function') callback = options;
  else if (options !== undefined && options !== null && !isOptionsObject(options)) throw invalidArgType('options', 'of type object', options);
  const given = (isOptionsObject(options) ? options : {}) as OwnedExecFileOptions;
  if (callback !== undefined && callback !== null && typeof callback !== 'function') throw invalidArgType('callback', 'of type function', callback);
  return { args, options: given, callback: (callback ?? undefined) as ExecCallback | undefined };
}

/**
 * `child_process.execFile`, except that the child dies with this process, however it dies (it
 * leads its own process group, as with spawnOwned). On timeout or maxBuffer it gets `killSignal`
 * as with Node; unlike Node, what it started is then ended too, once it has exited (SIGTERM, 1 s,
 * SIGKILL): Node leaves a timed-out command's children running.
 */
export function execFileOwned(file: string, callback?: ExecCallback): ChildProcess;
export function execFileOwned(file: string, args: readonly string[] | null | undefined, callback?: ExecCallback): ChildProcess;
export function execFileOwned(file: string, options: OwnedExecFileOptions | null | undefined, callback?: ExecCallback): ChildProcess;
export function execFileOwned(file: string, args: readonly string[] | null | undefined, options: OwnedExecFileOptions | null | undefined, callback?: ExecCallback): ChildProcess;
export function execFileOwned(file: string, argsIn?: unknown, optionsIn?: unknown, callbackIn?: unknown): ChildProcess {
  const { args, options: given, callback } = execFileArguments(argsIn, optionsIn, callbackIn);
  const options = { encoding: 'utf8', timeout: 0, maxBuffer: DEFAULT_MAX_BUFFER, killSignal: 'SIGTERM', ...given } as OwnedExecFileOptions;
  const timeout: unknown = options.timeout;
  if (timeout !== undefined && timeout !== null && !(Number.isInteger(timeout) && (timeout as number) >= 0)) throw outOfRange('timeout', 'an unsigned integer', timeout);
  const maxBuffer: unknown = options.maxBuffer;
  if (maxBuffer !== undefined && maxBuffer !== null && !(typeof maxBuffer === 'number' && maxBuffer >= 0)) throw outOfRange('options.maxBuffer', 'a positive number', maxBuffer);
  const killSignal = validKillSignal(options.killSignal);

  // The options execFile hands spawn, and no others (stdio stays three pipes).
  const child = createOwned(
    (final) => spawn(file, args as string[], final),
    withOwnEnvironment({
      cwd: options.cwd,
      env: options.env,
      gid: options.gid,
      shell: options.shell ?? false,
      signal: options.signal,
      uid: options.uid,
      windowsHide: !!options.windowsHide,
      windowsVerbatimArguments: !!options.windowsVerbatimArguments,
    }),
  );

  const encoding = options.encoding !== 'buffer' && typeof options.encoding === 'string' && Buffer.isEncoding(options.encoding) ? options.encoding : undefined;
  const chunks: { stdout: Output[]; stderr: Output[] } = { stdout: [], stderr: [] };
  const lengths = { stdout: 0, stderr: 0 };
  let failure: Error | null = null;
  let killedByUs = false;
  let finished = false;
  let timer: NodeJS.Timeout | undefined;

  const joined = (name: 'stdout' | 'stderr'): Output =>
    encoding || child[name]?.readableEncoding ? (chunks[name] as string[]).join('') : Buffer.concat(chunks[name] as Buffer[]);

  const finish = (code?: number | null, signal?: NodeJS.Signals | null): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    if (!callback) return;
    const stdout = joined('stdout');
    const stderr = joined('stderr');
    if (!failure && code === 0 && signal === null) {
      callback(null, stdout, stderr);
      return;
    }
    const cmd = (args as string[]).length > 0 ? `${file} ${(args as string[]).join(' ')}` : file;
    const error = (failure ??
      Object.assign(new Error(`Command failed: ${cmd}\n${String(stderr)}`), {
        code: typeof code === 'number' && code < 0 ? getSystemErrorName(code) : code,
        killed: child.killed || killedByUs,
        signal,
      })) as ExecException;
    error.cmd = cmd;
    callback(error, stdout, stderr);
  };

  const kill = (): void => {
    child.stdout?.destroy();
    child.stderr?.destroy();
    killedByUs = true;
    try {
      child.kill(killSignal);
    } catch (error) {
      failure = error as Error;
      finish();
    }
    // What the command started is not left behind: ended once the command itself has exited.
    if (child.pid !== undefined) {
      const pid = child.pid;
      const endRest = () => void terminateOwned(pid, { graceMs: LEFTOVER_GRACE_MS });
      if (child.exitCode !== null || child.signalCode !== null) endRest();
      else child.once('exit', endRest);
    }
  };

  if ((options.timeout as number) > 0) {
    timer = setTimeout(() => {
      timer = undefined;
      kill();
    }, options.timeout as number);
  }

  for (const name of ['stdout', 'stderr'] as const) {
    const stream = child[name];
    if (!stream) continue;
    if (encoding) stream.setEncoding(encoding);
    stream.on('data', (chunk: Output) => {
      if (options.maxBuffer === Infinity) {
        chunks[name].push(chunk);
        return;
      }
      const streamEncoding = stream.readableEncoding;
      const length = streamEncoding ? Buffer.byteLength(chunk as string, streamEncoding) : chunk.length;
      lengths[name] += length;
      if (lengths[name] > (options.maxBuffer as number)) {
        const room = (options.maxBuffer as number) - (lengths[name] - length);
        chunks[name].push(chunk.slice(0, room));
        const error = new RangeError(`${name} maxBuffer length exceeded`) as RangeError & { code: string };
        error.code = 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER';
        failure = error;
        kill();
      } else {
        chunks[name].push(chunk);
      }
    });
  }

  child.addListener('close', finish);
  child.addListener('error', (error: Error) => {
    failure = error;
    child.stdout?.destroy();
    child.stderr?.destroy();
    finish();
  });
  return child;
}

/**
 * `child_process.exec`: the command run by a shell, as execFileOwned runs it. With a shell in
 * front, ending what the command started matters most: the shell is not all there is.
 */
export function execOwned(command: string, callback?: ExecCallback): ChildProcess;
export function execOwned(command: string, options: OwnedExecOptions | null | undefined, callback?: ExecCallback): ChildProcess;
export function execOwned(command: string, optionsIn?: unknown, callbackIn?: unknown): ChildProcess {
  if (typeof command !== 'string') throw invalidArgType('command', 'of type string', command);
  let options = optionsIn;
  let callback = callbackIn;
  if (typeof options === 'function') {
    callback = options;
    options = undefined;
  }
  // A copy, as exec makes (a spread: anything that is not an object gives none of its own).
  const copy = { ...(options as object | undefined) } as OwnedExecOptions;
  copy.shell = typeof copy.shell === 'string' ? copy.shell : (true as unknown as string);
  return execFileOwned(command, copy as OwnedExecFileOptions, callback as ExecCallback | undefined);
}

// util.promisify's result type, declared as Node's types declare it for execFile and exec.
type Outputs = { stdout: Output; stderr: Output };
export declare namespace execFileOwned {
  function __promisify__(file: string, args?: readonly string[] | null, options?: OwnedExecFileOptions | null): PromiseWithChild<Outputs>;
  function __promisify__(file: string, options?: OwnedExecFileOptions | null): PromiseWithChild<Outputs>;
}
export declare namespace execOwned {
  function __promisify__(command: string, options?: OwnedExecOptions | null): PromiseWithChild<Outputs>;
}

/**
 * util.promisify's form, as Node gives exec and execFile: resolves `{ stdout, stderr }`, rejects
 * with the error carrying them, and the promise has the child as `.child`.
 */
function promisified(create: (...args: unknown[]) => ChildProcess) {
  return (...args: unknown[]) => {
    let settle!: (error: ExecException | null, stdout: Output, stderr: Output) => void;
    const promise = new Promise<{ stdout: Output; stderr: Output }>((resolve, reject) => {
      settle = (error, stdout, stderr) => (error !== null ? reject(Object.assign(error, { stdout, stderr })) : resolve({ stdout, stderr }));
    });
    // Outside the executor: a bad argument throws here and now, as Node's promisified exec does.
    const child = create(...args, settle);
    return Object.assign(promise, { child });
  };
}

for (const create of [execFileOwned, execOwned]) {
  Object.defineProperty(create, promisify.custom, {
    enumerable: false,
    value: promisified(create as unknown as (...args: unknown[]) => ChildProcess),
  });
}
