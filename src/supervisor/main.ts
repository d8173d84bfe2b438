// The death supervisor: one small process per owner. It learns which process groups to guard
// from control lines on stdin, and takes them down when stdin reaches EOF, which happens
// exactly when the owner (the only writer) is gone, however it died.
// Imports nothing beyond Node's standard library and leash's own standard-library-only files.
import { read } from 'node:fs';
import { DEFAULT_GRACE_MS, LineFramer, parseControlLine } from './protocol.js';
import { tearDown } from './teardown.js';
import { ownProcessGroupId } from '../sys/processes.js';

export const SUPERVISOR_USAGE =
  'usage: leash supervise --parent-pgid PGID [--grace-ms MS] [--owner-token TOKEN]';

/** How many disowned groups the sweep remembers to spare (oldest forgotten first). */
const MAX_DISOWNED = 4096;

/** Exit codes of `leash supervise`. */
export const SupervisorExit = {
  ok: 0,
  /** Started inside the parent's process group: a killpg of the parent would take us too. */
  refused: 2,
  usage: 64,
} as const;

export interface SupervisorOptions {
  parentPgid: number;
  graceMs: number;
  ownerToken?: string;
}

/** Parses the supervisor's flags; a string is the usage error to print. */
export function parseSupervisorArgs(argv: readonly string[]): SupervisorOptions | string {
  let parentPgid: number | undefined;
  let graceMs = DEFAULT_GRACE_MS;
  let ownerToken: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--parent-pgid' || flag === '--grace-ms' || flag === '--owner-token') {
      if (value === undefined) return `${flag} needs a value`;
      i += 1;
      if (flag === '--owner-token') {
        if (!/^[A-Za-z0-9_-]{8,128}$/.test(value)) return '--owner-token takes 8 to 128 letters, digits, _ or -';
        ownerToken = value;
        continue;
      }
      if (!/^[0-9]{1,10}$/.test(value)) return `${flag} takes a whole number, not '${value}'`;
      const number = Number(value);
      if (flag === '--parent-pgid') parentPgid = number;
      else if (number > 600_000) return '--grace-ms is at most 600000';
      else graceMs = number;
    } else {
      return `unknown argument '${flag}'`;
    }
  }
  // 0 is what a process sees when its group leader lives outside its pid namespace
  // (unshare --pid without setsid, some sandboxes): then there is no parent group to spare.
  if (parentPgid === undefined) return '--parent-pgid PGID is required';
  return { parentPgid, graceMs, ownerToken };
}

/**
 * Feeds stdin to `onChunk` until EOF through one reused buffer. A stream would allocate a fresh
 * buffer per read and let a flood of garbage (say, /dev/zero) grow the heap by tens of MB
 * before the collector catches up; this process must stay small whatever it is sent.
 */
function readUntilEof(onChunk: (chunk: Buffer) => void): Promise<void> {
  const buffer = Buffer.alloc(16 * 1024);
  return new Promise<void>((resolve) => {
    const next = () =>
      read(0, buffer, 0, buffer.length, null, (error, bytes) => {
        if (error && (error.code === 'EAGAIN' || error.code === 'EINTR')) {
          // A non-blocking stdin (unusual for a spawned child): poll it gently.
          setTimeout(next, error.code === 'EAGAIN' ? 5 : 0);
          return;
        }
        // EOF, or a read error: the owner's end is unusable either way.
        if (error || bytes === 0) return resolve();
        onChunk(buffer.subarray(0, bytes));
        next();
      });
    next();
  });
}

/** Runs the supervisor until EOF on stdin; resolves with the exit code. */
export async function runSupervisor(options: SupervisorOptions): Promise<number> {
  const ownPgid = ownProcessGroupId();
  if (ownPgid === options.parentPgid) {
    process.stderr.write(
      `leash supervise: refusing to run inside the parent's process group ${options.parentPgid}: ` +
        'a signal to that group would end the supervisor before it could clean up ' +
        '(start it with detached: true)\n',
    );
    return SupervisorExit.refused;
  }

  // A dying owner's terminal may send these to us too; EOF on stdin is the only way to stop.
  for (const signal of ['SIGINT', 'SIGHUP', 'SIGPIPE'] as const) process.on(signal, () => {});

  const registered = new Map<number, number | undefined>();
  // Groups let go on purpose keep the owner token in their environment: the sweep must spare
  // them, by identity, not by number (numbers are recycled).
  const disowned = new Map<number, number | undefined>();
  let released = false;
  const isSafeTarget = (pgid: number) => pgid > 1 && pgid !== ownPgid && pgid !== options.parentPgid;

  const framer = new LineFramer((line) => {
    const command = parseControlLine(line);
    if (!command) return;
    switch (command.verb) {
      case 'register':
        if (!isSafeTarget(command.pgid)) {
          process.stderr.write(`leash supervise: ignoring unsafe process group ${command.pgid}\n`);
          return;
        }
        registered.set(command.pgid, command.startTime);
        disowned.delete(command.pgid);
        released = false;
        return;
      case 'unregister':
        registered.delete(command.pgid);
        return;
      case 'disown':
        registered.delete(command.pgid);
        disowned.delete(command.pgid);
        disowned.set(command.pgid, command.startTime);
        if (disowned.size > MAX_DISOWNED) disowned.delete(disowned.keys().next().value as number);
        return;
      case 'release':
        registered.clear();
        released = true;
        return;
    }
  });

  await readUntilEof((chunk) => framer.push(chunk));

  if (released && registered.size === 0) return SupervisorExit.ok;
  await tearDown({
    groups: registered,
    graceMs: options.graceMs,
    ownerToken: options.ownerToken,
    disowned,
  });
  return SupervisorExit.ok;
}

/** Entry point shared by `leash supervise` and direct execution of this file. */
export async function supervisorMain(argv: readonly string[]): Promise<number> {
  const options = parseSupervisorArgs(argv);
  if (typeof options === 'string') {
    process.stderr.write(`leash supervise: ${options}\n${SUPERVISOR_USAGE}\n`);
    return SupervisorExit.usage;
  }
  return runSupervisor(options);
}
