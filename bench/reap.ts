// `leash reap` scan speed on a crowded machine: the bench raises the machine to at least 1,000
// processes and 10,000 open descriptors with marked `sleep` processes (some of them leaked
// trees: orphans whose stdin pipe lost its writer; some idle pipelines whose writer lives),
// times full scans in-process (wall and CPU: the scan is synchronous, one core) and the whole
// CLI pinned to one core, checks that exactly the planted leaks are found, then ends everything.
// Usage: node dist/bench/reap.js [--processes N] [--fds N] [--leaks N] [--runs N]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanLeakedTrees } from '../src/reap/scan.js';
import { loadNative } from '../src/sys/native.js';
import { findEnvironmentCarriers, isProcessAlive, signalProcess } from '../src/sys/processes.js';
import { listFds } from '../src/sys/fds.js';
import { listPids } from '../src/sys/procfs.js';
import { readUnixSockets } from '../src/sys/unix-sockets.js';
import { waitUntil } from '../src/sys/wait.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO, 'bin/leash.js');

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
const targetProcesses = option('--processes', 1000);
const targetFds = option('--fds', 10_000);
const leaks = option('--leaks', 40);
const runs = option('--runs', 15);
const mark = `b${randomBytes(6).toString('hex')}`;
const marker = `leash-reap-bench-${mark}`;
const env = { ...process.env, LEASH_BENCH_MARK: mark };
const markEntry = `LEASH_BENCH_MARK=${mark}`;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

function machineLoad(): { processes: number; fds: number } {
  let fds = 0;
  const pids = listPids();
  for (const pid of pids) fds += listFds(pid)?.length ?? 0;
  return { processes: pids.length, fds };
}

