// Death-supervisor benchmark: owner SIGKILL -> SIGTERM in each registered group (p50/p99),
// supervisor start-up and memory, and spawnOwned against child_process.spawn.
// Usage: node dist/bench/supervisor.js [--trials N] [--groups G] [--supervisor 'CMD ARG...']
// --supervisor measures any command that speaks the same protocol (it gets --parent-pgid PGID).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnOwned, terminateOwned } from '../src/index.js';
import { supervisorCommand, supervisorEnvironment } from '../src/owner/supervisor-link.js';
import { readProcessMemory } from '../src/sys/process-memory.js';
import { isProcessAlive } from '../src/sys/processes.js';
import { waitUntil } from '../src/sys/wait.js';

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

/** One trial: start an owner with `groups` registered targets, SIGKILL it, time each SIGTERM. */
async function deathTrial(mode: 'protocol' | 'library', dir: string, index: number): Promise<number[]> {
  const stamps = join(dir, `stamps-${index}`);
  writeFileSync(stamps, '');
  const args =
    mode === 'protocol'
      ? [FIXTURES + 'protocol-owner.mjs', JSON.stringify(commandUnderTest), String(groups), FIXTURES + 'term-target.mjs', stamps]
      : [FIXTURES + 'library-owner.mjs', String(groups), FIXTURES + 'term-target.mjs', stamps];
  const owner = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LEASH_LIBRARY: LIBRARY } });
  const { supervisor } = await firstLine(owner);
  await sleep(150); // let the supervisor finish starting: this measures reaction, not start-up
  const killedAt = process.hrtime.bigint();
  owner.kill('SIGKILL');
  const read = () => readFileSync(stamps, 'utf8').split('\n').filter(Boolean).map(BigInt);
  if (!(await waitUntil(() => read().length >= groups, 10_000))) throw new Error(`trial ${index}: not every group got SIGTERM`);
  await waitUntil(() => !isProcessAlive(supervisor!), 10_000);
  return read().map((stamp) => Number(stamp - killedAt) / 1e6);
}

async function startupMs(): Promise<number> {
  const began = process.hrtime.bigint();
  // detached-spawn: ok — a supervisor must run in its own session; the bench ends it by closing stdin.
  const child = spawn(commandUnderTest[0]!, [...commandUnderTest.slice(1), '--parent-pgid', '1'], {
    detached: true,
    stdio: ['pipe', 'ignore', 'inherit'],
    env: supervisorEnvironment(),
  });
  child.stdin!.end();
  await new Promise((resolve) => child.once('exit', resolve));
  return Number(process.hrtime.bigint() - began) / 1e6;
}

async function memory(): Promise<{ rssMB: number; pssMB: number; privateMB: number; threads: number }> {
  // detached-spawn: ok — a supervisor must run in its own session; the bench ends it by closing stdin.
  const child = spawn(commandUnderTest[0]!, [...commandUnderTest.slice(1), '--parent-pgid', '1'], {
    detached: true,
    stdio: ['pipe', 'ignore', 'inherit'],
    env: supervisorEnvironment(),
  });
  // Numbers above any pid_max: registered, never signalled.
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
try {
  const modes: Array<'protocol' | 'library'> = custom ? ['protocol'] : ['protocol', 'library'];
  const latency: Record<string, { p50: number; p99: number; max: number; samples: number }> = {};
  for (const mode of modes) {
    const samples: number[] = [];
    for (let i = 0; i < trials; i += 1) samples.push(...(await deathTrial(mode, dir, i)));
    latency[mode] = { p50: median(samples), p99: percentile(samples, 99), max: Math.max(...samples), samples: samples.length };
  }
  const startups: number[] = [];
  for (let i = 0; i < 20; i += 1) startups.push(await startupMs());
  const mem = await memory();
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
  for (const [mode, l] of Object.entries(latency)) {
    rows.push([`owner SIGKILL -> SIGTERM p50 (${mode}, ${l.samples} groups)`, `${l.p50.toFixed(2)} ms`, '<= 5 ms']);
    rows.push([`owner SIGKILL -> SIGTERM p99 (${mode})`, `${l.p99.toFixed(2)} ms`, '<= 20 ms']);
  }
  rows.push(['supervisor start-up (spawn -> exit on EOF, median of 20)', `${median(startups).toFixed(1)} ms`, '<= 50 ms']);
  rows.push(['supervisor RSS', `${mem.rssMB.toFixed(1)} MB`, '']);
  rows.push(['supervisor PSS', `${mem.pssMB.toFixed(1)} MB`, '']);
  rows.push(['supervisor private memory', `${mem.privateMB.toFixed(1)} MB`, '<= 6 MB']);
  rows.push(['supervisor threads', String(mem.threads), '']);
  if (spawnRow) {
    const overhead = (spawnRow.owned.totalMs / spawnRow.plain.totalMs - 1) * 100;
    rows.push(['spawn() call, median', `${spawnRow.plain.callMs.toFixed(3)} ms`, '']);
    rows.push(['spawnOwned() call, median', `${spawnRow.owned.callMs.toFixed(3)} ms`, '']);
    rows.push(['spawn -> exit of `true`: plain / owned', `${spawnRow.plain.totalMs.toFixed(2)} / ${spawnRow.owned.totalMs.toFixed(2)} ms`, '']);
    rows.push(['spawnOwned overhead per spawn (spawn -> exit)', `${overhead.toFixed(1)} %`, '<= 10 %']);
    rows.push(['first spawnOwned of an owner (starts the supervisor)', `${spawnRow.first.callMs.toFixed(2)} ms`, '']);
  }
  const width = Math.max(...rows.map((row) => row[0].length));
  console.log(`supervisor: ${commandUnderTest.map((w) => w.replace(REPO, '')).join(' ')}`);
  console.log(`${'metric'.padEnd(width)}  ${'value'.padStart(16)}  target`);
  for (const [name, value, target] of rows) console.log(`${name.padEnd(width)}  ${value.padStart(16)}  ${target}`);
  mkdirSync(join(REPO, 'bench/results'), { recursive: true });
  const out = join(REPO, 'bench/results/supervisor.json');
  writeFileSync(
    out,
    JSON.stringify({ when: new Date().toISOString(), node: process.version, supervisor: commandUnderTest, trials, groups, latency, startupMs: median(startups), memory: mem, spawn: spawnRow }, null, 2) + '\n',
  );
  console.log(`wrote ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}