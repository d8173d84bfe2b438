// `leash run` contained in a cgroup v2 against the process-tree design (LEASH_CONTAINMENT=tree),
// side by side in one run, on issue 19's targets: runner SIGKILL -> 200-process tree empty against
// the killpg floor (same detector, alternating rounds); leash's CPU over 10 s idle with a
// 200-process tree and 500 other processes, against the reference poller (all of /proc every
// 100 ms); private memory of leash run plus its guard. Needs a usable cgroup (root here).
// What each teardown figure counts, from the bench's own signal to the last death (a zombie counts
// as dead: nobody's reaping is in either figure), with the same detector (the stat of every listed
// process still alive, read on every turn of the bench's loop, which keeps one CPU busy on both
// sides): leash, the bench's SIGKILL of the runner, the runner's death, leash's wake-up, its stop
// signal and the deaths of the 199 other members (leash reaps them afterwards); the floor, one
// killpg(SIGTERM) of a shell and its 199 sleepers (the shell dies too, so pid 1 reaps them
// afterwards). The floor has no wake-up to pay: it is what a supervisor that was already running
// the kill would get. Both trees are left to settle 1 s before the signal.
// Run: npm run build && node dist/bench/run-cgroup.js   (not part of npm test)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readChildren, readCommandLine, readProcStat, scanAllStats } from '../src/sys/procfs.js';
import { isProcessAlive, signalGroup } from '../src/sys/processes.js';
import { readProcessMemory } from '../src/sys/process-memory.js';
import { walkDescendants } from '../src/sys/tree.js';
import { waitUntil } from '../src/sys/wait.js';
import { endStarted } from './lib/end-started.js';

const CLI = fileURLToPath(new URL('../../bin/leash.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const TREE_SIZE = 200;
const BYSTANDERS = 500;
const IDLE_MS = 10_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TICK_MS = 10;
const TREE = `i=1; while [ $i -lt ${TREE_SIZE} ]; do sleep 600 & i=$((i+1)); done; wait`;
const LANES = { contained: 'auto', tree: 'tree' } as const;
type Lane = keyof typeof LANES;

const REFERENCE_LOOP = `
const { readdirSync, readFileSync } = require('fs');
setInterval(() => {
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    try { readFileSync('/proc/' + name + '/stat', 'latin1'); } catch {}
  }
}, 100);`;

interface Run {
  child: ChildProcess;
  stderr: () => string;
}

function startRun(lane: Lane): Run {
  const child = spawn(process.execPath, [CLI, 'run', '--', 'sh', '-c', TREE], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LEASH_GRACE_SECONDS: '10', LEASH_STATE_PATH: '', LEASH_CONTAINMENT: LANES[lane] },
  });
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (err += text));
  return { child, stderr: () => err };
}

const isGuard = (pid: number) => {
  const command = readCommandLine(pid) ?? [];
  return command.includes('--owner-token') || command.includes('leash-guard');
};
const guardOf = (leashPid: number) => (readChildren(leashPid) ?? []).find(isGuard);
const runnerOf = (leashPid: number) => (readChildren(leashPid) ?? []).find((pid) => !isGuard(pid));

