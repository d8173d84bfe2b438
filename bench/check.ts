// Benchmark: `leash check` end to end, as a fresh process (cold), over large generated trees of
// JavaScript, TypeScript and Python files, and side by side with the reference Python checker on
// its own job (a Python tree under git). Scenarios: a typical tree, where a tenth of the files
// spawn (and are parsed, having findings) and the rest never reach a parser; and a tree where every
// file passes the prefilter and is parsed. Targets (issue 10): >= 30 MB/s typical, >= 10 MB/s every
// file parsed, >= 1.5x the reference's speed on its own job, whole process on one core.
//
// Speeds are given per CPU second (user + system time of the process, from /usr/bin/time) as well
// as per wall second: on a machine shared with other work, wall time measures the neighbours.
// A cold process still loads typescript from the V8 code cache in node_modules/.cache/proc-leash-check
// (written by the first run when absent): the output says whether it was there at the start.
// Run with `npm run bench` or `node dist/bench/check.js` after a build.
//
// CPU time depends on the host, which is shared and whose speed moves from hour to hour (the
// reference's own job took 0.79-1.01 CPU-s when the targets were set and more than 2 s on a slow
// day). So every row also names the host's speed while it was measured (the reference's time on
// its own job, a run of it in each round) and its speed scaled to the targets' host; and
// `--instructions` (or LEASH_BENCH_INSTRUCTIONS=1) adds one run of each checker under
// `valgrind --tool=callgrind`: instructions executed, every thread counted, child processes (git)
// not; they repeat to within a few percent whatever the host's speed or load.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateRealisticTree } from './lib/check-realistic-tree.js';
import { realPython } from './lib/python.js';
import { findSeed } from './lib/seeds.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** LEASH_CHECK_CLI measures another build (an older checkout, say) on the same trees. */
const CLI = process.env.LEASH_CHECK_CLI ?? join(REPO, 'bin/leash.js');
/**
 * LEASH_CHECK_BASELINE_CLI: a second build measured side by side, its runs interleaved with this
 * one's on the same trees, so that the neighbours' load falls on both alike.
 */
