// Benchmark: `leash check` on the labelled corpus (test/corpus), one process per repository as
// test/corpus/measure.mjs runs it, with the CPU time of each repository apart, so that a change's
// effect can be told from a shared machine's noise: each repository is checked --runs times (default
// 3) and its least CPU time is kept. With --against DIR (another checkout's root, built), that
// tree's check runs interleaved with this one's, and both columns are printed.
// CPU time is the children's user + system time from /proc/self/stat (Linux); elsewhere, and where
// the corpus has not been brought (test/corpus/checkout.mjs), it prints SKIP and exits 0.
// Writes bench/results/check-corpus.json. Run with `node dist/bench/check-corpus.js` after a build.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { waitedChildrenCpuSeconds } from '../src/sys/procfs.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const option = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const RUNS = Math.max(1, Number(option('--runs')) || 3);
const AGAINST = option('--against');

const childrenCpu = waitedChildrenCpuSeconds;

function checkCpu(tree: string, dir: string): number {
  const before = childrenCpu() as number;
  const run = spawnSync(process.execPath, [join(tree, 'packages/check/bin/leash-check.js'), '--all', '--format', 'json', '.'], { cwd: dir, stdio: 'ignore' });
  if (run.status !== 0 && run.status !== 1) throw new Error(`${tree}: the check exited ${run.status} in ${dir}`);
  return (childrenCpu() as number) - before;
}

interface Row {
  repo: string;
  set: string;
  bytes: number;
  cpu: number;
  against?: number;
}

async function main(): Promise<void> {
  const corpus = join(REPO, 'test/corpus');
  const manifest = JSON.parse(readFileSync(join(corpus, 'manifest.json'), 'utf8')) as { repositories: Array<{ repo: string; set: string }> };
  const present = manifest.repositories.filter(({ repo }) => existsSync(join(corpus, 'src', repo.replace('/', '+'))));
  if (childrenCpu() === undefined || present.length === 0) {
    console.log('SKIP: needs Linux and the corpus sources (node test/corpus/checkout.mjs)');
    return;
  }
  // The bytes counted as measure.mjs counts them: the files the check lists.
  const checkDist = join(REPO, 'packages/check/dist/check');
  const { listTargets, PathFilter } = (await import(pathToFileURL(join(checkDist, 'files.js')).href)) as {
    listTargets(paths: string[], cwd: string, filter: unknown): { targets: Array<{ absolute: string }> };
    PathFilter: new (config: unknown) => unknown;
  };
  const { loadConfig } = (await import(pathToFileURL(join(checkDist, 'config.js')).href)) as { loadConfig(cwd: string): unknown };
  const rows: Row[] = [];
  for (const { repo, set } of present) {
    const dir = join(corpus, 'src', repo.replace('/', '+'));
    let bytes = 0;
    for (const target of listTargets(['.'], dir, new PathFilter(loadConfig(dir))).targets) bytes += statSync(target.absolute).size;
    const row: Row = { repo, set, bytes, cpu: Infinity };
    if (AGAINST) row.against = Infinity;
    for (let round = 0; round < RUNS; round++) {
      row.cpu = Math.min(row.cpu, checkCpu(REPO, dir));
      if (AGAINST) row.against = Math.min(row.against as number, checkCpu(AGAINST, dir));
    }
    rows.push(row);
  }
  const head = AGAINST ? '| repository | set | MB | CPU-s | CPU-s (against) |' : '| repository | set | MB | CPU-s |';
  console.log(head);
  console.log(head.replace(/[^|]/g, '-'));
  for (const row of rows) {
    const cells = [row.repo, row.set, (row.bytes / 1e6).toFixed(2), row.cpu.toFixed(2), ...(AGAINST ? [(row.against as number).toFixed(2)] : [])];
    console.log(`| ${cells.join(' | ')} |`);
  }
  const sum = (pick: (row: Row) => number, of = rows) => of.reduce((total, row) => total + pick(row), 0);
  const speed = (of: Row[], pick: (row: Row) => number) => sum((row) => row.bytes, of) / 1e6 / sum(pick, of);
  const summary: Record<string, unknown> = { runs: RUNS, against: AGAINST ?? null, megabytes: sum((row) => row.bytes) / 1e6, cpuSeconds: sum((row) => row.cpu) };
  console.log('');
  for (const set of ['tuned', 'held-out', 'all']) {
    const of = set === 'all' ? rows : rows.filter((row) => row.set === set);
    const line = `${set}: ${speed(of, (row) => row.cpu).toFixed(1)} MB per CPU-second${AGAINST ? ` (against: ${speed(of, (row) => row.against as number).toFixed(1)})` : ''}`;
    console.log(line);
    summary[set] = { mbPerCpuSecond: speed(of, (row) => row.cpu), ...(AGAINST ? { againstMbPerCpuSecond: speed(of, (row) => row.against as number) } : {}) };
  }
  console.log(`(least CPU of ${RUNS} runs per repository, start-up included: measure.mjs's one run per repository reads higher)`);
  mkdirSync(join(REPO, 'bench/results'), { recursive: true });
  writeFileSync(join(REPO, 'bench/results/check-corpus.json'), `${JSON.stringify({ ...summary, rows }, null, 2)}\n`);
}

await main();
