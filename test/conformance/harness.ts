// The differential conformance suite's machinery: which implementations a scenario runs against
// (leash, and the seed programs where python3 and the seeds are present), how each is started (one
// small adapter per implementation), and what a scenario observes (processes by identity, the
// lines the member fixture logs, exit statuses, state documents).
//
// A scenario is written once, against the adapter's interface, and registered for every
// implementation by `scenario()`: adding a scenario is one place.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { CLI_ENTRY, exited, FIXTURES, MARK_VARIABLE, REPO_ROOT, killMarked, markedEnv, newMark } from '../helpers/processes.js';

/**
 * `leash-fallback` is leash with its group handles turned off (LEASH_GROUP_HANDLES=off): the path
 * of kernels without PIDFD_SIGNAL_PROCESS_GROUP (< 6.9) or without native calls, where groups are
 * proven by witnesses. Its todo marks and exemptions are leash's unless a scenario names it.
 */
export type ImplementationName = 'leash' | 'leash-fallback' | 'seed';

// ---------------------------------------------------------------------------------------------
// What is under test

/** The leash command under test: LEASH_CONFORMANCE_BIN (another worktree's build), else this repository's. */
export const LEASH_BIN = resolve(process.env.LEASH_CONFORMANCE_BIN || CLI_ENTRY);
/** That build's root (bin/leash.js is one level down). */
export const LEASH_ROOT = resolve(dirname(LEASH_BIN), '..');
/** That build's owner library entry (its compiled dist). */
export const LEASH_LIBRARY = join(LEASH_ROOT, 'dist', 'src', 'index.js');

/**
 * The folder of the seeds as programs: LEASH_CONFORMANCE_SEEDS, else `../shared/seeds/runnable`
 * beside this checkout or beside the main checkout of a git worktree (CI clones with shared/ beside).
 */
function seedFolder(): string | undefined {
  if (process.env.LEASH_CONFORMANCE_SEEDS) return resolve(process.env.LEASH_CONFORMANCE_SEEDS);
  const roots = [REPO_ROOT];
  try {
    const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    roots.push(resolve(common, '..'));
  } catch {
    // not a git checkout: the repository's own parent only
  }
  return roots.map((root) => resolve(root, '..', 'shared', 'seeds', 'runnable')).find((folder) => existsSync(folder));
}

const SEEDS = seedFolder();
/**
 * The interpreter itself, not a launcher on PATH (a pyenv shim is a shell script that runs more
 * programs before Python starts: signals sent then would reach the shim, not the seed).
 */
const PYTHON = (() => {
  const found = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() || undefined : undefined;
})();
const hasPython = PYTHON !== undefined;

function seedProgram(file: string): { path: string; skip: false } | { path: ''; skip: string } {
  if (!hasPython) return { path: '', skip: 'no python3: the seed half needs it' };
  if (SEEDS === undefined || !existsSync(join(SEEDS, file))) return { path: '', skip: `no seed ${file} in ../shared/seeds/runnable` };
  return { path: join(SEEDS, file), skip: false };
}

/** Root may write ns_last_pid in a private pid namespace: the scenarios that need a number reused. */
export const canUnshare =
  process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

// ---------------------------------------------------------------------------------------------
// Adapters

/** Whether an implementation is one of leash's paths (for the deliberate differences). */
export const isLeash = (name: ImplementationName) => name !== 'seed';

export interface SupervisorImplementation {
  name: ImplementationName;
  skip: string | false;
  /** The grace between SIGTERM and SIGKILL this half runs with (the seed's is fixed at 3 s). */
  graceMs: number;
  /** The command line, for a process other than the test to start (a pid-namespace fixture). */
  argv(parentPgid: number): string[];
  /** Environment the implementation is started with (the mark is added by the caller). */
  env: NodeJS.ProcessEnv;
}

const leashSupervisorLaunch = await (async () => {
  try {
    const link = (await import(pathToFileURL(join(LEASH_ROOT, 'dist', 'src', 'owner', 'supervisor-link.js')).href)) as {
      supervisorCommand: () => string[];
      supervisorEnvironment: () => NodeJS.ProcessEnv;
    };
    return { command: link.supervisorCommand(), env: link.supervisorEnvironment() };
  } catch {
    // a build without the link module: the documented command
    return { command: [process.execPath, LEASH_BIN, 'supervise'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } };
  }
})();

