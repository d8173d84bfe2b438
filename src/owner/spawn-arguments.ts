// The argument rules of child_process.spawn, for spawnOwned and the owned creators: which
// argument is the list and which the options, the errors Node throws for the wrong types, and
// the environment Node hands the child (it walks env with for…in, so inherited keys count).
import type { SpawnOptions } from 'node:child_process';
import { inspect } from 'node:util';

/** What Node's ERR_INVALID_ARG_TYPE says about the value it got. */
function describeReceived(value: unknown): string {
  if (value === null || value === undefined) return `Received ${String(value)}`;
  if (typeof value === 'function') return `Received function ${(value as { name?: string }).name ?? ''}`;
  if (typeof value === 'object') {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string' && name !== '') return `Received an instance of ${name}`;
    return `Received ${inspect(value, { depth: -1 })}`;
  }
  // Long values are cut to 25 characters: a string before it is quoted, anything else after.
  if (typeof value === 'string' && value.length > 28) value = `${value.slice(0, 25)}...`;
  let shown = inspect(value, { colors: false });
  if (shown.length > 28 && typeof value !== 'string') shown = `${shown.slice(0, 25)}...`;
  return `Received type ${typeof value} (${shown})`;
}

/** A RangeError with code ERR_OUT_OF_RANGE, worded as Node words it. */
export function outOfRange(name: string, range: string, value: unknown): RangeError {
  const shown = typeof value === 'number' ? String(value) : inspect(value);
  const error = new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${shown}`) as RangeError & { code: string };
  error.code = 'ERR_OUT_OF_RANGE';
  return error;
}

/** A TypeError with code ERR_INVALID_ARG_TYPE, worded as Node words it. */
export function invalidArgType(name: string, expected: string, value: unknown): TypeError {
  const kind = name.includes('.') ? 'property' : 'argument';
  const error = new TypeError(`The "${name}" ${kind} must be ${expected}. ${describeReceived(value)}`) as TypeError & { code: string };
  error.code = 'ERR_INVALID_ARG_TYPE';
  return error;
}

/** An options argument as Node's validateObject accepts it: an object, not null, an array or a function. */
export function isOptionsObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * spawn's overloads: `(cmd, args?, options?)` and `(cmd, options)`; args `undefined` or `null`
 * still takes the options from the third place. Throws as spawn does before any process starts.
 */
export function spawnArguments(argsOrOptions: unknown, maybeOptions: unknown): { args: string[]; options: SpawnOptions } {
  let args: string[];
  let options: unknown = maybeOptions;
  if (Array.isArray(argsOrOptions)) args = [...(argsOrOptions as string[])];
  else if (argsOrOptions === undefined || argsOrOptions === null) args = [];
  else if (typeof argsOrOptions !== 'object') throw invalidArgType('args', 'of type object', argsOrOptions);
  else {
    options = argsOrOptions;
    args = [];
  }
  if (options === undefined) return { args, options: {} };
  if (!isOptionsObject(options)) throw invalidArgType('options', 'of type object', options);
  return { args, options: withOwnEnvironment(options as SpawnOptions) };
}

/**
 * The options with `env` as the child will get it: Node takes `options.env || process.env` and
 * every enumerable key, inherited ones included. Copied here so that adding the owner token
 * (a spread, own keys only) loses none.
 */
export function withOwnEnvironment(options: SpawnOptions): SpawnOptions {
  const source = (options.env || process.env) as Record<string, string | undefined>;
  const env: Record<string, string | undefined> = {};
  for (const key in source) env[key] = source[key];
  return { ...options, env };
}
