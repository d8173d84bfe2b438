// The end of a run bench: what it started is ended whatever happened, leash processes first with
// SIGTERM (so that they take their trees down with them), then SIGKILL for what is left.
import type { ChildProcess } from 'node:child_process';
import { isProcessAlive, signalGroup } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';

export async function endStarted(started: readonly ChildProcess[], floorGroups: Iterable<number>): Promise<void> {
  for (const pgid of floorGroups) signalGroup(pgid, 'SIGKILL');
  const running = () => started.filter((child) => child.pid !== undefined && isProcessAlive(child.pid));
  for (const child of running()) child.kill('SIGTERM');
  await waitUntil(() => running().length === 0, 15_000);
  for (const child of running()) child.kill('SIGKILL');
  await waitUntil(() => running().length === 0, 5_000);
}
