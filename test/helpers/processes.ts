// Shared test plumbing. Every process a test starts carries LEASH_TEST_MARK=<random>, so the
// test can find (and, on failure, end) exactly its own processes and nobody else's.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { findEnvironmentCarriers, isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { hasProcfs } from '../../src/sys/procfs.js';
import { relocatedEnvironCarriers, testCommandLine } from './real-proc.js';
import { waitUntil } from '../../src/sys/wait.js';

export const MARK_VARIABLE = 'LEASH_TEST_MARK';

/** The repository root (tests run from dist/test/..., sources are mirrored there). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Plain-JS fixtures live in the source tree: test/fixtures. */
export const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));
/** The compiled library entry, for fixtures to import. */
export const LIBRARY_ENTRY = fileURLToPath(new URL('../../src/index.js', import.meta.url));
/** The CLI entry. */
export const CLI_ENTRY = fileURLToPath(new URL('../../../bin/leash.js', import.meta.url));

export function newMark(): string {
  return `t${randomBytes(8).toString('hex')}`;
}

/** Live (non-zombie) processes carrying this test's mark. */
export function markedPids(mark: string): number[] {
  const entry = `${MARK_VARIABLE}=${mark}`;
  if (!hasProcfs()) return relocatedEnvironCarriers(entry); // the macOS-paths lane: tests only
  return findEnvironmentCarriers(entry).map((mark) => mark.pid);
}

/** The live process carrying the mark whose command line, its words joined by spaces, is `command`. */
export function markedPidRunning(mark: string, command: string): number | undefined {
  return markedPids(mark).find((pid) => (testCommandLine(pid) ?? []).join(' ') === command);
}

/** Ends every process carrying the mark (they are this test's own), then waits for them. */
export async function killMarked(mark: string): Promise<void> {
  for (let round = 0; round < 5; round += 1) {
    const pids = markedPids(mark);
    if (pids.length === 0) return;
    for (const pid of pids) signalProcess(pid, 'SIGKILL');
    await waitForGone(pids, 2000);
  }
}

/** Resolves true once none of the pids runs code any more (zombies count as gone). */
export function waitForGone(pids: readonly number[], budgetMs: number): Promise<boolean> {
  return waitUntil(() => pids.every((pid) => !isProcessAlive(pid)), budgetMs);
}

/** Env for a spawned test process: the caller's env plus the mark. */
export function markedEnv(mark: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...extra, [MARK_VARIABLE]: mark };
}

/** Starts `node <fixture> args...` with the mark in its environment. */
export function startFixture(
  fixture: string,
  args: readonly string[],
  mark: string,
  options: SpawnOptions & { extraEnv?: NodeJS.ProcessEnv } = {},
): ChildProcess {
  const { extraEnv, ...rest } = options;
  return spawn(process.execPath, [FIXTURES + fixture, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...rest,
    env: markedEnv(mark, { LEASH_LIBRARY: LIBRARY_ENTRY, ...extraEnv }),
  });
}

/** Collects a child's stdout as JSON lines; `next()` waits (with a deadline) for the next one. */
export class JsonLines {
  private buffered = '';
  private readonly lines: unknown[] = [];
  private waiters: Array<() => void> = [];
  private ended = false;
  stderr = '';

  constructor(child: ChildProcess) {
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (text: string) => {
      this.buffered += text;
      let newline = this.buffered.indexOf('\n');
      while (newline >= 0) {
        const line = this.buffered.slice(0, newline).trim();
        this.buffered = this.buffered.slice(newline + 1);
        if (line) {
          try {
            this.lines.push(JSON.parse(line));
          } catch {
            this.lines.push({ text: line });
          }
        }
        newline = this.buffered.indexOf('\n');
      }
      this.wake();
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      this.stderr += text;
    });
    child.stdout?.on('end', () => {
      this.ended = true;
      this.wake();
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  async next<T = Record<string, unknown>>(budgetMs = 10_000): Promise<T> {
    const deadline = Date.now() + budgetMs;
    while (this.lines.length === 0) {
      if (this.ended) throw new Error(`stdout ended without another line; stderr: ${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no line within ${budgetMs} ms; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.lines.shift() as T;
  }
}

/**
 * Resolves with the exit code and signal of a child, or rejects after the budget. The exit event
 * can come before the last output does, so it then waits (briefly: a grandchild, such as a death
 * supervisor, may hold the pipe open) for the child's piped stdout and stderr to end.
 */
export async function exited(
  child: ChildProcess,
  budgetMs = 15_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const streams = [child.stdout, child.stderr].filter((stream) => stream !== null && !stream.readableEnded);
  const drained = Promise.all(
    streams.map((stream) => new Promise<void>((resolve) => {
      stream!.once('end', resolve);
      stream!.once('close', resolve);
    })),
  );
  if (child.exitCode === null && child.signalCode === null) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`pid ${child.pid} did not exit within ${budgetMs} ms`)), budgetMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([drained, new Promise<void>((resolve) => (timer = setTimeout(resolve, 250)))]);
  clearTimeout(timer);
  return { code: child.exitCode, signal: child.signalCode };
}

/** A test body run with a fresh mark; every marked process is ended afterwards, pass or fail. */
export function withMark(run: (mark: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const mark = newMark();
    try {
      await run(mark);
    } finally {
      await killMarked(mark);
    }
  };
}
