// Side-by-side teardown of `leash run` builds: a 200-process tree (the runner and 199 sleepers that
// honour SIGTERM), the runner SIGKILLed, time until every process of the tree is dead, and leash's
// CPU (all threads, schedstat) from the SIGKILL to its exit. Rounds alternate between the builds, so
// a loaded machine weighs on each alike (bench/run.ts measures one build against the killpg floor).
//   LEASH_BENCH_CLIS="before=/path/a/bin/leash.js,after=/path/b/bin/leash.js" node dist/bench/run-teardown-ab.js
// Run: npm run build && node dist/bench/run-teardown-ab.js   (not part of npm test)
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isProcessAlive } from '../src/sys/processes.js';
import { readChildren, readCommandLine, readProcStat } from '../src/sys/procfs.js';
import { walkDescendants } from '../src/sys/tree.js';
import { waitUntil } from '../src/sys/wait.js';

const CLI = fileURLToPath(new URL('../../bin/leash.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const TREE_SIZE = 200;
const ROUNDS = Number(process.env.LEASH_BENCH_ROUNDS ?? 11);
const TREE = `i=1; while [ $i -lt ${TREE_SIZE} ]; do sleep 600 & i=$((i+1)); done; wait`;

const builds: Array<[string, string]> = (process.env.LEASH_BENCH_CLIS ?? `this=${CLI}`)
  .split(',')
  .map((item) => item.split('=') as [string, string]);

function cpuNs(pid: number): number {
  let total = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // a thread that just ended
      }
    }
  } catch {
    return NaN;
  }
  return total;
}

interface Round {
  build: string;
  emptyMs: number;
  leashCpuMs: number;
  load: number;
}

async function round(build: string, cli: string): Promise<Round> {
  const leash = spawn(process.execPath, [cli, 'run', '-q', '--', 'sh', '-c', TREE], {
    stdio: 'ignore',
    env: { ...process.env, LEASH_GRACE_SECONDS: '10', LEASH_STATE_PATH: '' },
  });
  const pid = leash.pid as number;
  const exitedAt = new Promise<void>((resolve) => leash.once('exit', () => resolve()));
  if (!(await waitUntil(() => walkDescendants(pid).size >= TREE_SIZE + 1, 30_000))) throw new Error('the tree never grew');
  const runner = (readChildren(pid) ?? []).find((child) => !(readCommandLine(child) ?? []).includes('--owner-token')) as number;
  const guard = (readChildren(pid) ?? []).find((child) => (readCommandLine(child) ?? []).includes('--owner-token'));
  // Neither the guard nor its watchdog (its child): they end after leash, and are no part of the tree.
  let left = [...walkDescendants(pid).values()].filter((stat) => stat.pid !== guard && stat.ppid !== guard).map((stat) => ({ pid: stat.pid, start: stat.startTime }));
  // Let leash's sweep settle to its quiet pace, as an established tree's would be.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const cpu0 = cpuNs(pid);
  const t0 = performance.now();
  process.kill(runner, 'SIGKILL');
  for (;;) {
    left = left.filter(({ pid: p, start }) => isProcessAlive(p, start));
    if (left.length === 0) break;
    if (performance.now() - t0 > 30_000) throw new Error('the tree outlived 30 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
  const emptyMs = performance.now() - t0;
  // CPU up to leash's exit: read it while the process is a zombie-to-be, just before.
  let cpu1 = cpu0;
  while (readProcStat(pid) && readProcStat(pid)?.state !== 'Z') {
    const now = cpuNs(pid);
    if (Number.isFinite(now)) cpu1 = now;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await exitedAt;
  return { build, emptyMs, leashCpuMs: (cpu1 - cpu0) / 1e6, load: loadavg()[0] as number };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main(): Promise<void> {
  const load0 = loadavg()[0] as number;
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    // Alternate which build goes first.
    const order = i % 2 === 0 ? builds : [...builds].reverse();
    for (const [build, cli] of order) rounds.push(await round(build, cli));
  }
  const load1 = loadavg()[0] as number;
  console.log(`teardown A/B: ${TREE_SIZE}-process tree, runner SIGKILLed, ${ROUNDS} interleaved rounds per build, load average ${load0.toFixed(1)} → ${load1.toFixed(1)}`);
  console.log('| build | runner SIGKILL → empty tree, median (min–max) ms | leash CPU, SIGKILL → its exit, median ms |');
  console.log('|---|---|---|');
  const summary: Record<string, unknown> = {};
  for (const [build] of builds) {
    const mine = rounds.filter((r) => r.build === build);
    const empty = mine.map((r) => r.emptyMs);
    const row = { emptyMs: median(empty), minMs: Math.min(...empty), maxMs: Math.max(...empty), leashCpuMs: median(mine.map((r) => r.leashCpuMs)) };
    summary[build] = row;
    console.log(`| ${build} | ${row.emptyMs.toFixed(1)} (${row.minMs.toFixed(1)}–${row.maxMs.toFixed(1)}) | ${row.leashCpuMs.toFixed(1)} |`);
  }
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(`${RESULTS}run-teardown-ab.json`, `${JSON.stringify({ tree: TREE_SIZE, load: [load0, load1], summary, rounds }, null, 2)}\n`);
}

await main();
