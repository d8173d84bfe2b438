// Side-by-side teardown of `leash run` builds: a 200-process tree (the runner and 199 sleepers that
// honour SIGTERM), the runner SIGKILLed, time until every process of the tree is dead (zombies
// count as dead), the first death, and leash's CPU (all threads, schedstat) from the SIGKILL to the
// empty tree and to its exit. Rounds alternate between the builds, so a loaded machine weighs on
// each alike; each round ends with the killpg floor (200 sleepers, one killpg, the same detector).
// Whatever containment the environment gives (LEASH_CONTAINMENT: contained as root here).
//   LEASH_BENCH_CLIS="before=/path/a/bin/leash.js,after=/path/b/bin/leash.js" node dist/bench/run-teardown-ab.js
// Run: npm run build && node dist/bench/run-teardown-ab.js   (not part of npm test)
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isProcessAlive, signalGroup } from '../src/sys/processes.js';
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
  firstDeathMs: number;
  /** leash's CPU from the SIGKILL to the empty tree, and to its exit (NaN for the floor). */
  leashCpuToEmptyMs: number;
  leashCpuMs: number;
  load: number;
}

const isGuard = (pid: number) => {
  const command = readCommandLine(pid) ?? [];
  return command.includes('--owner-token') || command.includes('leash-guard');
};

/** Until every listed process is dead, checking on every turn of the loop: [first death, all dead] in ms after t0. */
async function deaths(list: Array<{ pid: number; start: number }>, t0: number): Promise<[number, number]> {
  let left = list;
  let first = NaN;
  for (;;) {
    left = left.filter(({ pid: p, start }) => isProcessAlive(p, start));
    if (left.length < list.length && Number.isNaN(first)) first = performance.now() - t0;
    if (left.length === 0) return [first, performance.now() - t0];
    if (performance.now() - t0 > 30_000) throw new Error('the tree outlived 30 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The floor: 200 sleepers (a shell and 199 children) in a group of their own, one killpg. */
async function floor(): Promise<Round> {
  // detached-spawn: ok — the floor's group is ended by this bench, by its pid.
  const group = spawn('sh', ['-c', TREE], { stdio: 'ignore', detached: true });
  const pgid = group.pid as number;
  try {
    if (!(await waitUntil(() => walkDescendants(pgid).size >= TREE_SIZE - 1, 30_000))) throw new Error('the floor never grew');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const list = [pgid, ...walkDescendants(pgid).keys()].map((pid) => ({ pid, start: readProcStat(pid)?.startTime ?? -1 }));
    const t0 = performance.now();
    signalGroup(pgid, 'SIGTERM');
    const [firstDeathMs, emptyMs] = await deaths(list, t0);
    return { build: 'killpg floor', emptyMs, firstDeathMs, leashCpuToEmptyMs: NaN, leashCpuMs: NaN, load: loadavg()[0] as number };
  } finally {
    signalGroup(pgid, 'SIGKILL');
  }
}

async function round(build: string, cli: string): Promise<Round> {
  const leash = spawn(process.execPath, [cli, 'run', '-q', '--', 'sh', '-c', TREE], {
    stdio: 'ignore',
    env: { ...process.env, LEASH_GRACE_SECONDS: '10', LEASH_STATE_PATH: '' },
  });
  const pid = leash.pid as number;
  const exitedAt = new Promise<void>((resolve) => leash.once('exit', () => resolve()));
  if (!(await waitUntil(() => walkDescendants(pid).size >= TREE_SIZE + 1, 30_000))) throw new Error('the tree never grew');
  const runner = (readChildren(pid) ?? []).find((child) => !isGuard(child)) as number;
  const guard = (readChildren(pid) ?? []).find(isGuard);
  // Neither the guard nor its watchdog (its child): they end after leash, and are no part of the tree.
  const tree = [...walkDescendants(pid).values()].filter((stat) => stat.pid !== guard && stat.ppid !== guard).map((stat) => ({ pid: stat.pid, start: stat.startTime }));
  // Let leash's sweep settle to its quiet pace, as an established tree's would be.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const cpu0 = cpuNs(pid);
  const t0 = performance.now();
  process.kill(runner, 'SIGKILL');
  const [firstDeathMs, emptyMs] = await deaths(tree, t0);
  const cpuAtEmpty = cpuNs(pid);
  // CPU up to leash's exit: read it while the process is a zombie-to-be, just before.
  let cpu1 = cpu0;
  while (readProcStat(pid) && readProcStat(pid)?.state !== 'Z') {
    const now = cpuNs(pid);
    if (Number.isFinite(now)) cpu1 = now;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await exitedAt;
  return { build, emptyMs, firstDeathMs, leashCpuToEmptyMs: (cpuAtEmpty - cpu0) / 1e6, leashCpuMs: (cpu1 - cpu0) / 1e6, load: loadavg()[0] as number };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main(): Promise<void> {
  const load0 = loadavg()[0] as number;
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    // Alternate which build goes first.
    const order = i % 2 === 0 ? builds : [...builds].reverse();
    for (const [build, cli] of order) rounds.push(await round(build, cli));
    rounds.push(await floor());
  }
  const load1 = loadavg()[0] as number;
  console.log(`teardown A/B: ${TREE_SIZE}-process tree, runner SIGKILLed, ${ROUNDS} interleaved rounds per build, load average ${load0.toFixed(1)} → ${load1.toFixed(1)}`);
  console.log('| build | runner SIGKILL (floor: killpg) → empty tree, median (min–max) ms | / floor, median of paired rounds | first death, median ms | leash CPU to empty / to its exit, median ms |');
  console.log('|---|---|---|---|---|');
  const summary: Record<string, unknown> = {};
  const floors = rounds.filter((r) => r.build === 'killpg floor');
  for (const build of [...builds.map(([name]) => name), 'killpg floor']) {
    const mine = rounds.filter((r) => r.build === build);
    const empty = mine.map((r) => r.emptyMs);
    const row = {
      emptyMs: median(empty),
      minMs: Math.min(...empty),
      maxMs: Math.max(...empty),
      pairedRatio: median(mine.map((r, i) => r.emptyMs / (floors[i]?.emptyMs ?? NaN))),
      firstDeathMs: median(mine.map((r) => r.firstDeathMs)),
      leashCpuToEmptyMs: median(mine.map((r) => r.leashCpuToEmptyMs)),
      leashCpuMs: median(mine.map((r) => r.leashCpuMs)),
    };
    summary[build] = row;
    console.log(`| ${build} | ${row.emptyMs.toFixed(1)} (${row.minMs.toFixed(1)}–${row.maxMs.toFixed(1)}) | ${row.pairedRatio.toFixed(2)}× | ${row.firstDeathMs.toFixed(1)} | ${row.leashCpuToEmptyMs.toFixed(1)} / ${row.leashCpuMs.toFixed(1)} |`);
  }
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(`${RESULTS}run-teardown-ab.json`, `${JSON.stringify({ tree: TREE_SIZE, load: [load0, load1], summary, rounds }, null, 2)}\n`);
}

await main();
