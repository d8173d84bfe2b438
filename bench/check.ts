// Benchmark: `leash check` end to end, as a fresh process (cold), over a large generated tree of
// JavaScript, TypeScript and Python files. Three trees: a typical one, where most files never reach a
// parser; a parse-heavy one, where every Python file and a tenth of the JS/TS files pass the
// prefilter; and a worst case, where every file passes the prefilter and is parsed.
// Run with `npm run bench` or `node dist/bench/check.js` after a build. Aim: >= 5 MB/s on one core.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO, 'bin/leash.js');
const RUNS = 3;

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

// `detached: false` is harmless but passes the prefilter, so with `allParsed` every JS/TS file is parsed.
const JS_SPAWN = (i: number, allParsed: boolean) =>
  `import { spawn } from 'node:child_process';\nconst options${i} = { stdio: 'inherit' as const, cwd: process.cwd() };\nexport const run${i} = () => spawn('tool', ['--id', '${i}'], options${i});\n` +
  (i % 10 === 0 ? `spawn('daemon', [], { detached: true });\n` : allParsed ? `spawn('worker', [], { detached: false });\n` : '');
const PY_SPAWN = (i: number) =>
  `import subprocess\n\ndef run_${i}():\n    return subprocess.run(["tool", "--id", "${i}"], check=True, start_new_session=False)\n` +
  (i % 10 === 0 ? `subprocess.Popen(["daemon"], start_new_session=True)\n` : '');

interface Tree {
  dir: string;
  files: number;
  bytes: number;
}

function generate(name: string, counts: { js: number; ts: number; py: number }, spawnShare: number, lines: number, allParsed = false): Tree {
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
  const spawning = (i: number) => i % Math.round(1 / spawnShare) === 0;
  for (let i = 0; i < counts.js; i++) write(`web/m${i % 40}/f${i}.mjs`, jsBody(i, lines).replace(/: Promise<[^>]*>|: Record\w+\[\]| as \{[^}]*\}|export interface[^\n]*\n/g, '') + (spawning(i) ? JS_SPAWN(i, allParsed).replace(' as const', '') : ''));
  for (let i = 0; i < counts.ts; i++) write(`src/m${i % 40}/f${i}.ts`, jsBody(i, lines) + (spawning(i) ? JS_SPAWN(i, allParsed) : ''));
  for (let i = 0; i < counts.py; i++) write(`pkg/m${i % 40}/f${i}.py`, pyBody(i, lines) + (spawning(i) ? PY_SPAWN(i) : ''));
  return { dir, files, bytes };
}

function timeRun(tree: Tree): { ms: number; code: number | null } {
  // One core: pinned with taskset where it exists, so the number does not depend on idle cores.
  const pin = existsSync('/usr/bin/taskset') ? ['taskset', '-c', '0'] : [];
  const argv = [...pin, process.execPath, CLI, 'check', '--all', '--format', 'json', tree.dir];
  const start = process.hrtime.bigint();
  const result = spawnSync(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'ignore', 'inherit'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, code: result.status };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const scenarios = [
  { name: 'typical (10% of files spawn)', tree: generate('typical', { js: 1500, ts: 1500, py: 2000 }, 0.1, 150) },
  { name: 'parse-heavy (all Python, 10% of JS/TS parsed)', tree: generate('heavy', { js: 1000, ts: 1000, py: 1000 }, 1, 150) },
  { name: 'worst case (every file parsed)', tree: generate('parsed', { js: 1000, ts: 1000, py: 1000 }, 1, 150, true) },
];

const rows: Array<Record<string, number | string>> = [];
try {
  for (const { name, tree } of scenarios) {
    const runs = Array.from({ length: RUNS }, () => timeRun(tree));
    if (runs.some((r) => r.code !== 1)) throw new Error(`${name}: expected exit 1 (planted findings), got ${runs.map((r) => r.code).join(',')}`);
    const ms = median(runs.map((r) => r.ms));
    rows.push({
      scenario: name,
      files: tree.files,
      megabytes: +(tree.bytes / 1e6).toFixed(2),
      medianMs: +ms.toFixed(0),
      filesPerSecond: +(tree.files / (ms / 1000)).toFixed(0),
      megabytesPerSecond: +(tree.bytes / 1e6 / (ms / 1000)).toFixed(2),
    });
  }
} finally {
  for (const { tree } of scenarios) rmSync(tree.dir, { recursive: true, force: true });
}

const columns = ['scenario', 'files', 'megabytes', 'medianMs', 'filesPerSecond', 'megabytesPerSecond'];
const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
console.log(`leash check, whole process, cold, median of ${RUNS} runs, one core (target: >= 5 MB/s)`);
console.log(columns.map((c, i) => c.padEnd(widths[i] as number)).join('  '));
for (const row of rows) console.log(columns.map((c, i) => String(row[c]).padEnd(widths[i] as number)).join('  '));
mkdirSync(join(REPO, 'bench/results'), { recursive: true });
const out = join(REPO, 'bench/results/check.json');
writeFileSync(out, `${JSON.stringify({ node: process.version, runs: RUNS, targetMegabytesPerSecond: 5, results: rows }, null, 2)}\n`);
console.log(`wrote ${out}`);