const BASELINE_CLI = process.env.LEASH_CHECK_BASELINE_CLI;
const RUNS = 3;
/** Rounds of the bundle's with-and-without rows, whose difference is a few ms. */
const MARGINAL_ROUNDS = 9;
/** The value of `--NAME VALUE` on the command line. */
function argument(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

/**
 * The reference checker: a behaviour seed, read at run time and never copied into this
 * repository. Named by `--reference FILE` (or LEASH_REFERENCE_CHECKER), else looked for in the
 * `shared/seeds` folder beside the repository (beside the main checkout, for a git worktree): the
 * seed whose first line names check_detached_spawns.py.
 */
function findReferenceSeed(): string | undefined {
  const named = argument('reference') ?? process.env.LEASH_REFERENCE_CHECKER;
  if (named !== undefined) return resolve(named);
  return findSeed((text) => text.slice(0, 200).split('\n')[0]?.endsWith('check_detached_spawns.py') ?? false);
}
const REFERENCE_SEED = findReferenceSeed();
/** `--realistic-only`: only the realistic tree's rows (they take a few minutes on their own). */
const REALISTIC_ONLY = process.argv.includes('--realistic-only');
const TIME = '/usr/bin/time';
const TARGETS = { typical: 30, everyFileParsed: 10, referenceRatio: 1.5, realisticMbPerCpuSecond: 15, bundleMbPerSecond: 10, realisticPythonRatio: 1.5 };
/** The reference's CPU seconds on its own job on the host of the day the targets were set (0.79-1.01 s). */
const REFERENCE_CPU_WHEN_SET = { low: 0.79, high: 1.01 };
const INSTRUCTIONS = process.argv.includes('--instructions') || process.env.LEASH_BENCH_INSTRUCTIONS === '1';
const VALGRIND = '/usr/bin/valgrind';

// Filler that looks like ordinary code: functions, classes, string handling, no spawn words.
function jsBody(i: number, lines: number): string {
  let out = `import { readFile } from 'node:fs/promises';\nimport { join } from 'node:path';\n\n`;
  for (let n = 0; out.split('\n').length < lines; n++) {
    out += `export interface Record${i}_${n} { id: number; name: string; tags: string[] }\n`;
    out += `export async function load${i}_${n}(dir: string, ids: number[]): Promise<Record${i}_${n}[]> {\n`;
    out += `  const results: Record${i}_${n}[] = [];\n  for (const id of ids) {\n`;
    out += `    const text = await readFile(join(dir, \`item-\${id}.json\`), 'utf8');\n`;
    out += `    const parsed = JSON.parse(text) as { name?: string; tags?: string[] };\n`;
    out += `    if (parsed.name && parsed.name.length > ${n % 7}) results.push({ id, name: parsed.name, tags: parsed.tags ?? [] });\n`;
    out += `  }\n  return results.sort((a, b) => a.id - b.id);\n}\n\n`;
  }
  return out;
}

function pyBody(i: number, lines: number): string {
  let out = 'import json\nimport os\nfrom pathlib import Path\n\n';
  for (let n = 0; out.split('\n').length < lines; n++) {
    out += `class Record${i}_${n}:\n    def __init__(self, ident, name, tags=None):\n        self.ident = ident\n        self.name = name\n        self.tags = tags or []\n\n`;
    out += `def load_${i}_${n}(directory, ids):\n    results = []\n    for ident in ids:\n        path = Path(directory) / f"item-{ident}.json"\n`;
    out += `        data = json.loads(path.read_text())\n        if len(data.get("name", "")) > ${n % 7}:\n            results.append(Record${i}_${n}(ident, data["name"], data.get("tags")))\n    return sorted(results, key=lambda r: r.ident)\n\n`;
  }
  return out;
}

// A typical spawning file: real spawns, a tenth of them detached (findings, so parsed).
const JS_SPAWN = (i: number) =>
  `import { spawn } from 'node:child_process';\nconst options${i} = { stdio: 'inherit' as const, cwd: process.cwd() };\nexport const run${i} = () => spawn('tool', ['--id', '${i}'], options${i});\n` +
  (i % 10 === 0 ? `spawn('daemon', [], { detached: true });\n` : `spawn('worker', [], { detached: false });\n`);
const PY_SPAWN = (i: number) =>
  `import subprocess\n\ndef run_${i}():\n    return subprocess.run(["tool", "--id", "${i}"], check=True, start_new_session=False)\n` +
  (i % 10 === 0 ? `subprocess.Popen(["daemon"], start_new_session=True)\n` : '');
// Passes the prefilter but holds no finding: a timer's unref, a comment naming setsid.
const JS_PARSED = `setTimeout(() => {}, 1).unref();\n`;
const PY_PARSED = `# the worker never calls setsid\n`;

interface Tree {
  dir: string;
  files: number;
  bytes: number;
}

type Counts = { js: number; ts: number; py: number };

function generate(name: string, counts: Counts, pythonUnder: string, extra: (i: number, language: 'js' | 'py') => string): Tree {
  const dir = mkdtempSync(join(tmpdir(), `leash-bench-check-${name}-`));
  let files = 0;
  let bytes = 0;
  const write = (path: string, text: string) => {
    const full = join(dir, path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, text);
    files++;
    bytes += Buffer.byteLength(text);
  };
  const stripTypes = (text: string) => text.replace(/: Promise<[^>]*>|: Record\w+\[\]| as \{[^}]*\}|export interface[^\n]*\n| as const/g, '');
  for (let i = 0; i < counts.js; i++) write(`web/m${i % 40}/f${i}.mjs`, stripTypes(jsBody(i, 150) + extra(i, 'js')));
  for (let i = 0; i < counts.ts; i++) write(`src/m${i % 40}/f${i}.ts`, jsBody(i, 150) + extra(i, 'js'));
  for (let i = 0; i < counts.py; i++) write(`${pythonUnder}/m${i % 40}/f${i}.py`, pyBody(i, 150) + extra(i, 'py'));
  return { dir, files, bytes };
}