/** leash's grace in the supervisor scenarios: short, so the suite stays inside its budget. */
export const LEASH_SUPERVISOR_GRACE_MS = 400;

const seedSupervisor = seedProgram('mcp_death_supervisor.py');

export const SUPERVISORS: SupervisorImplementation[] = [
  {
    name: 'leash',
    skip: false,
    graceMs: LEASH_SUPERVISOR_GRACE_MS,
    argv: (parentPgid) => [...leashSupervisorLaunch.command, '--parent-pgid', String(parentPgid), '--grace-ms', String(LEASH_SUPERVISOR_GRACE_MS)],
    env: leashSupervisorLaunch.env,
  },
  {
    name: 'leash-fallback',
    skip: false,
    graceMs: LEASH_SUPERVISOR_GRACE_MS,
    argv: (parentPgid) => [...leashSupervisorLaunch.command, '--parent-pgid', String(parentPgid), '--grace-ms', String(LEASH_SUPERVISOR_GRACE_MS)],
    env: { ...leashSupervisorLaunch.env, LEASH_GROUP_HANDLES: 'off' },
  },
  {
    name: 'seed',
    skip: seedSupervisor.skip,
    graceMs: 3000,
    argv: (parentPgid) => [PYTHON!, seedSupervisor.path, '--parent-pgid', String(parentPgid)],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  },
];

/** Starts a supervisor in a session of its own, its stdin a pipe the test holds (the owner's end); the parent group named is the test's. */
export function startSupervisor(impl: SupervisorImplementation, mark: string, parentPgid = groupOf(process.pid) ?? 0): SupervisorProcess {
  const [command, ...args] = impl.argv(parentPgid);
  // Its own environment only (the owner library scrubs the supervisor's), with the test's mark.
  const child = spawn(command!, args, { detached: true, stdio: ['pipe', 'ignore', 'pipe'], env: { ...impl.env, [MARK_VARIABLE]: mark } });
  return new SupervisorProcess(child);
}

/**
 * A stream call's completion, or its end on a stream that was destroyed meanwhile (a supervisor
 * that exited early: its callback may never come), at most 5 s: the scenario's own assertions say
 * what went wrong, rather than a test that never ends.
 */
function settle(start: (done: () => void) => void): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, 5000);
    start(() => {
      clearTimeout(timer);
      done();
    });
  });
}