function sh(script: string): void {
  // Its own session: leash reap never judges the caller's session.
  // detached-spawn: ok — the bench plants leaks on purpose, marked, and ends every one of them.
  const result = spawnSync('setsid', ['sh', '-c', script], { env, stdio: 'ignore', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`sh failed: ${script}`);
}

const children: ChildProcess[] = [];
async function cleanup(): Promise<void> {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (let round = 0; round < 5; round += 1) {
    const left = findEnvironmentCarriers(markEntry);
    if (left.length === 0) break;
    for (const { pid } of left) signalProcess(pid, 'SIGKILL');
    await waitUntil(() => left.every(({ pid }) => !isProcessAlive(pid)), 5000);
  }
}

async function main(): Promise<void> {
  await loadNative();
  const before = machineLoad();
  // Planted leaks, made the way they happen: a writer that is gone, a parent that is gone.
  // The pipelines' writers stay alive and idle: their readers look orphaned but are not leaked.
  const pipelines = Math.max(1, Math.floor(leaks / 2));
  sh(`i=0; while [ $i -lt ${leaks} ]; do true | sh -c 'sleep 3600; :' ${marker} >/dev/null 2>&1 & i=$((i+1)); done`);
  sh(`i=0; while [ $i -lt ${pipelines} ]; do sleep 3600 </dev/null | sh -c 'sleep 3600; :' ${marker}-control >/dev/null 2>&1 & i=$((i+1)); done`);
  // Bulk: plain sleeps holding extra descriptors (/dev/null), until both targets are met.
  const planted = 2 * leaks + 3 * pipelines;
  // A margin (other users' processes come and go meanwhile), and never fewer than 200, so
  // that the descriptor target is met even on a machine already busy with processes.
  const bulk = Math.max(200, targetProcesses - before.processes - planted + 25);
  const nullFd = openSync('/dev/null', 'r');
  const perProcess = Math.max(3, Math.ceil((targetFds + 500 - before.fds - planted * 3) / bulk) - 3);
  for (let i = 0; i < bulk; i += 1) {
    const child = spawn('sleep', ['3600'], { env, stdio: ['ignore', 'ignore', 'ignore', ...Array(perProcess).fill(nullFd)] });
    child.on('error', () => {});
    children.push(child);
  }
  closeSync(nullFd);
  await waitUntil(() => findEnvironmentCarriers(markEntry).length >= bulk + planted, 60_000);
  const load = machineLoad();

  const wall: number[] = [];
  const cpu: number[] = [];
  let found = 0;
  let fdsSeen = 0;
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    const usage = process.cpuUsage();
    const result = scanLeakedTrees(readUnixSockets());
    const spent = process.cpuUsage(usage);
    wall.push(performance.now() - started);
    cpu.push((spent.user + spent.system) / 1000);
    found = result.trees.filter((tree) => tree.command.endsWith(marker)).length;
    const falsePositives = result.trees.filter((tree) => tree.command.includes(`${marker}-control`)).length;
    if (falsePositives > 0) throw new Error(`${falsePositives} idle-writer controls were listed`);
    fdsSeen = result.fdsSeen;
  }

  // The whole command, pinned to one core: node start-up, koffi, scan, JSON out.
  const cliWall: number[] = [];
  const cliCpu: number[] = [];
  const pin = spawnSync('taskset', ['--version']).status === 0 ? ['taskset', '-c', '0'] : [];
  // GNU time reports the command's own CPU seconds (user, system): what one core spends on it.
  const timer = spawnSync('/usr/bin/time', ['-f', '%U', 'true']).status === 0 ? ['/usr/bin/time', '-f', 'leash-bench-cpu %U %S'] : [];
  for (let run = 0; run < 5; run += 1) {
    const started = performance.now();
    const argv = [...timer, ...pin, process.execPath, CLI, 'reap', '--json', '--match', `${marker}$`];
    const result = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 60_000 });
    cliWall.push(performance.now() - started);
    if (result.status !== 1) throw new Error(`leash reap exited ${result.status}: ${result.stderr}`);
    const cpuLine = /leash-bench-cpu ([0-9.]+) ([0-9.]+)/.exec(result.stderr);
    if (cpuLine) cliCpu.push((Number(cpuLine[1]) + Number(cpuLine[2])) * 1000);
  }

  // Ending them: the CLI's --kill on exactly the planted leaks.
  const killStarted = performance.now();
  const killed = spawnSync(process.execPath, [CLI, 'reap', '--json', '--kill', '--grace', '5s', '--match', `${marker}$`], { encoding: 'utf8', timeout: 120_000 });
  const killMs = performance.now() - killStarted;
  const after = JSON.parse(killed.stdout) as { trees: Array<{ kill: { result: string } }> };
  const ended = after.trees.filter((tree) => tree.kill.result === 'ended').length;

  const row = {
    processes: load.processes,
    fds: load.fds,
    fdsScanned: fdsSeen,
    plantedLeaks: leaks,
    found,
    idleWriterControls: pipelines,
    scanWallMs: { p50: percentile(wall, 50), p90: percentile(wall, 90), min: Math.min(...wall) },
    scanCpuMs: { p50: percentile(cpu, 50), p90: percentile(cpu, 90) },
    cliWallMs: { p50: percentile(cliWall, 50), min: Math.min(...cliWall), pinned: pin.length > 0 },
    cliCpuMs: cliCpu.length > 0 ? { p50: percentile(cliCpu, 50), min: Math.min(...cliCpu) } : null,
    killAllMs: Math.round(killMs),
    ended,
  };
  console.log(`machine: ${load.processes} processes, ${load.fds} open descriptors (${fdsSeen} read by the scan); ${leaks} planted leaks, ${pipelines} idle-writer controls`);
  console.log('| measure | p50 | p90 / min | target |');
  console.log('|---|---|---|---|');
  console.log(`| scan, in-process wall | ${row.scanWallMs.p50.toFixed(1)} ms | ${row.scanWallMs.p90.toFixed(1)} ms | ≤ 300 ms |`);
  console.log(`| scan, in-process CPU (one thread) | ${row.scanCpuMs.p50.toFixed(1)} ms | ${row.scanCpuMs.p90.toFixed(1)} ms | ≤ 300 ms |`);
  console.log(`| \`leash reap --json\`, whole command${pin.length ? ', taskset -c 0' : ''} | ${row.cliWallMs.p50.toFixed(0)} ms | min ${row.cliWallMs.min.toFixed(0)} ms | |`);
  if (row.cliCpuMs) console.log(`| \`leash reap --json\`, whole command, CPU (user + system) | ${row.cliCpuMs.p50.toFixed(0)} ms | min ${row.cliCpuMs.min.toFixed(0)} ms | ≤ 300 ms |`);
  console.log(`| \`--kill\` of ${leaks} trees (grace 5 s, sleep leaves on TERM) | ${row.killAllMs} ms | | |`);
  console.log(`found ${found}/${leaks} planted leaks, 0 controls; --kill ended ${ended}/${leaks}`);
  mkdirSync(join(REPO, 'bench/results'), { recursive: true });
  writeFileSync(join(REPO, 'bench/results/reap.json'), `${JSON.stringify({ node: process.version, runs, ...row }, null, 2)}\n`);
  if (found !== leaks || ended !== leaks) process.exitCode = 1;
}

try {
  await main();
} finally {
  await cleanup();
}