const spawningTenth = (i: number, language: 'js' | 'py') => (i % 10 === 0 ? (language === 'js' ? JS_SPAWN(i) : PY_SPAWN(i)) : '');
const everyFileParsed = (i: number, language: 'js' | 'py') => (i % 10 === 0 ? spawningTenth(i, language) : language === 'js' ? JS_PARSED : PY_PARSED);

interface Timing {
  wallMs: number;
  cpuMs: number;
  code: number | null;
  stdout: string;
}

/** A bare environment: no NODE_OPTIONS, and no NODE_EXTRA_CA_CERTS (it costs every Node start about 0.1 CPU-s here). */
function benchEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' };
}

function timeRun(argv: string[], cwd: string): Timing {
  // One core: pinned with taskset where it exists, so the number does not depend on idle cores.
  const pin = existsSync('/usr/bin/taskset') ? ['taskset', '-c', '0'] : [];
  const usage = join(tmpdir(), `leash-bench-time-${process.pid}`);
  const timed = existsSync(TIME) ? [TIME, '-f', '%U %S', '-o', usage] : [];
  // The real interpreter, not a pyenv shim: the shim's own start (about 0.45 CPU-s) is not the reference's.
  const command = [...timed, ...pin, ...realExecutable(argv)];
  const start = process.hrtime.bigint();
  const result = spawnSync(command[0] as string, command.slice(1), { cwd, encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'inherit'], env: benchEnv() });
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  let cpuMs = wallMs;
  if (timed.length > 0) {
    const fields = readFileSync(usage, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
    cpuMs = ((fields[0] ?? 0) + (fields[1] ?? 0)) * 1000;
    rmSync(usage, { force: true });
  }
  return { wallMs, cpuMs, code: result.status, stdout: result.stdout };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

interface Row {
  scenario: string;
  checker: string;
  files: number;
  megabytes: number;
  findings: number;
  medianWallMs: number;
  medianCpuMs: number;
  mbPerWallSecond: number;
  mbPerCpuSecond: number;
  /** Instructions of one run under callgrind (with --instructions). */
  instructions?: number;
  /** The reference's CPU ms on its own job in runs interleaved with this row's: the host's speed meanwhile. */
  hostReferenceCpuMs?: number;
  /** MB per CPU second on a host as fast as when the targets were set (each run against the reference's of its round): an estimate. */
  atTargetHostSpeed?: string;
}

/** The interpreter behind a `python3` on PATH (often a pyenv shim, a shell script whose own cost is not the reference's). */
function realExecutable(argv: string[]): string[] {
  if (argv[0] !== 'python3') return argv;
  return [realPython() ?? 'python3', ...argv.slice(1)];
}

/** Instructions one run executes, every thread of the process counted (its children, git, not). */
function countInstructions(argv: string[], cwd: string): number {
  const out = join(tmpdir(), `leash-bench-callgrind-${process.pid}`);
  const result = spawnSync(VALGRIND, ['--tool=callgrind', `--callgrind-out-file=${out}`, ...realExecutable(argv)], { cwd, encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'ignore', 'pipe'], env: benchEnv() });
  rmSync(out, { force: true });
  const collected = /Collected : (\d+)/.exec(result.stderr ?? '');
  if (!collected) throw new Error(`callgrind gave no count for ${argv.join(' ')}: ${result.error?.message ?? result.stderr?.slice(-400)}`);
  return Number(collected[1]);
}

/** Thrown to leave the scenarios early (`--realistic-only`). */
class Skip extends Error {}

interface Checker {
  checker: string;
  argv: string[];
  cwd: string;
  countFindings: (stdout: string) => number;
}

/**
 * Measures each checker on one tree, their runs interleaved (A B A B ...), a row per checker.
 * With a `yardstick` (the reference on its own job), a run of it joins every round, so that each
 * row names the host's speed while it was measured: a shared host's speed moves within a bench run.
 */
