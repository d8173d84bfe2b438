// Death-supervisor benchmark: owner SIGKILL -> SIGTERM in each registered group (p50/p99),
// supervisor start-up and memory, and spawnOwned against child_process.spawn.
// The reaction is measured with three owners: a Node owner speaking the protocol, a minimal C
// owner (bench/fixtures/c-owner.c, compiled now with cc; it dies in a fraction of a Node owner's
// time, so what is left is the supervisor's own reaction) and the owner library. A reference
// supervisor runs side by side, trial by trial, under the same owners: by default the Python
// seed supervisor found in LEASH_BENCH_SEEDS or the repository's ../shared/seeds, run with the python3
// interpreter itself (not a pyenv shim); it
// speaks only `register PGID`, so its owners send bare lines.
// Usage: node dist/bench/supervisor.js [--trials N] [--groups G] [--supervisor 'CMD ARG...']
//        [--baseline 'CMD ARG...'] [--reference 'CMD ARG...' | --no-reference]
// --supervisor measures any command that speaks the same protocol (it gets --parent-pgid PGID).
// --baseline adds another build of leash's supervisor (say, the previous commit's bundle) to the
// same run, trial by trial: "no worse than the old build" is then measured under the same load.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnOwned, terminateOwned } from '../src/index.js';
import { supervisorCommand, supervisorEnvironment } from '../src/owner/supervisor-link.js';
import { readProcessMemory } from '../src/sys/process-memory.js';
import { isProcessAlive } from '../src/sys/processes.js';
import { waitUntil } from '../src/sys/wait.js';
import { realPython } from './lib/python.js';
import { findSeed } from './lib/seeds.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const REPO = here('../../');
const FIXTURES = join(REPO, 'bench/fixtures/');
const LIBRARY = here('../src/index.js');
const SUPERVISOR: string[] = supervisorCommand();

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}
const trials = Number(option('--trials', '50'));
const groups = Number(option('--groups', '3'));
const custom = option('--supervisor', '');
const commandUnderTest = custom ? custom.split(/\s+/).filter(Boolean) : SUPERVISOR;
const words = (text: string) => text.split(/\s+/).filter(Boolean);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const median = (values: number[]) => percentile(values, 50);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function firstLine(child: ReturnType<typeof spawn>): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('owner not ready')), 15_000);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) {
        clearTimeout(timer);
        resolve(JSON.parse(text.slice(0, text.indexOf('\n'))));
      }
    });
  });
}

type OwnerKind = 'node' | 'c' | 'library';
interface Contender {
  name: string;
  command: string[];
  /** Speaks only `register PGID`. */
  bare: boolean;
}

/** One trial: start an owner with `groups` registered targets, SIGKILL it, time each SIGTERM. */
async function deathTrial(owner: OwnerKind, contender: Contender, dir: string, index: number): Promise<number[]> {
  const stamps = join(dir, `stamps-${owner}-${contender.name}-${index}`);
  writeFileSync(stamps, '');
  const target = FIXTURES + 'term-target.mjs';
  const [command, args] =
    owner === 'node'
      ? [process.execPath, [FIXTURES + 'protocol-owner.mjs', JSON.stringify(contender.command), String(groups), target, stamps, contender.bare ? 'bare' : 'full']]
      : owner === 'c'
        ? [cOwner!, [String(groups), target, stamps, contender.bare ? 'bare' : 'full', process.execPath, '--', ...contender.command]]
        : [process.execPath, [FIXTURES + 'library-owner.mjs', String(groups), target, stamps]];
  const env = owner === 'c' ? supervisorEnvironment() : { ...process.env, LEASH_LIBRARY: LIBRARY };
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
  const { supervisor } = await firstLine(child);
  await sleep(150); // let the supervisor finish starting: this measures reaction, not start-up
  const killedAt = process.hrtime.bigint();
  child.kill('SIGKILL');
  const read = () => readFileSync(stamps, 'utf8').split('\n').filter(Boolean).map(BigInt);
  if (!(await waitUntil(() => read().length >= groups, 10_000))) throw new Error(`trial ${index} (${owner}, ${contender.name}): not every group got SIGTERM`);
  await waitUntil(() => !isProcessAlive(supervisor!), 10_000);
  return read().map((stamp) => Number(stamp - killedAt) / 1e6);
}

