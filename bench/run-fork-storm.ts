// Benchmark of `leash run` under a fork storm: the runner makes 10,000 short-lived orphans (each a
// grandchild whose parent exits at once, so it is handed to leash, the subreaper, and dies there:
// one SIGCHLD to leash per orphan). Measures leash's CPU during the storm (all its threads, from
// /proc/<pid>/task/*/schedstat), the most zombies seen waiting for leash at once, and how long the
// last ones wait once the storm ends. Builds are compared side by side, rounds interleaved:
//   LEASH_BENCH_CLIS="before=/path/a/bin/leash.js,after=/path/b/bin/leash.js" node dist/bench/run-fork-storm.js
// (default: this build alone). Needs perl (the storm is a fork loop without exec).
// Run: npm run build && node dist/bench/run-fork-storm.js   (not part of npm test)
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { readChildren, readProcStat } from '../src/sys/procfs.js';
import { waitUntil } from '../src/sys/wait.js';

const CLI = fileURLToPath(new URL('../../bin/leash.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const ORPHANS = Number(process.env.LEASH_BENCH_ORPHANS ?? 10_000);
const ROUNDS = Number(process.env.LEASH_BENCH_ROUNDS ?? 5);
/** Long-lived sleepers next to the storm (LEASH_BENCH_TREE): a tree whose walk is dear. */
const SLEEPERS = Number(process.env.LEASH_BENCH_TREE ?? 0);

// Prints "start", makes the orphans (each intermediate reaped at once), prints "end", then waits
// for stdin to close.
const STORM = `
$| = 1;
for (1..${SLEEPERS}) { my $s = fork() // die "fork: $!"; if ($s == 0) { exec "sleep", "600"; } }
print "start\\n";
for (1..${ORPHANS}) {
  my $p = fork() // die "fork: $!";
  if ($p == 0) { my $q = fork(); exit 0; }
  waitpid($p, 0);
}
print "end\\n";
<STDIN>;
`;

const builds: Array<[string, string]> = (process.env.LEASH_BENCH_CLIS ?? `this=${CLI}`)
  .split(',')
  .map((item) => item.split('=') as [string, string]);

/** Nanoseconds on CPU of every thread of a process. */
function cpuNs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that just ended
    }
  }
  return total;
}

function zombieChildren(pid: number): number {
  let zombies = 0;
  for (const child of readChildren(pid) ?? []) if (readProcStat(child)?.state === 'Z') zombies += 1;
  return zombies;
}

interface Round {
  build: string;
  stormMs: number;
  leashCpuMs: number;
  maxZombies: number;
  drainMs: number;
}

async function round(build: string, cli: string): Promise<Round> {
  const leash = spawn(process.execPath, [cli, 'run', '-q', '--', 'perl', '-e', STORM], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, LEASH_GRACE_SECONDS: '5', LEASH_STATE_PATH: '' },
  });
  const pid = leash.pid as number;
  let out = '';
  leash.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  if (!(await waitUntil(() => out.includes('start'), 20_000))) throw new Error('the storm never started');
  const cpu0 = cpuNs(pid);
  const t0 = performance.now();
  let maxZombies = 0;
  // Sample the zombies waiting for leash every few ms until the storm ends.
  while (!out.includes('end')) {
    maxZombies = Math.max(maxZombies, zombieChildren(pid));
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (performance.now() - t0 > 300_000) throw new Error('the storm took over 5 minutes');
  }
  const stormMs = performance.now() - t0;
  const cpu1 = cpuNs(pid);
  const tEnd = performance.now();
  if (!(await waitUntil(() => zombieChildren(pid) === 0, 10_000))) throw new Error('zombies left 10 s after the storm');
  const drainMs = performance.now() - tEnd;
  leash.stdin.end();
  await new Promise((resolve) => leash.once('exit', resolve));
  return { build, stormMs, leashCpuMs: (cpu1 - cpu0) / 1e6, maxZombies, drainMs };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

async function main(): Promise<void> {
  if (spawnSync('perl', ['-e', '1']).status !== 0) {
    console.log('perl is not installed: skipped');
    return;
  }
  const load0 = loadavg()[0] as number;
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    for (const [build, cli] of builds) rounds.push(await round(build, cli));
  }
  const load1 = loadavg()[0] as number;
  console.log(`fork storm: ${ORPHANS} orphans, ${SLEEPERS} sleepers in the tree, ${ROUNDS} interleaved rounds per build, load average ${load0.toFixed(1)} → ${load1.toFixed(1)}`);
  console.log('| build | storm (ms) | leash CPU in storm (ms) | CPU per orphan (µs) | max zombies waiting | last zombie reaped after storm end (ms) |');
  console.log('|---|---|---|---|---|---|');
  const summary: Record<string, unknown> = {};
  for (const [build] of builds) {
    const mine = rounds.filter((r) => r.build === build);
    const row = {
      stormMs: median(mine.map((r) => r.stormMs)),
      leashCpuMs: median(mine.map((r) => r.leashCpuMs)),
      maxZombies: median(mine.map((r) => r.maxZombies)),
      maxZombiesWorst: Math.max(...mine.map((r) => r.maxZombies)),
      drainMs: median(mine.map((r) => r.drainMs)),
    };
    summary[build] = row;
    console.log(`| ${build} | ${row.stormMs.toFixed(0)} | ${row.leashCpuMs.toFixed(0)} | ${((row.leashCpuMs * 1000) / ORPHANS).toFixed(1)} | ${row.maxZombies} (worst ${row.maxZombiesWorst}) | ${row.drainMs.toFixed(1)} |`);
  }
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(`${RESULTS}run-fork-storm${SLEEPERS ? `-tree${SLEEPERS}` : ''}.json`, `${JSON.stringify({ orphans: ORPHANS, sleepers: SLEEPERS, load: [load0, load1], summary, rounds }, null, 2)}\n`);
}

await main();
