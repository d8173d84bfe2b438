// Owner-library benchmark: what asking "is this owned group empty?" costs with many owned groups
// (100, 1,000), as leash/mcp asks it while a server's wrapper has exited or close() waits.
//   live leaders  one pass of ownedGroupIsEmpty over every group whose leader runs;
//   leaderless    one pass over groups whose leader exited (a member lives on): synchronously,
//                 and through ownedGroupIsEmptySoon (every check of the pass shares one sliced scan);
// each with the longest event-loop stall of the pass. Bystanders give /proc a realistic size.
// Usage: node dist/bench/owner-empty-checks.js [--others N]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import * as owner from '../src/owner/owned-groups.js';
import { listPids } from '../src/sys/procfs.js';
import { signalGroup } from '../src/sys/processes.js';
import { waitUntil } from '../src/sys/wait.js';
import { timedWithStall as timed } from './lib/event-loop-stall.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const othersAt = process.argv.indexOf('--others');
const OTHERS = othersAt >= 0 ? Number(process.argv[othersAt + 1]) : 600;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Present from the build that added it; the bench also runs against older builds, side by side. */
const isEmptySoon = (owner as Partial<{ ownedGroupIsEmptySoon: (pgid: number) => Promise<boolean> }>).ownedGroupIsEmptySoon;


const exitOf = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));

let others: ChildProcess | undefined;
const groups: ChildProcess[] = [];
const rows: Array<{ groups: number; kind: string; how: string; totalMs: number; stallMs: number; processes: number }> = [];
try {
  // detached-spawn: ok — the bench ends this group with killpg in the finally block.
  others = spawn('sh', ['-c', `i=0; while [ $i -lt ${OTHERS} ]; do sleep 1000 & i=$((i+1)); done; echo ready; wait`], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve) => others!.stdout!.once('data', () => resolve()));
  for (const count of [100, 1000]) {
    for (const kind of ['live leaders', 'leaderless'] as const) {
      const batch = Array.from({ length: count }, () =>
        kind === 'live leaders'
          ? owner.spawnOwned('sleep', ['1000'], { stdio: 'ignore' })
          : owner.spawnOwned('sh', ['-c', 'sleep 1000 & exit 0'], { stdio: 'ignore' }),
      );
      groups.push(...batch);
      if (kind === 'leaderless') await Promise.all(batch.map(exitOf));
      await sleep(1000);
      const processes = listPids().length;
      const pgids = batch.map((child) => child.pid!);
      const sync = await timed(() => {
        for (const pgid of pgids) if (owner.ownedGroupIsEmpty(pgid)) throw new Error(`group ${pgid} empty`);
      });
      rows.push({ groups: count, kind, how: 'ownedGroupIsEmpty', ...sync, processes });
      if (isEmptySoon) {
        const soon = await timed(async () => {
          const answers = await Promise.all(pgids.map((pgid) => isEmptySoon(pgid)));
          if (answers.some(Boolean)) throw new Error('a group was empty');
        });
        rows.push({ groups: count, kind, how: 'ownedGroupIsEmptySoon', ...soon, processes });
      }
      await Promise.all(batch.map((child) => owner.terminateOwned(child.pid!, { graceMs: 1000 })));
    }
  }
  console.log(`load average ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);
  console.log(`${'groups'.padStart(6)}  ${'kind'.padEnd(12)}  ${'call'.padEnd(22)}  ${'one pass'.padStart(10)}  ${'longest stall'.padStart(13)}  processes`);
  for (const row of rows) {
    console.log(
      `${String(row.groups).padStart(6)}  ${row.kind.padEnd(12)}  ${row.how.padEnd(22)}  ${`${row.totalMs.toFixed(1)} ms`.padStart(10)}  ${`${row.stallMs.toFixed(1)} ms`.padStart(13)}  ${row.processes}`,
    );
  }
  mkdirSync(RESULTS, { recursive: true });
  const out = `${RESULTS}owner-empty-checks.json`;
  writeFileSync(out, JSON.stringify({ when: new Date().toISOString(), node: process.version, loadavg: loadavg(), others: OTHERS, rows }, null, 2) + '\n');
  console.log(`wrote ${out}`);
} finally {
  if (others?.pid !== undefined) signalGroup(others.pid, 'SIGKILL');
  await Promise.all(groups.map((child) => owner.terminateOwned(child.pid!, { graceMs: 0 })));
  if (others) await waitUntil(() => others!.exitCode !== null || others!.signalCode !== null, 10_000);
}
