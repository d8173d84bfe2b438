// `leash reap`, containers: the containers carrying a leash run label (src/run/containers.ts)
// whose run is gone, as the CLIs on PATH see them with the caller's environment. A run on this
// machine is judged by its identity (pid, start time, boot, pid namespace); a label written on
// another host, or a run this process cannot see, is never judged gone.
import { accessSync, constants } from 'node:fs';
import { hostname } from 'node:os';
import { delimiter, join } from 'node:path';
import { identityState } from '../sys/process-identity.js';
import { listLabelledContainers, parseRunIdentity, stopContainers, type ContainerCliName, type LabelledContainer } from '../run/containers.js';

/** Which CLIs reap asks (space-separated; empty: none): LEASH_CONTAINER_CLIS, default all three. */
export const CONTAINER_CLIS_VARIABLE = 'LEASH_CONTAINER_CLIS';
const DEFAULT_CLIS: ContainerCliName[] = ['docker', 'podman', 'nerdctl'];

export interface OrphanedContainer extends LabelledContainer {
  /** The pid of the leash run the label names (gone). */
  runPid: number;
}

export interface ContainerScan {
  orphaned: OrphanedContainer[];
  /** CLIs found on PATH that did not answer (no daemon, no permission): their containers are unseen. */
  unanswered: ContainerCliName[];
}

function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
  const suffixes = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    for (const suffix of suffixes) {
      try {
        accessSync(join(dir || '.', name + suffix), constants.X_OK);
        return true;
      } catch {
        // next
      }
    }
  }
  return false;
}

/** Whether the run a label value names is gone: on this host, and provably not running. */
export function runIsGone(value: string, host = hostname()): boolean {
  const run = parseRunIdentity(value);
  if (!run || run.host !== host.replace(/[^A-Za-z0-9._-]/g, '_')) return false;
  if (run.startTime === undefined || run.bootId === undefined || run.pidNamespace === undefined) return false;
  return identityState({ pid: run.pid, start_time: run.startTime, boot_id: run.bootId, pid_namespace: run.pidNamespace }) === 'gone';
}

/** Lists the orphaned containers every CLI on PATH sees (one per id: two CLIs may share a daemon). */
export async function scanOrphanedContainers(env: NodeJS.ProcessEnv = process.env): Promise<ContainerScan> {
  const wanted = env[CONTAINER_CLIS_VARIABLE] === undefined
    ? DEFAULT_CLIS
    : (env[CONTAINER_CLIS_VARIABLE] as string).split(/\s+/).filter((name): name is ContainerCliName => (DEFAULT_CLIS as string[]).includes(name));
  const present = wanted.filter((cli) => onPath(cli, env));
  const listed = await Promise.all(present.map((cli) => listLabelledContainers(cli, env)));
  const orphaned: OrphanedContainer[] = [];
  const seen = new Set<string>();
  const unanswered: ContainerCliName[] = [];
  for (const [index, containers] of listed.entries()) {
    if (!containers) {
      unanswered.push(present[index] as ContainerCliName);
      continue;
    }
    for (const container of containers) {
      // Stopped ones (kept by the user, or stopped by leash) and never started ones run nothing: no leak.
      if (/^(exited|stopped|dead|created)/i.test(container.status)) continue;
      const key = container.id.slice(0, 12);
      if (seen.has(key) || !runIsGone(container.run)) continue;
      seen.add(key);
      orphaned.push({ ...container, runPid: parseRunIdentity(container.run)?.pid ?? 0 });
    }
  }
  return { orphaned, unanswered };
}

/** --kill: stops them through the CLI that listed them; true when every stop succeeded. */
export async function stopOrphanedContainers(containers: readonly OrphanedContainer[], graceMs: number, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const byCli = new Map<ContainerCliName, string[]>();
  for (const container of containers) byCli.set(container.cli, [...(byCli.get(container.cli) ?? []), container.id]);
  const results = await Promise.all([...byCli].map(([cli, ids]) => stopContainers(cli, ids, graceMs, env)));
  return results.every(Boolean);
}

/** The table rows for people. */
export function formatContainers(containers: readonly OrphanedContainer[], stopped?: boolean): string {
  const summary = `${containers.length} orphaned container${containers.length === 1 ? '' : 's'} (leash run gone)` +
    (stopped === undefined ? '' : stopped ? ', stopped' : ', not all stopped');
  if (containers.length === 0) return `${summary}\n`;
  const header = ['CLI', 'CONTAINER', 'NAME', 'IMAGE', 'STATUS', 'RUN PID'];
  const rows = containers.map((c) => [c.cli, c.id.slice(0, 12), c.name, c.image, c.status, String(c.runPid)]);
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] as number))).join('  ');
  return [line(header), ...rows.map(line), summary].join('\n') + '\n';
}
