#!/usr/bin/env node
// Measures `leash check` on the labelled corpus (run by hand after `npm run build` and
// `node test/corpus/checkout.mjs`; not in CI, which has no network to bring the sources).
// For each repository of manifest.json present under test/corpus/src/<owner>+<name> it runs the
// check as a user would (`leash check --all --format json .` in that folder, a process of its own),
// matches every finding against labels.tsv, and prints per set (tuned, held-out): precision,
// recall and the precision of error findings alone; then the speed, in MB of the files the check
// reads per CPU-second of the check's processes, over those runs and over one run of the whole
// corpus. Absent repositories are named, not measured.
//   node test/corpus/measure.mjs [--verbose]   (--verbose lists every finding and every miss)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// The build's procfs reader (measure.mjs runs after `npm run build`, as the check it measures does).
const { waitedChildrenCpuSeconds: childrenCpu } = await import('../../dist/src/sys/procfs.js');

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const verbose = process.argv.includes('--verbose');
// CORPUS_CHECK=package runs this tree's check package directly (packages/check/bin/leash-check.js):
// in a git worktree whose node_modules links to another checkout, `leash check` would load (or
// refuse) that checkout's package instead.
const direct = process.env.CORPUS_CHECK === 'package';
const leash = direct ? join(root, 'packages', 'check', 'bin', 'leash-check.js') : join(root, 'bin', 'leash.js');
const checkDist = join(root, 'packages', 'check', 'dist', 'check');
if (!existsSync(join(checkDist, 'files.js'))) {
  console.error('measure: packages/check/dist is missing: run `npm run build` first');
  process.exit(69);
}
const { listTargets, PathFilter } = await import(join(checkDist, 'files.js'));
const { loadConfig } = await import(join(checkDist, 'config.js'));

const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8'));

/** Sites by repo: each a path, a line span, and whether a detached child is really there. */
function readLabels() {
  const byRepo = new Map();
  const rows = readFileSync(join(here, 'labels.tsv'), 'utf8').split('\n')
    .filter((l) => l.trim() && !l.startsWith('#')).slice(1);
  for (const row of rows) {
    const [repo, path, lines, label, what, reason] = row.split('\t');
    if (!['TP', 'FP', 'FN', 'TN'].includes(label) || !reason) throw new Error(`labels.tsv: bad row: ${row}`);
    const [first, last = first] = lines.split('-').map(Number);
    const site = { repo, path, first, last, positive: label === 'TP' || label === 'FN', label, what, reason, hits: 0 };
    if (!byRepo.has(repo)) byRepo.set(repo, []);
    byRepo.get(repo).push(site);
  }
  return byRepo;
}

// NODE_EXTRA_CA_CERTS (set on this project's machines) costs every Node start about 0.03 CPU-s
// reading certificates the check never uses: left out, as bench/check-startup.ts does.
const env = { ...process.env };
delete env.NODE_EXTRA_CA_CERTS;

const labels = readLabels();
const sets = new Map();
const absent = [];
const unlabelled = [];
const misses = [];
for (const { repo, commit, set } of manifest.repositories) {
  const dir = join(here, 'src', repo.replace('/', '+'));
  if (!existsSync(dir)) { absent.push(`${repo}@${commit.slice(0, 12)} (${set})`); continue; }
  const sites = labels.get(repo) ?? [];
  for (const s of sites) s.hits = 0;
  const { targets } = listTargets(['.'], dir, new PathFilter(loadConfig(dir)));
  let bytes = 0;
  for (const t of targets) bytes += statSync(t.absolute).size;
  const before = childrenCpu();
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [leash, ...(direct ? [] : ['check']), '--all', '--format', 'json', '.'], { cwd: dir, env, encoding: 'utf8', maxBuffer: 1 << 28 });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = before === undefined ? undefined : childrenCpu() - before;
  if (run.status !== 0 && run.status !== 1) {
    console.error(`measure: ${repo}: leash check exited ${run.status}: ${run.stderr.slice(0, 400)}`);
  }
  const report = JSON.parse(run.stdout);
  const totals = sets.get(set) ?? { repos: 0, files: 0, bytes: 0, cpu: 0, wall: 0, tp: 0, fp: 0, fn: 0, errTp: 0, errFp: 0, findings: 0, failed: 0 };
  sets.set(set, totals);
  totals.repos++; totals.files += targets.length; totals.bytes += bytes; totals.cpu += cpu ?? NaN; totals.wall += wall;
  totals.failed += report.failures.length;
  for (const f of report.findings) {
    if (f.rule === 'unused-marker') continue;
    totals.findings++;
    const site = sites.find((s) => s.path === f.path && f.line >= s.first && f.line <= s.last);
    const error = f.severity === 'error';
    const line = `${repo} ${f.path}:${f.line} ${f.rule} (${f.severity})`;
    if (!site) { unlabelled.push(line); totals.fp++; if (error) totals.errFp++; continue; }
    site.hits++;
    if (site.positive) { totals.tp++; if (error) totals.errTp++; } else { totals.fp++; if (error) totals.errFp++; }
    if (verbose) console.log(`  ${site.positive ? 'TP' : 'FP'} ${line}: ${site.reason}`);
  }
  for (const s of sites) {
    if (s.positive && s.hits === 0) { totals.fn++; misses.push(`${repo} ${s.path}:${s.first} ${s.what}: ${s.reason}`); }
  }
}