/** The command's processes: the run's cgroup members (contained), else its descendants less the guard and its watchdog. */
function treeOf(run: Run): number[] {
  const cgroup = /containment: cgroup v2 \((.+)\)$/m.exec(run.stderr())?.[1];
  if (cgroup) return readFileSync(join(cgroup, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  const guard = guardOf(run.child.pid as number);
  return [...walkDescendants(run.child.pid as number).values()]
    .filter((stat) => stat.pid !== guard && stat.ppid !== guard)
    .map((stat) => stat.pid);
}

async function fullTree(run: Run): Promise<void> {
  if (!(await waitUntil(() => /phase=running/.test(run.stderr()) && treeOf(run).length >= TREE_SIZE, 30_000))) {
    throw new Error(`tree never reached ${TREE_SIZE}: ${run.stderr()}`);
  }
}

const cpuMs = (pid: number) => (readProcStat(pid)?.cpuTicks ?? NaN) * TICK_MS;
const identitiesOf = (pids: number[]) => pids.map((pid) => ({ pid, start: readProcStat(pid)?.startTime }));
const range = (values: number[]) => `${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)}`;
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** Until every listed process is dead (zombies count), checking on every turn of the loop. */
async function allDead(identities: Array<{ pid: number; start: number | undefined }>, t0: number): Promise<number> {
  let left = identities;
  const deadline = t0 + 20_000;
  while (left.length > 0) {
    if (performance.now() > deadline) throw new Error(`${left.length} processes outlived the teardown`);
    left = left.filter(({ pid, start }) => isProcessAlive(pid, start));
    if (left.length > 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const started: ChildProcess[] = [];
  const floorGroups: number[] = [];
  const results: Record<string, unknown> = { tree: TREE_SIZE, bystanders: BYSTANDERS, idle_ms: IDLE_MS, rounds: ROUNDS };
  const loadStart = loadavg()[0] as number;
  try {
    for (let i = 0; i < BYSTANDERS; i += 1) started.push(spawn('sleep', ['600'], { stdio: 'ignore' }));
    results.processes_on_machine = scanAllStats().length;
    const runs = { contained: startRun('contained'), tree: startRun('tree') };
    for (const run of Object.values(runs)) started.push(run.child);
    for (const run of Object.values(runs)) await fullTree(run);
    if (!/containment: cgroup v2/.test(runs.contained.stderr())) throw new Error(`no cgroup here: ${runs.contained.stderr()}`);
    const reference = spawn(process.execPath, ['-e', REFERENCE_LOOP], { stdio: 'ignore' });
    started.push(reference);
    // Past the young tree's 200 ms sweeps (tree lane): the quiet pace is what is measured.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const pids = { contained: runs.contained.child.pid as number, tree: runs.tree.child.pid as number, reference: reference.pid as number };
    const before = { contained: cpuMs(pids.contained), tree: cpuMs(pids.tree), reference: cpuMs(pids.reference) };
    const loadBefore = loadavg()[0];
    results.loadavg_at_start = loadStart;
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idle = {
      contained: cpuMs(pids.contained) - before.contained,
      tree: cpuMs(pids.tree) - before.tree,
      reference: cpuMs(pids.reference) - before.reference,
    };
    // A second window, past V8's one-time memory-reducer collection (about 8 s after a Node
    // process starts, measured with strace: the only work an idle contained leash does): the
    // steady state, which is what a server wrapped for hours costs.
    const mid = { contained: cpuMs(pids.contained), tree: cpuMs(pids.tree), reference: cpuMs(pids.reference) };
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const steady = {
      contained: cpuMs(pids.contained) - mid.contained,
      tree: cpuMs(pids.tree) - mid.tree,
      reference: cpuMs(pids.reference) - mid.reference,
    };
    reference.kill('SIGKILL');
    results.idle_cpu_ms = idle;
    results.steady_idle_cpu_ms = steady;
    results.loadavg_idle = [loadBefore, loadavg()[0]];

    const memory: Record<string, { leash_kb?: number; guard_kb?: number }> = {};
    for (const lane of Object.keys(runs) as Lane[]) {
      const pid = pids[lane];
      const guard = guardOf(pid);
      memory[lane] = { leash_kb: readProcessMemory(pid)?.privateKb, guard_kb: guard === undefined ? undefined : readProcessMemory(guard)?.privateKb };
    }
    results.memory_private = memory;

    // Runner SIGKILL -> empty tree, both lanes and the floor, alternating.
    const teardown: Record<Lane | 'floor', number[]> = { contained: [], tree: [], floor: [] };
    const current = { ...runs };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const lane of Object.keys(LANES) as Lane[]) {
        if (round > 0) {
          current[lane] = startRun(lane);
          started.push(current[lane].child);
          await fullTree(current[lane]);
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const run = current[lane];
        const runner = runnerOf(run.child.pid as number) as number;
        const tree = identitiesOf(treeOf(run).filter((pid) => pid !== runner));
        const t0 = performance.now();
        process.kill(runner, 'SIGKILL');
        teardown[lane].push(await allDead(tree, t0));
        await new Promise((resolve) => run.child.exitCode === null ? run.child.once('exit', resolve) : resolve(undefined));
      }
      // detached-spawn: ok — the floor's group is ended by this bench, by its pid.
      const group = spawn('sh', ['-c', TREE], { stdio: 'ignore', detached: true });
      started.push(group);
      floorGroups.push(group.pid as number);
      await waitUntil(() => walkDescendants(group.pid as number).size >= TREE_SIZE - 1, 30_000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const members = identitiesOf([group.pid as number, ...walkDescendants(group.pid as number).keys()]);
      const t1 = performance.now();
      signalGroup(group.pid as number, 'SIGTERM');
      teardown.floor.push(await allDead(members, t1));
    }
    results.runner_kill_to_empty_ms = teardown;

    const kb = (value: number | undefined) => (value === undefined ? '?' : `${(value / 1024).toFixed(1)} MB`);
    const rows: Array<[string, string]> = [
      ['processes on the machine', String(results.processes_on_machine)],
      [`leash CPU over ${IDLE_MS / 1000} s idle, contained / process tree`, `${idle.contained.toFixed(0)} / ${idle.tree.toFixed(0)} ms`],
      ['reference poller (all of /proc every 100 ms), same 10 s', `${idle.reference.toFixed(0)} ms`],
      ['idle CPU / reference: contained / process tree', `${(idle.contained / idle.reference).toFixed(4)}x / ${(idle.tree / idle.reference).toFixed(4)}x`],
      [`the next ${IDLE_MS / 1000} s (steady: past V8's post-start collection), contained / process tree / reference`, `${steady.contained.toFixed(0)} / ${steady.tree.toFixed(0)} / ${steady.reference.toFixed(0)} ms`],
      ['steady idle CPU / reference: contained / process tree', `${(steady.contained / steady.reference).toFixed(4)}x / ${(steady.tree / steady.reference).toFixed(4)}x`],
      ['runner SIGKILL -> empty tree, contained (median)', `${median(teardown.contained).toFixed(1)} ms`],
      ['runner SIGKILL -> empty tree, process tree (median)', `${median(teardown.tree).toFixed(1)} ms`],
      ['reference: killpg of 200 sleepers -> all dead (median)', `${median(teardown.floor).toFixed(1)} ms`],
      ['runner SIGKILL -> empty tree, contained / process tree / floor (min-max)', ['contained', 'tree', 'floor'].map((lane) => range(teardown[lane as Lane | 'floor'])).join(' / ')],
      ['contained / floor (medians; median of paired rounds)', `${(median(teardown.contained) / median(teardown.floor)).toFixed(2)}x; ${median(teardown.contained.map((ms, i) => ms / (teardown.floor[i] as number))).toFixed(2)}x`],
      ['process tree / floor (medians; median of paired rounds)', `${(median(teardown.tree) / median(teardown.floor)).toFixed(2)}x; ${median(teardown.tree.map((ms, i) => ms / (teardown.floor[i] as number))).toFixed(2)}x`],
      ['private memory contained: leash run / shell guard / both', `${kb(memory.contained?.leash_kb)} / ${kb(memory.contained?.guard_kb)} / ${kb((memory.contained?.leash_kb ?? NaN) + (memory.contained?.guard_kb ?? NaN))}`],
      ['private memory process tree: leash run / node guard / both', `${kb(memory.tree?.leash_kb)} / ${kb(memory.tree?.guard_kb)} / ${kb((memory.tree?.leash_kb ?? NaN) + (memory.tree?.guard_kb ?? NaN))}`],
    ];
    console.log(`load average ${loadStart.toFixed(2)} at the start, ${loadavg().map((value) => value.toFixed(2)).join(' ')} at the end (${results.loadavg_idle} during the idle window)`);
    for (const [label, value] of rows) console.log(`${label.padEnd(72)} ${value}`);
    results.loadavg_at_end = loadavg();
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(`${RESULTS}run-cgroup.json`, JSON.stringify(results, null, 2) + '\n');
  } finally {
    await endStarted(started, floorGroups);
  }
}

await main();
