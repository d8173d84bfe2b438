// Plumbing for the `leash reap` tests: running the command, starting labelled idle processes
// through sh (so that they end up orphaned, the way leaks do), and waiting for them.
import { spawn, spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProcStat } from '../../src/sys/procfs.js';
import { signalIfSame } from '../../src/sys/verified-signal.js';
import { waitUntil } from '../../src/sys/wait.js';
import { CLI_ENTRY, FIXTURES, REPO_ROOT, exited, killMarked, markedEnv, newMark, waitForGone } from '../helpers/processes.js';

/** The uid other-user tests drop to that must reach what it runs (nobody). */
const PROBE_UID = 65534;

/**
 * What processes of other users run: the checkout's own files where every user can reach them,
 * else a copy in a 0755 temporary folder (a checkout in a private folder, 0700 as `mktemp -d`
 * makes or as /root is, cannot be entered by anyone else): the CLI with the built code and koffi,
 * and the reap fixtures. Copied once per test process, removed when it exits.
 */
function otherUserTree(): { cli: string; fixtures: string } {
  const own = { cli: CLI_ENTRY, fixtures: FIXTURES };
  if (process.getuid?.() !== 0) return own; // only root starts processes as other users
  const reachable = spawnSync('setpriv', [`--reuid=${PROBE_UID}`, `--regid=${PROBE_UID}`, '--clear-groups', 'test', '-r', `${FIXTURES}reap/idle.mjs`]);
  if (reachable.error || reachable.status === 0) return own;
  const copy = mkdtempSync(join(tmpdir(), 'leash-other-user-'));
  process.on('exit', () => rmSync(copy, { recursive: true, force: true }));
  for (const path of ['package.json', 'bin', 'dist/src', 'test/fixtures/reap', 'node_modules/koffi', 'node_modules/@koromix']) {
    if (existsSync(join(REPO_ROOT, path))) cpSync(join(REPO_ROOT, path), join(copy, path), { recursive: true });
  }
  spawnSync('chmod', ['-R', 'a+rX', copy]);
  chmodSync(copy, 0o755);
  return { cli: join(copy, 'bin', 'leash.js'), fixtures: join(copy, 'test', 'fixtures') + '/' };
}

const OTHER_USER_TREE = otherUserTree();
/** The reap fixtures, where every user can read them. */
export const REAP_FIXTURES = `${OTHER_USER_TREE.fixtures}reap/`;
export const IDLE = `${REAP_FIXTURES}idle.mjs`;

export interface ReportedTree {
  pid: number;
  command: string;
  reasons: string[];
  unproven: string[];
  rssBytes: number;
  parent: { pid: number; command: string };
  processes: Array<{ pid: number; startTime: number; command: string }>;
  kill?: { result: string; signalled: number; killed: number } | null;
}

export interface ReapReport {
  trees: ReportedTree[];
  total: { trees: number; rssBytes: number };
  unknown: ReportedTree[];
  blindSpot: string | null;
  uninspected: number;
}

function asUser(uid: number | undefined, argv: string[]): string[] {
  return uid === undefined ? argv : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...argv];
}

/** Runs `leash reap --json ARGS`, optionally as another user (through setpriv, from a tree it can read). */
/** The CLI entry other users can run (see otherUserTree). */
export const OTHER_USER_CLI = OTHER_USER_TREE.cli;

export function runReap(args: readonly string[], asUid?: number): { code: number | null; report: ReapReport; stderr: string } {
  const argv = asUser(asUid, [process.execPath, asUid === undefined ? CLI_ENTRY : OTHER_USER_TREE.cli, 'reap', '--json', ...args]);
  const result = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 60_000 });
  let report: ReapReport;
  try {
    report = JSON.parse(result.stdout) as ReapReport;
  } catch {
    throw new Error(`leash reap printed no JSON (exit ${result.status}): ${result.stdout}${result.stderr}`);
  }
  return { code: result.status, report, stderr: result.stderr };
}

/** A directory where idle.mjs processes announce themselves by role. */
export class ReadyDir {
  readonly path = mkdtempSync(join(tmpdir(), 'leash-reap-'));

  constructor() {
    // Processes of another user announce themselves here too.
    chmodSync(this.path, 0o777);
  }

  /** Waits (with a deadline) for the process of `role` and returns its pid. */
  async pid(role: string, budgetMs = 15_000): Promise<number> {
    const file = join(this.path, role);
    if (!(await waitUntil(() => existsSync(file) && readFileSync(file, 'utf8') !== '', budgetMs))) {
      throw new Error(`no process announced itself as ${role} within ${budgetMs} ms`);
    }
    return Number(readFileSync(file, 'utf8'));
  }

  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

/**
 * A reap test's own scratch: a mark for every process it starts, a marker word for their command
 * lines (what --match confines the command to), and a ready directory; all ended and removed
 * when the test ends. `byIdentity(pid)` records a process started as another user (killMarked
 * sees only this uid's): it is ended by pid and start time first, and its pid handed back.
 */
export function reapScratch(t: TestContext): { mark: string; marker: string; ready: ReadyDir; byIdentity: (pid: number) => number } {
  const mark = newMark();
  const ready = new ReadyDir();
  const started: Array<{ pid: number; startTime: number }> = [];
  t.after(async () => {
    for (const { pid, startTime } of started) signalIfSame(pid, startTime, 'SIGKILL');
    await waitForGone(started.map(({ pid }) => pid), 5000);
    await killMarked(mark);
    ready.remove();
  });
  const byIdentity = (pid: number) => {
    const stat = readProcStat(pid);
    if (stat) started.push({ pid, startTime: stat.startTime });
    return pid;
  };
  return { mark, marker: `leash-reap-${mark}`, ready, byIdentity };
}

/**
 * Runs a shell script in its own session, with the test's mark, and waits for the shell to
 * exit: whatever it started in the background is then orphaned, as leaked processes are.
 */
export async function runShell(script: string, mark: string, ready: ReadyDir, asUid?: number): Promise<void> {
  const argv = asUser(asUid, ['sh', '-c', script]);
  const shell = spawn(argv[0]!, argv.slice(1), {
    detached: true,
    stdio: 'ignore',
    env: markedEnv(mark, { LEASH_REAP_READY_DIR: ready.path }),
  });
  const { code } = await exited(shell, 20_000);
  if (code !== 0) throw new Error(`shell exited ${code}: ${script}`);
}

/** Quotes a word for sh. */
export function q(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `node idle.mjs MARKER ROLE` as a shell command. */
export function idle(marker: string, role: string): string {
  return `${q(process.execPath)} ${q(IDLE)} ${q(marker)} ${q(role)}`;
}