// The whole corpus as one run (`leash check --all` naming every repository's folder, from
// src/): the check's own speed, its start-up paid once. The per-repository runs above pay it 46
// times; a small repository's run is all start-up (bench/check-startup.ts measures that part).
const present = manifest.repositories.map(({ repo }) => repo.replace('/', '+')).filter((key) => existsSync(join(here, 'src', key)));
let whole;
if (present.length > 0) {
  const src = join(here, 'src');
  const { targets } = listTargets(present, src, new PathFilter(loadConfig(src)));
  let bytes = 0;
  for (const t of targets) bytes += statSync(t.absolute).size;
  const before = childrenCpu();
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [leash, ...(direct ? [] : ['check']), '--all', '--format', 'json', ...present], { cwd: src, env, encoding: 'utf8', maxBuffer: 1 << 28 });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = before === undefined ? undefined : childrenCpu() - before;
  const findings = run.status === 0 || run.status === 1 ? JSON.parse(run.stdout).findings.filter((f) => f.rule !== 'unused-marker').length : undefined;
  whole = { files: targets.length, bytes, cpu, wall, findings };
}

const pct = (a, b) => (b === 0 ? '—' : `${((100 * a) / b).toFixed(1)} %`);
console.log(`corpus: ${manifest.repositories.length} repositories in the manifest, ${manifest.repositories.length - absent.length} present`);
if (absent.length) console.log(`absent (run test/corpus/checkout.mjs): ${absent.join(', ')}`);
console.log('');
console.log('| set | repos | files | findings | TP | FP | FN | precision | recall | errors precise | MB/CPU-s |');
console.log('|-----|-------|-------|----------|----|----|----|-----------|--------|----------------|----------|');
for (const name of ['tuned', 'held-out']) {
  const t = sets.get(name);
  if (!t) continue;
  const speed = Number.isNaN(t.cpu) ? '—' : (t.bytes / 1e6 / t.cpu).toFixed(1);
  console.log(`| ${name} | ${t.repos} | ${t.files} | ${t.findings} | ${t.tp} | ${t.fp} | ${t.fn} | ${pct(t.tp, t.tp + t.fp)} | ${pct(t.tp, t.tp + t.fn)} | ${pct(t.errTp, t.errTp + t.errFp)} | ${speed} |`);
}
const all = [...sets.values()];
const sum = (k) => all.reduce((a, t) => a + t[k], 0);
console.log('');
console.log(`speed, one run per repository: ${(sum('bytes') / 1e6).toFixed(1)} MB in ${sum('files')} files read, ${sum('cpu').toFixed(2)} CPU-s (${sum('wall').toFixed(2)} s wall) over ${sum('repos')} runs: ${(sum('bytes') / 1e6 / sum('cpu')).toFixed(1)} MB per CPU-second (start-up included)`);
if (whole) {
  const same = whole.findings === sum('findings') ? 'the same findings' : `${whole.findings} findings against ${sum('findings')}: NOT the same`;
  console.log(`speed, the whole corpus in one run: ${(whole.bytes / 1e6).toFixed(1)} MB in ${whole.files} files read, ${whole.cpu?.toFixed(2) ?? '—'} CPU-s (${whole.wall.toFixed(2)} s wall): ${whole.cpu ? (whole.bytes / 1e6 / whole.cpu).toFixed(1) : '—'} MB per CPU-second (${same})`);
}
if (sum('failed')) console.log(`files that could not be checked: ${sum('failed')}`);
if (unlabelled.length) { console.log(`\nunlabelled findings (counted as FP until labelled):`); for (const u of unlabelled) console.log(`  ${u}`); }
if (misses.length) { console.log(`\nmissed (FN):`); for (const m of misses) console.log(`  ${m}`); }