function measure(scenario: string, tree: Tree, checkers: Checker[], yardstick?: Checker): Row[] {
  const runs = checkers.map((): Timing[] => []);
  const yardstickCpu: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    checkers.forEach((c, i) => (runs[i] as Timing[]).push(timeRun(c.argv, c.cwd)));
    if (yardstick) {
      const run = timeRun(yardstick.argv, yardstick.cwd);
      if (run.code !== 1) throw new Error(`${scenario} / the yardstick ${yardstick.checker}: expected exit 1 (planted findings), got ${run.code}`);
      yardstickCpu.push(run.cpuMs);
    }
  }
  const referenceAt = checkers.findIndex((c) => c.checker.startsWith('reference'));
  if (!yardstick && referenceAt >= 0) yardstickCpu.push(...(runs[referenceAt] as Timing[]).map((r) => r.cpuMs));
  return checkers.map((c, i) => {
    const mine = runs[i] as Timing[];
    if (mine.some((r) => r.code !== 1)) throw new Error(`${scenario} / ${c.checker}: expected exit 1 (planted findings), got ${mine.map((r) => r.code).join(',')}`);
    const wall = median(mine.map((r) => r.wallMs));
    const cpu = median(mine.map((r) => r.cpuMs));
    const mb = tree.bytes / 1e6;
    return {
      scenario,
      checker: c.checker,
      files: tree.files,
      megabytes: +mb.toFixed(2),
      findings: c.countFindings((mine[0] as Timing).stdout),
      medianWallMs: +wall.toFixed(0),
      medianCpuMs: +cpu.toFixed(0),
      mbPerWallSecond: +(mb / (wall / 1000)).toFixed(2),
      mbPerCpuSecond: +(mb / (cpu / 1000)).toFixed(2),
      ...(INSTRUCTIONS ? { instructions: countInstructions(c.argv, c.cwd) } : {}),
      ...(yardstickCpu.length === RUNS
        ? {
            hostReferenceCpuMs: +median(yardstickCpu).toFixed(0),
            // Each run against the reference's run of the same round: the host drifts less within a round.
            atTargetHostSpeed: scaledToTargetHost(mb, median(mine.map((r, round) => r.cpuMs / (yardstickCpu[round] as number)))),
          }
        : {}),
    };
  });
}

/**
 * MB per CPU second on a host as fast as when the targets were set, as a range: the run's CPU time
 * as a multiple of the reference's in the same round, times the reference's time then
 * (0.79-1.01 s). An estimate: Python and Node need not slow down alike.
 */
function scaledToTargetHost(megabytes: number, cpuPerReferenceCpu: number): string {
  const at = (seconds: number) => (megabytes / (cpuPerReferenceCpu * seconds)).toFixed(1);
  return `${at(REFERENCE_CPU_WHEN_SET.high)}-${at(REFERENCE_CPU_WHEN_SET.low)}`;
}

const leashFindings = (stdout: string) => (JSON.parse(stdout) as { findings: unknown[] }).findings.length;
const leashOn = (dir: string, cwd: string, args: string[] = [dir]) => [
  { checker: 'leash', argv: [process.execPath, CLI, 'check', '--all', '--format', 'json', ...args], cwd, countFindings: leashFindings },
  ...(BASELINE_CLI ? [{ checker: 'leash (baseline build)', argv: [process.execPath, BASELINE_CLI, 'check', '--all', '--format', 'json', ...args], cwd, countFindings: leashFindings }] : []),
];

/** The reference as its own project lays it out: scripts/ beside the trees it scans, under git. */
function referenceScript(): string | undefined {
  if (REFERENCE_SEED === undefined || !existsSync(REFERENCE_SEED)) return undefined;
  const seed = readFileSync(REFERENCE_SEED, 'utf8');
  return seed.slice(seed.indexOf('#!'));
}

function referenceTree(): Tree | undefined {
  const script = referenceScript();
  if (script === undefined) return undefined;
  const tree = generate('reference', { js: 0, ts: 0, py: 2000 }, 'agent', spawningTenth);
  mkdirSync(join(tree.dir, 'scripts'));
  writeFileSync(join(tree.dir, 'scripts/check_detached_spawns.py'), script);
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=b@b', '-c', 'user.name=b', ...args], { cwd: tree.dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'bench');
  return tree;
}

/**
 * The realistic tree (bench/lib/check-realistic-tree.ts): the reference and leash side by side on
 * its Python part (runs interleaved), leash on the whole tree, and leash on one minified bundle.
 */