/** Bytes a process has read (all its threads), from /proc/PID/io. */
function readCount(pid: number): number {
  try {
    return Number(/rchar: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** One of its threads sleeps in a read of a pipe or a socket (its stdin, once started up). */
function sleepsInPipeRead(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).some((tid) => {
      try {
        return /pipe_read|unix_stream_read/.test(readFileSync(`/proc/${pid}/task/${tid}/wchan`, 'utf8'));
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** Waits (up to 5 s) until a process has started up: asleep in a pipe read, its read count still. */
export async function settled(pid: number): Promise<void> {
  let last = -1;
  await waitUntil(() => {
    const now = readCount(pid);
    const still = now === last;
    last = now;
    return still && sleepsInPipeRead(pid);
  }, 5000);
}

export class SupervisorProcess {
  stderr = '';
  constructor(readonly child: ChildProcess) {
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (this.stderr += text));
    child.stdin?.on('error', () => {}); // a supervisor that exited early: its exit status tells
  }
  /** Writes raw bytes to the control pipe and waits until they are in it. */
  write(text: string | Buffer): Promise<void> {
    return settle((done) => this.child.stdin!.write(text, () => done()));
  }
  /**
   * Writes lines and waits (with a deadline) until the supervisor has read them: its read count
   * (`rchar`) has grown by their length, taken once it sat idle in a read of the pipe. The protocol
   * has no acknowledgement; this is the evidence that a `register` was taken before the test
   * changes the group under it.
   */
  async send(text: string): Promise<void> {
    const pid = this.child.pid!;
    await settled(pid);
    const base = readCount(pid);
    await this.write(text);
    await waitUntil(() => readCount(pid) >= base + Buffer.byteLength(text), 5000);
  }
  /** The owner's end closes: EOF. Resolves at that moment (monotonic ms). */
  async eof(): Promise<number> {
    await settle((done) => this.child.stdin!.end(() => done()));
    return performance.now();
  }
  /** The supervisor's exit, its stderr drained (the exit event can come before the last output). */
  exited(budgetMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return exited(this.child, budgetMs);
  }
}

export interface RunImplementation {
  name: ImplementationName;
  skip: string | false;
  /** Starts the tree supervisor on `command` (an absolute program path first). */
  start(mark: string, command: readonly string[], options: RunOptions): RunProcess;
}

export interface RunOptions {
  graceMs: number;
  statePath: string;
  env?: NodeJS.ProcessEnv;
}

const seedRun = seedProgram('cli_lane_supervisor.py');

function runProcess(child: ChildProcess): RunProcess {
  const run: RunProcess = { child, stderr: '' };
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (run.stderr += text));
  return run;
}

export interface RunProcess {
  child: ChildProcess;
  stderr: string;
}

export const RUNNERS: RunImplementation[] = [
  {
    name: 'leash',
    skip: false,
    start: (mark, command, { graceMs, statePath, env }) =>
      runProcess(
        spawn(process.execPath, [LEASH_BIN, 'run', '--grace', `${graceMs}ms`, '--state', statePath, '--', ...command], {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: markedEnv(mark, { LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', ...env }),
        }),
      ),
  },
  {
    name: 'seed',
    skip: seedRun.skip,
    start: (mark, command, { graceMs, statePath, env }) =>
      runProcess(
        spawn(PYTHON!, [seedRun.path, '--', ...command], {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: markedEnv(mark, {
            HERMES_CLI_PROCESS_STATE_PATH: statePath,
            HERMES_CLI_PROCESS_GRACE_SECONDS: String(graceMs / 1000),
            ...env,
          }),
        }),
      ),
  },
];

// ---------------------------------------------------------------------------------------------
// Registering a scenario for every implementation

export interface ScenarioOptions {
  /** Per implementation: the issue case this half proves, failing until the fix is merged. */
  todo?: Partial<Record<ImplementationName, string>>;
  /** Per implementation: why this half does not run (a promise the other side does not make). */
  notApplicable?: Partial<Record<ImplementationName, string>>;
  /** A reason this scenario cannot run here at all (root, unshare). */
  skip?: string | false;
}

export interface ScenarioContext {
  mark: string;
  /** A private scratch folder, removed afterwards. */
  dir: string;
}

/**
 * One scenario, registered once per implementation as "<title> [leash]" and "<title> [seed]".
 * Every process the body starts carries the mark and is ended afterwards, pass or fail.
 */
export function scenario<I extends { name: ImplementationName; skip: string | false }>(
  implementations: readonly I[],
  title: string,
  options: ScenarioOptions,
  body: (impl: I, context: ScenarioContext) => Promise<void>,
): void {
  for (const impl of implementations) {
    const asLeash = (name: ImplementationName): ImplementationName => (name === 'leash-fallback' ? 'leash' : name);
    const skip = options.skip || (options.notApplicable?.[impl.name] ?? options.notApplicable?.[asLeash(impl.name)]) || impl.skip;
    const todo = options.todo?.[impl.name] ?? options.todo?.[asLeash(impl.name)];
    it(`${title} [${impl.name}]`, { skip: skip ? String(skip) : false, timeout: 90_000, ...(todo ? { todo } : {}) }, async () => {
      const mark = newMark();
      const dir = mkdtempSync(join(tmpdir(), 'leash-conformance-'));
      try {
        await body(impl, { mark, dir });
      } finally {
        await killMarked(mark);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Observing

export const MEMBER = join(FIXTURES, 'conformance', 'member.sh');

/** A process by identity: its pid and the start time it had when the test first saw it. */
export interface Identity {
  pid: number;
  startTime: number;
}

export function identify(pid: number): Identity {
  const stat = readProcStat(pid);
  if (!stat) throw new Error(`process ${pid} is not there`);
  return { pid, startTime: stat.startTime };
}

/** Alive: the same process (start time), running or stopped, not a zombie. */
export function aliveAs(who: Identity): boolean {
  const stat = readProcStat(who.pid);
  return stat !== undefined && stat.startTime === who.startTime && stat.state !== 'Z' && stat.state !== 'X';
}

export function groupOf(pid: number): number | undefined {
  return readProcStat(pid)?.pgid;
}

export function parentOf(pid: number): number | undefined {
  return readProcStat(pid)?.ppid;
}

/** Waits until every identity is gone; resolves with the moment (monotonic ms) or undefined at the deadline. */
export async function goneAt(who: readonly Identity[], budgetMs: number): Promise<number | undefined> {
  const ok = await waitUntil(() => who.every((one) => !aliveAs(one)), budgetMs);
  return ok ? performance.now() : undefined;
}

/** The member fixture's log: lines "NAME EVENT PID". */
export function readLog(path: string): Array<{ name: string; event: string; pid: number }> {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name = '', event = '', pid = '0'] = line.split(' ');
      return { name, event, pid: Number(pid) };
    });
}

/** The signals a named member logged, in order. */
export function signalsOf(log: string, name: string): string[] {
  return readLog(log)
    .filter((line) => line.name === name && line.event !== 'ready')
    .map((line) => line.event);
}

/**
 * The member logged `signal`, and nothing else. Once or more: both supervisors may reach a process
 * twice in a stop (its group, then itself: the seed always does), and a shell can run its trap for
 * each before it exits.
 */
export function assertGotOnly(log: string, name: string, signal: string, message?: string): void {
  const got = signalsOf(log, name);
  assert.ok(got.length >= 1 && got.every((one) => one === signal), message ?? `${name} got ${JSON.stringify(got)}, expected ${signal}`);
}

/** Waits until the member fixture logged `name ready`, and returns its pid. */
export async function readyPid(log: string, name: string, budgetMs = 10_000): Promise<number> {
  let pid: number | undefined;
  await waitUntil(() => {
    pid = readLog(log).find((line) => line.name === name && line.event === 'ready')?.pid;
    return pid !== undefined;
  }, budgetMs);
  if (pid === undefined) throw new Error(`${name} never said it was ready (log: ${JSON.stringify(readLog(log))})`);
  return pid;
}

/** Starts `sh -c script` as the leader of a group of its own; stdin a pipe the test holds. */
export function startGroup(mark: string, script: string, args: readonly string[] = []): ChildProcess & { pid: number } {
  const child = spawn('sh', ['-c', script, 'group', ...args], {
    detached: true,
    stdio: ['pipe', 'pipe', 'ignore'],
    env: markedEnv(mark),
  });
  if (child.pid === undefined) throw new Error('could not start sh');
  child.stdin?.on('error', () => {});
  return child as ChildProcess & { pid: number };
}

export function exitOf(child: ChildProcess, budgetMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`pid ${child.pid} did not exit within ${budgetMs} ms`)), budgetMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal });
    });
  });
}

