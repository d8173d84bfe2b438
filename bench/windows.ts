// Benchmark of the Windows owner library, run by the Windows node.exe under Wine:
//   npm run bench:windows   (scripts/test-windows.sh --bench; on Linux this file only says so)
// - owner killed from Linux (kill -9) -> every owned process gone: p50/p90 over trials, timed
//   from the owner's exit as its parent sees it, and from the kill request;
// - spawnOwned over spawn: call -> 'exit' of `cmd.exe /d /c exit 0`, alternating;
// - processes per owner: an owner with one owned child is two processes (no supervisor).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

if (process.platform !== 'win32') {
  console.log('bench/windows: runs under Wine with the Windows node: npm run bench:windows (skipped here)');
  process.exit(0);
}

const helpers = await import('../test/windows/helpers.js');
const { spawnOwned, supervisorPid } = await import('../src/index.js');
const TRIALS = Number(process.env.LEASH_BENCH_TRIALS ?? 15);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`Z:\\proc\\${pid}\\stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
};

// 1. Owner killed -> all owned gone.
const fromExit: number[] = [];
const fromKill: number[] = [];
let treeSize = 0;
for (let trial = 0; trial < TRIALS; trial += 1) {
  const run = helpers.startOwner('detached,cmd,raw', 'wait', 'leash');
  try {
    if (!(await helpers.waitForChildren(run, 5))) throw new Error(`tree did not start: ${run.output()}`);
    const children = helpers.childPids(run);
    treeSize = children.length;
    const owner = helpers.ownerLinuxPid(run);
    if (!owner) throw new Error('owner not visible from Linux');
    const exited = once(run.owner, 'exit').then(() => performance.now());
    const requested = performance.now();
    void helpers.linuxShell(`kill -9 ${owner}`, () => !alive(owner));
    const exitAt = await exited;
    if (!(await helpers.waitUntil(() => children.every((pid) => !alive(pid)), 10_000))) throw new Error('owned processes survived');
    const goneAt = performance.now();
    fromExit.push(goneAt - exitAt);
    fromKill.push(goneAt - requested);
  } finally {
    await helpers.killMarked(run.mark);
  }
}

// 2. spawnOwned over spawn.
const N = Number(process.env.LEASH_BENCH_SPAWNS ?? 30);
const timeOne = async (start: () => ChildProcess) => {
  const began = performance.now();
  const child = start();
  await once(child, 'exit');
  return performance.now() - began;
};
const quick = ['/d', '/c', 'exit 0'];
await timeOne(() => spawnOwned('cmd.exe', quick, { stdio: 'ignore' })); // joins the owner job
await timeOne(() => spawn('cmd.exe', quick, { stdio: 'ignore' }));
const plain: number[] = [];
const owned: number[] = [];
for (let i = 0; i < N; i += 1) {
  if (i % 2 === 0) {
    plain.push(await timeOne(() => spawn('cmd.exe', quick, { stdio: 'ignore' })));
    owned.push(await timeOne(() => spawnOwned('cmd.exe', quick, { stdio: 'ignore' })));
  } else {
    owned.push(await timeOne(() => spawnOwned('cmd.exe', quick, { stdio: 'ignore' })));
    plain.push(await timeOne(() => spawn('cmd.exe', quick, { stdio: 'ignore' })));
  }
}
const overhead = (percentile(owned, 50) / percentile(plain, 50) - 1) * 100;

// 3. Processes per owner.
const solo = helpers.startOwner('detached', 'wait', 'leash');
await helpers.waitForChildren(solo, 1);
const ownerPid = helpers.ownerLinuxPid(solo);
const perOwner = helpers.linuxPidsWith(solo.mark).length;
await helpers.killMarked(solo.mark);

const round = (value: number) => Math.round(value * 10) / 10;
const rows: Array<[string, string, string]> = [
  [`owner kill -9 from Linux -> ${treeSize} owned processes gone, from the owner's exit, p50 / p90 (${TRIALS} trials)`, `${round(percentile(fromExit, 50))} / ${round(percentile(fromExit, 90))} ms`, '<= 1000 ms'],
  ['the same, from the kill request (includes starting the Linux kill)', `${round(percentile(fromKill, 50))} / ${round(percentile(fromKill, 90))} ms`, ''],
  [`spawn -> exit of cmd.exe /c exit 0, p50: spawn / spawnOwned (${N} each)`, `${round(percentile(plain, 50))} / ${round(percentile(owned, 50))} ms (${overhead >= 0 ? '+' : ''}${round(overhead)} %)`, '<= 10 %'],
  ['processes of an owner with one owned child (owner + child; supervisor)', `${perOwner} (${ownerPid ? 'owner seen' : 'owner not seen'}; supervisor: ${supervisorPid() ?? 'none'})`, 'no extra process'],
];
console.log('| what | measured under Wine | target |\n|---|---|---|');
for (const [what, measured, target] of rows) console.log(`| ${what} | ${measured} | ${target} |`);
const results = fileURLToPath(new URL('../../bench/results/', import.meta.url));
mkdirSync(results, { recursive: true });
writeFileSync(`${results}windows.json`, JSON.stringify({
  conditions: { node: process.version, platform: 'win32 under Wine', trials: TRIALS, spawns: N },
  ownerKilledToGoneMs: { fromExit, fromKill, treeSize },
  spawnMs: { plain, owned, overheadPercentAtP50: overhead },
  processesPerOwner: perOwner,
}, null, 2));
process.exit(0);