function measureRealistic(): Row[] {
  const tree = generateRealisticTree({ py: 1500, ts: 1000, js: 500, bundles: 4 }, referenceScript());
  try {
    // The reference's own script is not part of the code it checks.
    writeFileSync(join(tree.python.dir, '.leash-check.json'), '{ "skip": ["scripts/**"] }\n');
    const python: Checker[] = [
      ...(referenceScript() !== undefined
        ? [{ checker: 'reference (python3)', argv: ['python3', 'scripts/check_detached_spawns.py', '--all'], cwd: tree.python.dir, countFindings: (out: string) => out.split('\n').filter((l) => /^(?:agent|tools)\/.*:\d+: /.test(l)).length }]
        : []),
      ...leashOn(tree.python.dir, tree.python.dir, []),
    ];
    const rows = measureRounds('realistic: Python part (under git)', { bytes: tree.python.bytes, files: tree.python.files }, python, 1);
    rows.push(...measureRounds('realistic: whole tree (Python, TS, JS, 4 bundles)', { bytes: tree.python.bytes + tree.js.bytes, files: tree.python.files + tree.js.files }, leashOn(tree.dir, tree.dir, ['python', 'js']), 1));
    const bundle = tree.bundles[0] as string;
    const bundleBytes = readFileSync(bundle).length;
    rows.push(...measureRounds('realistic: one minified bundle, whole process', { bytes: bundleBytes, files: 1 }, leashOn(tree.dir, tree.dir, [bundle]), 0));
    rows.push(...bundleMarginalRows(tree.dir, bundle, bundleBytes));
    const planted = tree.python.detaching;
    const found = rows.find((r) => r.scenario.includes('Python part') && r.checker === 'leash')?.findings ?? 0;
    if (found < planted) throw new Error(`realistic Python part: leash found ${found} of the ${planted} planted detaching spawns`);
    return rows;
  } finally {
    rmSync(tree.dir, { recursive: true, force: true });
  }
}

/**
 * What a bundle adds to a check, Node's start left out: leash on a small module alone and on the
 * same module with the bundle, their runs interleaved in the same rounds; the row is the bundle's
 * megabytes over the difference of the medians. The whole-process row above stays: this one does
 * not replace it.
 */
function bundleMarginalRows(dir: string, bundle: string, bundleBytes: number): Row[] {
  const small = join(dir, 'marginal-base.mjs');
  writeFileSync(small, "import { readFile } from 'node:fs/promises';\nexport const load = (path) => readFile(path, 'utf8');\n");
  const checkers: Checker[] = [
    { checker: 'leash, a module alone', argv: [process.execPath, CLI, 'check', '--all', '--format', 'json', small], cwd: dir, countFindings: leashFindings },
    { checker: 'leash, the module and the bundle', argv: [process.execPath, CLI, 'check', '--all', '--format', 'json', small, bundle], cwd: dir, countFindings: leashFindings },
  ];
  // A difference of two ~150 ms medians, read at /usr/bin/time's 10 ms: more rounds than the other rows.
  const [without, withBundle] = measureRounds(`realistic: one minified bundle, with and without it (median of ${MARGINAL_ROUNDS})`, { bytes: bundleBytes, files: 1 }, checkers, 0, MARGINAL_ROUNDS) as [Row, Row];
  const cpuMs = Math.max(withBundle.medianCpuMs - without.medianCpuMs, 1);
  const wallMs = Math.max(withBundle.medianWallMs - without.medianWallMs, 1);
  const mb = bundleBytes / 1e6;
  const marginal: Row = {
    scenario: 'realistic: one minified bundle, marginal (with minus without, same rounds)',
    checker: 'leash',
    files: 1,
    megabytes: +mb.toFixed(2),
    findings: withBundle.findings - without.findings,
    medianWallMs: wallMs,
    medianCpuMs: cpuMs,
    mbPerWallSecond: +(mb / (wallMs / 1000)).toFixed(2),
    mbPerCpuSecond: +(mb / (cpuMs / 1000)).toFixed(2),
    ...(without.instructions !== undefined && withBundle.instructions !== undefined ? { instructions: withBundle.instructions - without.instructions } : {}),
  };
  return [without, withBundle, marginal];
}