/** Compiles the C owner into `dir`; undefined (with the reason) when there is no compiler. */
function compileCOwner(dir: string): { path?: string; note?: string } {
  const out = join(dir, 'c-owner');
  const result = spawnSync('cc', ['-O2', '-o', out, join(FIXTURES, 'c-owner.c')], { encoding: 'utf8' });
  if (result.error) return { note: `no C compiler (cc: ${result.error.message})` };
  if (result.status !== 0) return { note: `cc failed: ${result.stderr.trim().split('\n')[0]}` };
  return { path: out };
}

/** The reference supervisor: --reference, or the Python seed supervisor extracted to `dir`. */
function referenceSupervisor(dir: string): { command?: string[]; note?: string } {
  if (process.argv.includes('--no-reference') || custom) return { note: 'no reference (--no-reference or --supervisor)' };
  const given = option('--reference', '');
  if (given) return { command: words(given) };
  const seed = findSeed((text) => text.includes('--parent-pgid') && text.includes('def main'));
  if (!seed) return { note: 'no reference: no supervisor seed in ../shared/seeds (set LEASH_BENCH_SEEDS or --reference)' };
  const python = realPython();
  if (!python) return { note: 'no reference: python3 is missing' };
  const text = readFileSync(seed, 'utf8');
  const script = join(dir, 'reference-supervisor.py');
  writeFileSync(script, text.slice(text.indexOf('#!')));
  return { command: [python, script] };
}

/** The 1-minute load average, with two decimals: every number of this bench is reported with it. */
const load = () => loadavg()[0]!.toFixed(2);

async function startupMs(command: string[]): Promise<number> {
  const began = process.hrtime.bigint();
  // detached-spawn: ok — a supervisor must run in its own session; the bench ends it by closing stdin.
  const child = spawn(command[0]!, [...command.slice(1), '--parent-pgid', '1'], {
    detached: true,
    stdio: ['pipe', 'ignore', 'inherit'],
    env: supervisorEnvironment(),
  });
  child.stdin!.end();
  await new Promise((resolve) => child.once('exit', resolve));
  return Number(process.hrtime.bigint() - began) / 1e6;
}

/**
 * Whether `perf stat` can count task-clock here: start-up wall time on a loaded 2-core machine
 * swings by tens of ms between runs, its CPU time much less.
 */
const hasPerf = (() => {
  const probe = spawnSync('perf', ['stat', '-x,', '-e', 'task-clock', 'true'], { encoding: 'utf8' });
  return probe.status === 0 && /task-clock/.test(probe.stderr ?? '');
})();

/** CPU time (all threads, perf task-clock) of one start-up: spawn -> exit on immediate EOF. */
async function startupCpuMs(command: string[]): Promise<number> {
  // detached-spawn: ok — a supervisor must run in its own session; the bench ends it by closing stdin.
  const child = spawn('perf', ['stat', '-x,', '-e', 'task-clock', '--', command[0]!, ...command.slice(1), '--parent-pgid', '1'], {
    detached: true,
    stdio: ['pipe', 'ignore', 'pipe'],
    env: supervisorEnvironment(),
  });
  let text = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (text += chunk));
  child.stdin!.end();
  await new Promise((resolve) => child.once('close', resolve));
  const line = text.split('\n').find((l) => l.includes('task-clock'));
  return line ? Number(line.split(',')[0]) : NaN;
}

type Memory = { rssMB: number; pssMB: number; privateMB: number; threads: number };
async function memory(command: string[]): Promise<Memory> {
  // detached-spawn: ok — a supervisor must run in its own session; the bench ends it by closing stdin.
  const child = spawn(command[0]!, [...command.slice(1), '--parent-pgid', '1'], {
    detached: true,
    stdio: ['pipe', 'ignore', 'inherit'],
    env: supervisorEnvironment(),
  });
  // Numbers above any pid_max: never signalled (a supervisor may or may not keep them).
  child.stdin!.write('register 999999991\nregister 999999992\nregister 999999993\n');
  await sleep(500);
  const memory = readProcessMemory(child.pid!);
  child.stdin!.end();
  await new Promise((resolve) => child.once('exit', resolve));
  if (!memory) throw new Error('the supervisor vanished before it could be measured');
  const mb = (kb: number | undefined) => (kb ?? NaN) / 1024;
  return { rssMB: mb(memory.rssKb), pssMB: mb(memory.pssKb), privateMB: mb(memory.privateKb), threads: memory.threads ?? NaN };
}