export function readJsonFile(path: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

// ---------------------------------------------------------------------------------------------
// Groups the scenarios own

/** A member fixture leading a group of its own (pgid == pid), once it is ready. */
export async function memberGroup(mark: string, log: string, name: string, mode: 'honour' | 'ignore' = 'honour'): Promise<Identity> {
  const child = spawn('sh', [MEMBER, log, name, mode], { detached: true, stdio: 'ignore', env: markedEnv(mark) });
  const pid = await readyPid(log, name);
  assert.equal(pid, child.pid);
  assert.equal(groupOf(pid), pid, `${name} leads its group`);
  return identify(pid);
}

/**
 * A group whose leader (`sh`) started a member fixture in it and then waits for a line on its
 * stdin before it exits: the test decides when the leader dies.
 */
export async function groupWithMember(mark: string, log: string, name: string, mode: 'honour' | 'ignore') {
  const leader = startGroup(mark, 'sh "$1" "$2" "$3" "$4" & read go; exit 0', [MEMBER, log, name, mode]);
  const member = identify(await readyPid(log, name));
  assert.equal(groupOf(member.pid), leader.pid, 'the member is in the leader\'s group');
  const leaderExit = exitOf(leader);
  return {
    pgid: leader.pid,
    leader: identify(leader.pid),
    member,
    /** Ends the leader; resolves once it is gone and the member was handed to another parent. */
    async leaderExits(): Promise<void> {
      leader.stdin!.end('go\n');
      await leaderExit;
      assert.equal(aliveAs(member), true, 'the member outlives its leader');
      assert.notEqual(parentOf(member.pid), leader.pid, 'the member was reparented');
      assert.equal(groupOf(member.pid), leader.pid, 'the member is still in the group');
    },
  };
}