/** Each checker's runs interleaved, every run exiting `code` (1: planted findings; 0: none). */
function measureRounds(scenario: string, tree: { bytes: number; files: number }, checkers: Checker[], code: number, rounds = RUNS): Row[] {
  const runs = checkers.map((): Timing[] => []);
  for (let run = 0; run < rounds; run++) checkers.forEach((c, i) => (runs[i] as Timing[]).push(timeRun(c.argv, c.cwd)));
  return checkers.map((c, i) => {
    const mine = runs[i] as Timing[];
    if (mine.some((r) => r.code !== code)) throw new Error(`${scenario} / ${c.checker}: expected exit ${code}, got ${mine.map((r) => r.code).join(',')}`);
    const wall = median(mine.map((r) => r.wallMs));
    const cpu = median(mine.map((r) => r.cpuMs));
    const mb = tree.bytes / 1e6;
    return {
      scenario,
      checker: c.checker,
      files: tree.files,
      megabytes: +mb.toFixed(2),
      findings: c.countFindings((mine[0] as Timing).stdout),
      medianWallMs: +wall.toFixed(0),
      medianCpuMs: +cpu.toFixed(0),
      mbPerWallSecond: +(mb / (wall / 1000)).toFixed(2),
      mbPerCpuSecond: +(mb / (cpu / 1000)).toFixed(2),
      ...(INSTRUCTIONS ? { instructions: countInstructions(c.argv, c.cwd) } : {}),
    };
  });
}

if (INSTRUCTIONS && !existsSync(VALGRIND)) {
  console.error(`--instructions needs ${VALGRIND} (apt-get install valgrind)`);
  process.exit(2);
}
const CODE_CACHE = join(REPO, 'node_modules/.cache/proc-leash-check');
const codeCacheAtStart = existsSync(CODE_CACHE) && readdirSync(CODE_CACHE).some((name) => name.endsWith('.v8cache'));
const rows: Row[] = [];
const trees: Tree[] = [];
try {
  rows.push(...measureRealistic());
  const reference = REALISTIC_ONLY ? undefined : referenceTree();
  if (reference) trees.push(reference);
  const referenceChecker: Checker | undefined = reference && {
    checker: 'reference (python3)',
    argv: ['python3', 'scripts/check_detached_spawns.py', '--all'],
    cwd: reference.dir,
    countFindings: (out: string) => out.split('\n').filter((l) => /^agent\/.*:\d+: /.test(l)).length,
  };
  if (REALISTIC_ONLY) throw new Skip();
  const typical = generate('typical', { js: 1500, ts: 1500, py: 2000 }, 'pkg', spawningTenth);
  trees.push(typical);
  rows.push(...measure('typical (a tenth of the files spawn)', typical, leashOn(typical.dir, REPO), referenceChecker));
  const parsed = generate('parsed', { js: 1000, ts: 1000, py: 1000 }, 'pkg', everyFileParsed);
  trees.push(parsed);
  rows.push(...measure('every file parsed', parsed, leashOn(parsed.dir, REPO), referenceChecker));
  if (reference && referenceChecker) {
    rows.push(...measure('reference job (Python tree under git)', reference, [referenceChecker, ...leashOn(reference.dir, reference.dir, [])]));
  } else {
    console.log(`reference checker not found at ${REFERENCE_SEED}: its rows are left out, and so is the host's speed`);
  }
} catch (error) {
  if (!(error instanceof Skip)) throw error;
} finally {
  for (const tree of trees) rmSync(tree.dir, { recursive: true, force: true });
}