/**
 * Per-spawn cost of `true`, plain against owned. `steady`: another owned group keeps the
 * supervisor running, as in any owner with live children. Otherwise every spawnOwned finds the
 * set empty and starts a supervisor: the one-off cost of an owner's first owned child.
 */
async function spawnCost(useLeash: boolean, rounds: number, steady: boolean): Promise<{ callMs: number; totalMs: number }> {
  const anchor = useLeash && steady ? spawnOwned('sleep', ['1000'], { stdio: 'ignore' }) : undefined;
  const calls: number[] = [];
  const totals: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const began = process.hrtime.bigint();
    const child = useLeash ? spawnOwned('true', [], { stdio: 'ignore' }) : spawn('true', [], { stdio: 'ignore' });
    calls.push(Number(process.hrtime.bigint() - began) / 1e6);
    await new Promise((resolve) => child.once('exit', resolve));
    totals.push(Number(process.hrtime.bigint() - began) / 1e6);
    if (useLeash && !steady) await terminateOwned(child, { graceMs: 100 });
  }
  if (anchor) await terminateOwned(anchor, { graceMs: 100 });
  return { callMs: median(calls), totalMs: median(totals) };
}

const dir = mkdtempSync(join(tmpdir(), 'leash-bench-'));
let cOwner: string | undefined;
try {
  const compiled = custom ? { note: 'C owner skipped with --supervisor' } : compileCOwner(dir);
  cOwner = compiled.path;
  const reference = referenceSupervisor(dir);
  const contenders: Contender[] = [{ name: custom ? 'custom' : 'leash', command: commandUnderTest, bare: false }];
  const baseline = option('--baseline', '');
  if (baseline) contenders.push({ name: 'baseline', command: words(baseline), bare: false });
  if (reference.command) contenders.push({ name: 'reference', command: reference.command, bare: true });
  const owners: OwnerKind[] = ['node', ...(cOwner ? (['c'] as const) : []), ...(custom ? [] : (['library'] as const))];
  const combos = owners.flatMap((owner) =>
    contenders.filter((c) => owner !== 'library' || c.name === 'leash').map((contender) => ({ owner, contender })),
  );

  const loadBefore = load();
  // Trial by trial, every combination in a rotating order: they share the machine's noise.
  const samples = new Map<string, number[]>(combos.map(({ owner, contender }) => [`${owner}/${contender.name}`, []]));
  for (let i = 0; i < trials; i += 1) {
    for (let k = 0; k < combos.length; k += 1) {
      const { owner, contender } = combos[(i + k) % combos.length]!;
      samples.get(`${owner}/${contender.name}`)!.push(...(await deathTrial(owner, contender, dir, i)));
    }
  }
  const latency: Record<string, { p50: number; p99: number; max: number; samples: number }> = {};
  for (const [key, values] of samples) latency[key] = { p50: median(values), p99: percentile(values, 99), max: Math.max(...values), samples: values.length };

  const loadAfterLatency = load();
  // Start-up and memory interleaved too, contender by contender in a rotating order.
  const startups = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const startupCpus = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const memorySamples = new Map<string, Memory[]>(contenders.map((c) => [c.name, []]));
  for (let i = 0; i < 20; i += 1) {
    for (let k = 0; k < contenders.length; k += 1) {
      const contender = contenders[(i + k) % contenders.length]!;
      startups.get(contender.name)!.push(await startupMs(contender.command));
      if (hasPerf) startupCpus.get(contender.name)!.push(await startupCpuMs(contender.command));
      if (i % 5 === 0) memorySamples.get(contender.name)!.push(await memory(contender.command));
    }
  }
  const startup: Record<string, number> = {};
  const startupCpu: Record<string, number> = {};
  const memories: Record<string, Memory> = {};
  for (const contender of contenders) {
    startup[contender.name] = median(startups.get(contender.name)!);
    if (hasPerf) startupCpu[contender.name] = median(startupCpus.get(contender.name)!);
    const taken = memorySamples.get(contender.name)!;
    const mid = <K extends keyof Memory>(key: K) => median(taken.map((m) => m[key]));
    memories[contender.name] = { rssMB: mid('rssMB'), pssMB: mid('pssMB'), privateMB: mid('privateMB'), threads: mid('threads') };
  }
  const loadAfter = load();
  type Cost = { callMs: number; totalMs: number };
  let spawnRow: { plain: Cost; owned: Cost; first: Cost } | undefined;
  if (!custom) {
    await spawnCost(true, 20, true); // warm-up
    const plain = await spawnCost(false, 200, false);
    const owned = await spawnCost(true, 200, true);
    const first = await spawnCost(true, 20, false);
    spawnRow = { plain, owned, first };
  }

  const rows: Array<[string, string, string]> = [];
  const ownerNames: Record<OwnerKind, string> = { node: 'Node owner', c: 'C owner', library: 'library owner' };
  for (const owner of owners) {
    for (const contender of contenders) {
      const l = latency[`${owner}/${contender.name}`];
      if (!l) continue;
      rows.push([`SIGKILL -> SIGTERM, ${ownerNames[owner]}, ${contender.name}: p50 / p99 (${l.samples} groups)`, `${l.p50.toFixed(2)} / ${l.p99.toFixed(2)} ms`, contender.name === 'reference' ? '' : 'p50 <= reference, p99 <= 10 ms']);
    }
  }
  if (!cOwner) rows.push(['C owner rows skipped', compiled.note ?? '', '']);
  if (!reference.command) rows.push(['reference rows skipped', reference.note ?? '', '']);
  for (const contender of contenders) {
    const mem = memories[contender.name]!;
    const mine = contender.name !== 'reference' && contender.name !== 'baseline';
    rows.push([`${contender.name}: start-up (spawn -> exit on EOF, median of 20)`, `${startup[contender.name]!.toFixed(1)} ms`, mine ? (baseline ? '<= baseline' : '<= 25 ms (issue)') : '']);
    if (hasPerf) rows.push([`${contender.name}: start-up CPU time (perf task-clock, median of 20)`, `${startupCpu[contender.name]!.toFixed(1)} ms`, mine && baseline ? '<= baseline' : '']);
    rows.push([`${contender.name}: RSS / PSS / private (median of 4)`, `${mem.rssMB.toFixed(1)} / ${mem.pssMB.toFixed(1)} / ${mem.privateMB.toFixed(2)} MB`, mine ? (baseline ? 'private <= baseline' : 'private <= 5.2 MB (issue)') : '']);
    rows.push([`${contender.name}: threads`, String(mem.threads), '']);
  }
  if (spawnRow) {
    const overhead = (spawnRow.owned.totalMs / spawnRow.plain.totalMs - 1) * 100;
    rows.push(['spawn -> exit of `true`: plain / owned', `${spawnRow.plain.totalMs.toFixed(2)} / ${spawnRow.owned.totalMs.toFixed(2)} ms`, '']);
    rows.push(['spawnOwned overhead per spawn (spawn -> exit)', `${overhead.toFixed(1)} %`, '<= 10 %']);
    rows.push(['first spawnOwned of an owner (starts the supervisor)', `${spawnRow.first.callMs.toFixed(2)} ms`, '']);
  }
  rows.push(['load average (1 min): before / after latency / after start-up', `${loadBefore} / ${loadAfterLatency} / ${loadAfter}`, '2 cores']);
  const width = Math.max(...rows.map((row) => row[0].length));
  for (const contender of contenders) console.log(`${contender.name}: ${contender.command.map((w) => w.replace(REPO, '').replace(dir, '$TMP')).join(' ')}`);
  console.log(`${'metric'.padEnd(width)}  ${'value'.padStart(22)}  target`);
  for (const [name, value, target] of rows) console.log(`${name.padEnd(width)}  ${value.padStart(22)}  ${target}`);
  mkdirSync(join(REPO, 'bench/results'), { recursive: true });
  const out = join(REPO, 'bench/results/supervisor.json');
  writeFileSync(
    out,
    JSON.stringify(
      {
        when: new Date().toISOString(),
        node: process.version,
        contenders: contenders.map((c) => ({ name: c.name, command: c.command.map((w) => w.replace(dir, '$TMP')) })),
        cOwner: cOwner ? 'compiled' : compiled.note,
        trials,
        groups,
        loadAverage: { before: Number(loadBefore), afterLatency: Number(loadAfterLatency), after: Number(loadAfter) },
        latency,
        startupMs: startup,
        startupCpuMs: hasPerf ? startupCpu : 'perf stat unavailable',
        memory: memories,
        spawn: spawnRow,
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`wrote ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
