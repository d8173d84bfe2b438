// Process groups for tests: each helper starts a marked `sh -c` script that leads its own group.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { supervisorCommand } from '../../src/owner/supervisor-link.js';
import { readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { markedEnv } from './processes.js';

/** The supervisor exactly as the library starts it (the bundled build). */
export const SUPERVISOR_MAIN = supervisorCommand().at(-1)!;

/** Starts `sh -c script` as the leader of a new group (pgid == pid). */
export function startGroup(mark: string, script: string): ChildProcess & { pid: number } {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env: markedEnv(mark) });
  if (child.pid === undefined) throw new Error('could not start sh');
  return child as ChildProcess & { pid: number };
}

/** The start time of a process, which must exist. */
export function startTimeOf(pid: number): number {
  const stat = readProcStat(pid);
  if (!stat) throw new Error(`no process ${pid}`);
  return stat.startTime;
}

/** Starts a death supervisor with stdin as a pipe the test holds. */
export function startSupervisor(mark: string, args: readonly string[], detached = true, extraEnv: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, [SUPERVISOR_MAIN, ...args], {
    detached,
    stdio: ['pipe', 'ignore', 'pipe'],
    env: markedEnv(mark, extraEnv),
  });
}

/** Reads the pids a group script prints on its stdout, one per line, until `count` arrived. */
export function readPids(child: ChildProcess, count: number, budgetMs = 5000): Promise<number[]> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`expected ${count} pids, got: ${text}`)), budgetMs);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      text += chunk;
      const pids = text.split('\n').filter(Boolean).map(Number);
      if (pids.length >= count) {
        clearTimeout(timer);
        resolve(pids.slice(0, count));
      }
    });
  });
}

/**
 * Collects a supervisor's stderr; `roundTrip` resolves once every line written before it was read
 * (a `register 1` is refused with a line, and its answer comes after theirs).
 */
export function listenToSupervisor(supervisor: ChildProcess): { text: () => string; roundTrip: () => Promise<void> } {
  let text = '';
  supervisor.stderr!.setEncoding('utf8');
  supervisor.stderr!.on('data', (chunk: string) => (text += chunk));
  return {
    text: () => text,
    roundTrip: async () => {
      const seen = text.split('unsafe process group 1\n').length;
      supervisor.stdin!.write('register 1\n');
      assert.ok(await waitUntil(() => text.split('unsafe process group 1\n').length > seen, 10_000), 'the supervisor never answered');
    },
  };
}
