// What a sub-cgroup made by the command costs `leash run`'s exit: SIGTERM to leash -> leash's
// process exited, contained, with a command whose tree is five sleepers, against the same tree with
// two of them moved into cgroups the command made below leash's (one nested in the other), as a
// container runtime or a nested leash does. Alternating rounds, one run. The target (issue 29):
// the sub-cgroup lane's median <= 1.1x the plain lane's. Needs a usable cgroup (root here).
// Run: npm run build && node dist/bench/run-cgroup-subcgroups.js   (not part of npm test)
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { assessOwnCgroup } from '../src/sys/cgroup.js';
import { loadNative } from '../src/sys/native.js';
import { waitUntil } from '../src/sys/wait.js';

const CLI = fileURLToPath(new URL('../../bin/leash.js', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const LANES = ['plain', 'sub-cgroups'] as const;
type Lane = (typeof LANES)[number];

function treeFor(lane: Lane, mountPoint: string): string {
  const sleepers = 'sleep 600 & sleep 600 & sleep 600 &';
  // The same six processes in both lanes: the runner and five sleepers.
  // detached-spawn: ok — backgrounded under `leash run`, whose cgroup holds them and which this bench stops.
  if (lane === 'plain') return `${sleepers} sleep 600 & sleep 600 & exec sleep 600`;
  const into = (sub: string) => `cg=${mountPoint}$(sed -n 's/^0:://p' /proc/self/cgroup); mkdir -p "$cg/${sub}" && echo $$ > "$cg/${sub}/cgroup.procs"`;
  // detached-spawn: ok — the same tree under `leash run`, two of its sleepers moved below its cgroup.
  return `${sleepers} sh -c '${into('made')}; exec sleep 600' & sh -c '${into('made/below')}; exec sleep 600' & exec sleep 600`;
}

async function oneRound(lane: Lane, mountPoint: string): Promise<number> {
  const child = spawn(process.execPath, [CLI, 'run', '--grace', '5', '--', 'sh', '-c', treeFor(lane, mountPoint)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', LEASH_CONTAINMENT: 'auto' },
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (!(await waitUntil(() => /phase=running/.test(err), 10_000)) || !/containment: cgroup v2/.test(err)) {
    child.kill('SIGKILL');
    throw new Error(`${lane}: not contained and running: ${err}`);
  }
  // Every member in place (the sub-cgroups made), then a quiet moment.
  await new Promise((resolve) => setTimeout(resolve, 400));
  const signalledAt = performance.now();
  child.kill('SIGTERM');
  await exited;
  const ms = performance.now() - signalledAt;
  if (/cannot remove/.test(err)) throw new Error(`${lane}: ${err}`);
  return ms;
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<void> {
  await loadNative();
  const assessment = assessOwnCgroup();
  if (!assessment.usable) {
    console.log(`SKIP: no usable cgroup: ${assessment.reason}`);
    return;
  }
  const mountPoint = assessment.place.mount.mountPoint;
  const times: Record<Lane, number[]> = { plain: [], 'sub-cgroups': [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const lane of round % 2 === 0 ? LANES : [...LANES].reverse()) times[lane].push(await oneRound(lane, mountPoint));
  }
  console.log(`leash run, SIGTERM -> leash exited, ${ROUNDS} alternating rounds a lane, load ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);
  for (const lane of LANES) {
    console.log(`  ${lane.padEnd(12)} median ${quantile(times[lane], 0.5).toFixed(1)} ms, p90 ${quantile(times[lane], 0.9).toFixed(1)} ms`);
  }
  const ratio = quantile(times['sub-cgroups'], 0.5) / quantile(times.plain, 0.5);
  console.log(`  sub-cgroups / plain (medians): ${ratio.toFixed(2)}x (target <= 1.10x)`);
}

await main();
