// `leash reap` scan speed on a crowded machine: the bench raises the machine to at least 1,000
// processes and 10,000 open descriptors with marked `sleep` processes (some of them leaked
// trees: orphans whose stdin pipe lost its writer; some idle pipelines whose writer lives),
// times full scans in-process (wall and CPU: the scan is synchronous, one core) and the whole
// CLI pinned to one core, checks that exactly the planted leaks are found, then ends everything.
// A few leaks carry a leash owner token (no supervisor), so the supervisor search runs too.
// With --compare DIR (the dist/ of another build: DIR/src/reap/scan.js), the two builds' scans
// run interleaved on the same machine, A then B then B then A..., with their /proc/<pid>/cmdline
// reads counted: a side-by-side comparison a loaded machine does not skew one way.
// Usage: node dist/bench/reap.js [--processes N] [--fds N] [--leaks N] [--runs N] [--compare DIR]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs, { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { scanLeakedTrees } from '../src/reap/scan.js';
import { loadNative } from '../src/sys/native.js';
import { findEnvironmentCarriers, isProcessAlive, signalProcess } from '../src/sys/processes.js';
import { listFdsOrWhy } from '../src/sys/fds.js';
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
const tokenLeaks = option('--token-leaks', 5);
const compareAt = process.argv.indexOf('--compare');
const compareDir = compareAt >= 0 ? resolve(process.argv[compareAt + 1]!) : undefined;

// Counts /proc/<pid>/cmdline reads: every module's named import of readFileSync sees the wrapper.
let cmdlineReads = 0;
const cmdlinePaths = new Set<string>();
const realReadFileSync = fs.readFileSync;
fs.readFileSync = ((path: unknown, ...rest: unknown[]) => {
  if (typeof path === 'string' && path.endsWith('/cmdline')) {
    cmdlineReads += 1;
    cmdlinePaths.add(path);
  }
  return (realReadFileSync as (...args: unknown[]) => unknown)(path, ...rest);
}) as typeof fs.readFileSync;
syncBuiltinESMExports();
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
  for (const pid of pids) {
    const open = listFdsOrWhy(pid);
    if (typeof open !== 'string') fds += open.length;
  }
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
  // Leaked by a leash owner whose supervisor is gone: stdio /dev/null, only the token tells.
  sh(`i=0; while [ $i -lt ${tokenLeaks} ]; do LEASH_OWNER_TOKEN=${mark}$i sh -c 'sleep 3600; :' ${marker}-token </dev/null >/dev/null 2>&1 & i=$((i+1)); done`);
  // Bulk: plain sleeps holding extra descriptors (/dev/null), until both targets are met.
  const planted = 2 * leaks + 3 * pipelines + 2 * tokenLeaks;
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

  type Scan = typeof scanLeakedTrees;
  interface Build {
    name: string;
    scan: Scan;
    wall: number[];
    cpu: number[];
    cmdlineReads: number[];
    /** Reads of a process's cmdline beyond its first, in one scan. */
    cmdlineRereads: number[];
  }
  const builds: Build[] = [{ name: 'this build', scan: scanLeakedTrees, wall: [], cpu: [], cmdlineReads: [], cmdlineRereads: [] }];
  if (compareDir) {
    const other = (await import(pathToFileURL(join(compareDir, 'src/reap/scan.js')).href)) as { scanLeakedTrees: Scan };
    // Its own module instances: its native calls load apart from this build's.
    await ((await import(pathToFileURL(join(compareDir, 'src/sys/native.js')).href)) as { loadNative: () => Promise<boolean> }).loadNative();
    builds.push({ name: compareDir, scan: other.scanLeakedTrees, wall: [], cpu: [], cmdlineReads: [], cmdlineRereads: [] });
  }
  const loadBefore = loadavg()[0]!;
  let found = 0;
  let foundTokens = 0;
  let fdsSeen = 0;
  for (let run = 0; run < runs; run += 1) {
    // ABBA: each build goes first as often as second.
    const order = run % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) {
      const sockets = readUnixSockets();
      cmdlineReads = 0;
      cmdlinePaths.clear();
      const started = performance.now();
      const usage = process.cpuUsage();
      const result = build.scan(sockets);
      const spent = process.cpuUsage(usage);
      build.wall.push(performance.now() - started);
      build.cpu.push((spent.user + spent.system) / 1000);
      build.cmdlineReads.push(cmdlineReads);
      build.cmdlineRereads.push(cmdlineReads - cmdlinePaths.size);
      const mine = result.trees.filter((tree) => tree.command.endsWith(marker)).length;
      const tokens = result.trees.filter((tree) => tree.command.endsWith(`${marker}-token`)).length;
      const falsePositives = result.trees.filter((tree) => tree.command.includes(`${marker}-control`)).length;
      if (falsePositives > 0) throw new Error(`${build.name}: ${falsePositives} idle-writer controls were listed`);
      if (build === builds[0]) {
        found = mine;
        foundTokens = tokens;
        fdsSeen = result.fdsSeen;
      } else if (mine !== found || tokens !== foundTokens) {
        throw new Error(`${build.name} found ${mine} + ${tokens} token leaks, this build ${found} + ${foundTokens}`);
      }
    }
  }
  const loadAfter = loadavg()[0]!;
  const wall = builds[0]!.wall;
  const cpu = builds[0]!.cpu;

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
    plantedTokenLeaks: tokenLeaks,
    foundTokenLeaks: foundTokens,
    loadAverage: { before: loadBefore, after: loadAfter },
    builds: builds.map((build) => ({
      name: build.name,
      scanCpuMs: { p50: percentile(build.cpu, 50), p90: percentile(build.cpu, 90) },
      scanWallMs: { p50: percentile(build.wall, 50), min: Math.min(...build.wall) },
      cmdlineReadsPerScan: percentile(build.cmdlineReads, 50),
      cmdlineRereadsPerScan: percentile(build.cmdlineRereads, 50),
    })),
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
  console.log(`found ${found}/${leaks} planted leaks and ${foundTokens}/${tokenLeaks} token leaks, 0 controls; --kill ended ${ended}/${leaks}`);
  console.log(`load average (1 min) ${loadBefore.toFixed(2)} before the scans, ${loadAfter.toFixed(2)} after`);
  if (builds.length > 1) {
    console.log(`\n${runs} interleaved scans per build (ABBA):`);
    console.log('| build | scan CPU p50 | p90 | wall p50 | /proc/<pid>/cmdline reads per scan (of which re-reads) |');
    console.log('|---|---|---|---|---|');
    for (const build of row.builds) {
      console.log(
        `| ${build.name} | ${build.scanCpuMs.p50.toFixed(1)} ms | ${build.scanCpuMs.p90.toFixed(1)} ms | ${build.scanWallMs.p50.toFixed(1)} ms | ${build.cmdlineReadsPerScan} (${build.cmdlineRereadsPerScan}) |`,
      );
    }
  }
  mkdirSync(join(REPO, 'bench/results'), { recursive: true });
  writeFileSync(join(REPO, 'bench/results/reap.json'), `${JSON.stringify({ node: process.version, runs, ...row }, null, 2)}\n`);
  if (found !== leaks || foundTokens !== tokenLeaks || ended !== leaks) process.exitCode = 1;
}

try {
  await main();
} finally {
  await cleanup();
}