const columns: Array<keyof Row> = ['scenario', 'checker', 'files', 'megabytes', 'findings', 'medianWallMs', 'medianCpuMs', 'mbPerWallSecond', 'mbPerCpuSecond', 'hostReferenceCpuMs', 'atTargetHostSpeed'];
const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`leash check, whole process, cold, median of ${RUNS} runs${BASELINE_CLI ? ` interleaved with ${BASELINE_CLI}'s` : ''}, pinned to one core; load average ${load}`);
console.log(columns.map((c, i) => c.padEnd(widths[i] as number)).join('  '));
for (const row of rows) console.log(columns.map((c, i) => String(row[c] ?? '').padEnd(widths[i] as number)).join('  '));
const realisticRef = rows.find((r) => r.scenario.includes('Python part') && r.checker.startsWith('reference'));
const realisticLeash = rows.find((r) => r.scenario.includes('Python part') && r.checker === 'leash');
const realisticRatio =
  realisticRef && realisticLeash ? { wall: +(realisticRef.medianWallMs / realisticLeash.medianWallMs).toFixed(2), cpu: +(realisticRef.medianCpuMs / realisticLeash.medianCpuMs).toFixed(2) } : undefined;
if (realisticRatio) console.log(`leash vs the reference on the realistic tree's Python part: ${realisticRatio.cpu}x per CPU second, ${realisticRatio.wall}x per wall second (target >= ${TARGETS.realisticPythonRatio}x both)`);
console.log(
  `realistic targets: whole tree >= ${TARGETS.realisticMbPerCpuSecond} MB per CPU second, a minified bundle >= ${TARGETS.bundleMbPerSecond} MB/s ` +
    '(the whole-process row includes Node\'s start and module loading; the marginal row is what the bundle adds to a check, a difference of medians and so noisy)',
);
const ref = rows.find((r) => r.checker.startsWith('reference') && !r.scenario.startsWith('realistic'));
const leashOnRef = rows.find((r) => r.scenario.startsWith('reference job') && r.checker === 'leash');
const ratio = ref && leashOnRef ? { wall: +(ref.medianWallMs / leashOnRef.medianWallMs).toFixed(2), cpu: +(ref.medianCpuMs / leashOnRef.medianCpuMs).toFixed(2) } : undefined;
if (ratio) console.log(`leash vs the reference on its own job: ${ratio.cpu}x per CPU second, ${ratio.wall}x per wall second (target >= ${TARGETS.referenceRatio}x)`);
if (ref) {
  console.log(
    `host speed: hostReferenceCpuMs is the reference's own job in the same rounds (${REFERENCE_CPU_WHEN_SET.low * 1000}-${REFERENCE_CPU_WHEN_SET.high * 1000} ms when the targets were set); ` +
      'atTargetHostSpeed: MB per CPU second on a host that fast, from each run\'s CPU time against the reference\'s in its round (an estimate)',
  );
}
if (INSTRUCTIONS) {
  console.log('instructions of one run each (callgrind; git not counted):');
  for (const row of rows) console.log(`  ${row.scenario} / ${row.checker}: ${((row.instructions ?? 0) / 1e9).toFixed(2)} G, ${((row.instructions ?? 0) / 1e6 / row.megabytes).toFixed(0)} M per MB`);
  if (realisticRef?.instructions && realisticLeash?.instructions) console.log(`  leash vs the reference on the realistic tree's Python part, in instructions: ${(realisticRef.instructions / realisticLeash.instructions).toFixed(2)}x`);
  if (ref?.instructions && leashOnRef?.instructions) console.log(`  leash vs the reference on its own job, in instructions: ${(ref.instructions / leashOnRef.instructions).toFixed(2)}x`);
}
console.log(`typescript code cache in ${CODE_CACHE}: ${codeCacheAtStart ? 'present at the start' : 'absent at the start, written by the first run'}`);
console.log(`targets: typical >= ${TARGETS.typical} MB/s, every file parsed >= ${TARGETS.everyFileParsed} MB/s`);
mkdirSync(join(REPO, 'bench/results'), { recursive: true });
const out = join(REPO, 'bench/results/check.json');
writeFileSync(out, `${JSON.stringify({ node: process.version, runs: RUNS, loadAverage: load, baselineCli: BASELINE_CLI, typescriptCodeCacheAtStart: codeCacheAtStart, targets: TARGETS, referenceRatio: ratio, realisticPythonRatio: realisticRatio, referenceCpuSecondsWhenTargetsSet: REFERENCE_CPU_WHEN_SET, results: rows }, null, 2)}\n`);
console.log(`wrote ${out}`);
