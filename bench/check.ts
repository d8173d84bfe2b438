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
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** LEASH_CHECK_CLI measures another build (an older checkout, say) on the same trees. */
const CLI = process.env.LEASH_CHECK_CLI ?? join(REPO, 'bin/leash.js');
/**
 * LEASH_CHECK_BASELINE_CLI: a second build measured side by side, its runs interleaved with this
 * one's on the same trees, so that the neighbours' load falls on both alike.
 */
const BASELINE_CLI = process.env.LEASH_CHECK_BASELINE_CLI;
const RUNS = 3;
/** The reference checker: a behaviour seed, read at run time and never copied into this repository. */
const REFERENCE_SEED = process.env.LEASH_REFERENCE_CHECKER ?? '/work/shared/seeds/002_63915fa2c0050667.txt';
const TIME = '/usr/bin/time';
const TARGETS = { typical: 30, everyFileParsed: 10, referenceRatio: 1.5 };

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

function timeRun(argv: string[], cwd: string): Timing {
  // One core: pinned with taskset where it exists, so the number does not depend on idle cores.
  const pin = existsSync('/usr/bin/taskset') ? ['taskset', '-c', '0'] : [];
  const usage = join(tmpdir(), `leash-bench-time-${process.pid}`);
  const timed = existsSync(TIME) ? [TIME, '-f', '%U %S', '-o', usage] : [];
  const command = [...timed, ...pin, ...argv];
  const start = process.hrtime.bigint();
  const result = spawnSync(command[0] as string, command.slice(1), { cwd, encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' } });
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
}

/** Measures each checker on one tree, their runs interleaved (A B A B ...), a row per checker. */
function measure(scenario: string, tree: Tree, checkers: Array<{ checker: string; argv: string[]; cwd: string; countFindings: (stdout: string) => number }>): Row[] {
  const runs = checkers.map((): Timing[] => []);
  for (let run = 0; run < RUNS; run++) checkers.forEach((c, i) => (runs[i] as Timing[]).push(timeRun(c.argv, c.cwd)));
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
    };
  });
}

const leashFindings = (stdout: string) => (JSON.parse(stdout) as { findings: unknown[] }).findings.length;
const leashOn = (dir: string, cwd: string, args: string[] = [dir]) => [
  { checker: 'leash', argv: [process.execPath, CLI, 'check', '--all', '--format', 'json', ...args], cwd, countFindings: leashFindings },
  ...(BASELINE_CLI ? [{ checker: 'leash (baseline build)', argv: [process.execPath, BASELINE_CLI, 'check', '--all', '--format', 'json', ...args], cwd, countFindings: leashFindings }] : []),
];

/** The reference as its own project lays it out: scripts/ beside the trees it scans, under git. */
function referenceTree(): Tree | undefined {
  if (!existsSync(REFERENCE_SEED)) return undefined;
  const seed = readFileSync(REFERENCE_SEED, 'utf8');
  const tree = generate('reference', { js: 0, ts: 0, py: 2000 }, 'agent', spawningTenth);
  mkdirSync(join(tree.dir, 'scripts'));
  writeFileSync(join(tree.dir, 'scripts/check_detached_spawns.py'), seed.slice(seed.indexOf('#!')));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=b@b', '-c', 'user.name=b', ...args], { cwd: tree.dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'bench');
  return tree;
}

const CODE_CACHE = join(REPO, 'node_modules/.cache/proc-leash-check');
const codeCacheAtStart = existsSync(CODE_CACHE) && readdirSync(CODE_CACHE).some((name) => name.endsWith('.v8cache'));
const rows: Row[] = [];
const trees: Tree[] = [];
try {
  const typical = generate('typical', { js: 1500, ts: 1500, py: 2000 }, 'pkg', spawningTenth);
  trees.push(typical);
  rows.push(...measure('typical (a tenth of the files spawn)', typical, leashOn(typical.dir, REPO)));
  const parsed = generate('parsed', { js: 1000, ts: 1000, py: 1000 }, 'pkg', everyFileParsed);
  trees.push(parsed);
  rows.push(...measure('every file parsed', parsed, leashOn(parsed.dir, REPO)));
  const reference = referenceTree();
  if (reference) {
    trees.push(reference);
    const job = 'reference job (Python tree under git)';
    const referenceChecker = { checker: 'reference (python3)', argv: ['python3', 'scripts/check_detached_spawns.py', '--all'], cwd: reference.dir, countFindings: (out: string) => out.split('\n').filter((l) => /^agent\/.*:\d+: /.test(l)).length };
    rows.push(...measure(job, reference, [referenceChecker, ...leashOn(reference.dir, reference.dir, [])]));
  } else {
    console.log(`reference checker not found at ${REFERENCE_SEED}: its rows are left out`);
  }
} finally {
  for (const tree of trees) rmSync(tree.dir, { recursive: true, force: true });
}

const columns: Array<keyof Row> = ['scenario', 'checker', 'files', 'megabytes', 'findings', 'medianWallMs', 'medianCpuMs', 'mbPerWallSecond', 'mbPerCpuSecond'];
const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`leash check, whole process, cold, median of ${RUNS} runs${BASELINE_CLI ? ` interleaved with ${BASELINE_CLI}'s` : ''}, pinned to one core; load average ${load}`);
console.log(columns.map((c, i) => c.padEnd(widths[i] as number)).join('  '));
for (const row of rows) console.log(columns.map((c, i) => String(row[c]).padEnd(widths[i] as number)).join('  '));
const ref = rows.find((r) => r.checker.startsWith('reference'));
const leashOnRef = rows.find((r) => r.scenario.startsWith('reference') && r.checker === 'leash');
const ratio = ref && leashOnRef ? { wall: +(ref.medianWallMs / leashOnRef.medianWallMs).toFixed(2), cpu: +(ref.medianCpuMs / leashOnRef.medianCpuMs).toFixed(2) } : undefined;
if (ratio) console.log(`leash vs the reference on its own job: ${ratio.cpu}x per CPU second, ${ratio.wall}x per wall second (target >= ${TARGETS.referenceRatio}x)`);
console.log(`typescript code cache in ${CODE_CACHE}: ${codeCacheAtStart ? 'present at the start' : 'absent at the start, written by the first run'}`);
console.log(`targets: typical >= ${TARGETS.typical} MB/s, every file parsed >= ${TARGETS.everyFileParsed} MB/s`);
mkdirSync(join(REPO, 'bench/results'), { recursive: true });
const out = join(REPO, 'bench/results/check.json');
writeFileSync(out, `${JSON.stringify({ node: process.version, runs: RUNS, loadAverage: load, baselineCli: BASELINE_CLI, typescriptCodeCacheAtStart: codeCacheAtStart, targets: TARGETS, referenceRatio: ratio, results: rows }, null, 2)}\n`);
console.log(`wrote ${out}`);
