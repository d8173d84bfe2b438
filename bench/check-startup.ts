// Benchmark: what a pre-commit hook feels, `leash check` on a handful of files, as a whole fresh
// process: an empty run (a repository with nothing to check), one clean file (the prefilter clears
// it: no parser loads), one Python file with a finding (`Popen(..., start_new_session=True)`) and one
// JS file with a finding (`spawn(..., { detached: true })`), each through `leash check` (the hook's
// entry: the core finds proc-leash-check) and `leash-check` (the check's own bin), beside `node -e 0`.
// Target (issue 31): a file with a finding in <= 0.10 CPU-s and <= 120 ms wall, on a quiet machine.
//
// Medians of interleaved rounds (--runs N, default 11), after one warm-up of each (which writes the
// typescript code cache where it is missing, as a user's first run does). CPU time is the process's
// user + system time with its children's (git), from wait4 through Python where /usr/bin/python3
// exists (microseconds), else /usr/bin/time (10 ms steps). Writes bench/results/check-startup.json.
// Run with `node dist/bench/check-startup.js` after a build.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = Math.max(1, Number(process.argv[process.argv.indexOf('--runs') + 1]) || 11);
const TARGET = { cpuSeconds: 0.1, wallMs: 120 };
const PYTHON = '/usr/bin/python3';
const TIME = '/usr/bin/time';

// Runs argv, waits with wait4 and prints "user system" (the child and the children it waited for).
const WAIT4 = 'import os, sys\npid = os.fork()\nif pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n_, status, usage = os.wait4(pid, 0)\nsys.stderr.write("%.6f %.6f %d\\n" % (usage.ru_utime, usage.ru_stime, os.waitstatus_to_exitcode(status)))\n';

interface Timing {
  cpuMs: number;
  wallMs: number;
  code: number | null;
}

function benchEnv(): NodeJS.ProcessEnv {
  // No NODE_OPTIONS and no NODE_EXTRA_CA_CERTS (the latter costs every Node start tens of ms).
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' };
}

function timeRun(argv: string[], cwd: string): Timing {
  const viaPython = existsSync(PYTHON);
  const usageFile = join(tmpdir(), `leash-startup-time-${process.pid}`);
  const command = viaPython ? [PYTHON, '-S', '-c', WAIT4, ...argv] : existsSync(TIME) ? [TIME, '-f', '%U %S %x', '-o', usageFile, ...argv] : argv;
  const start = process.hrtime.bigint();
  const result = spawnSync(command[0]!, command.slice(1), { cwd, encoding: 'utf8', env: benchEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  let line = '';
  if (viaPython) line = result.stderr.trim().split('\n').at(-1) ?? '';
  else if (existsSync(usageFile)) {
    line = readFileSync(usageFile, 'utf8').trim().split('\n').at(-1) ?? '';
    rmSync(usageFile, { force: true });
  }
  const [user, system, code] = line.split(' ').map(Number);
  if (user === undefined || system === undefined || Number.isNaN(user)) return { cpuMs: wallMs, wallMs, code: result.status };
  return { cpuMs: (user + system) * 1000, wallMs, code: code ?? result.status };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

// A small project under git: what a commit touches.
const project = mkdtempSync(join(tmpdir(), 'leash-check-startup-'));
const empty = mkdtempSync(join(tmpdir(), 'leash-check-startup-empty-'));
const files: Record<string, string> = {
  'app.py': 'import json\nfrom pathlib import Path\n\n\ndef load(path):\n    """Reads one record."""\n    return json.loads(Path(path).read_text())\n\n\nif __name__ == "__main__":\n    print(load("record.json"))\n',
  'run.py': 'import subprocess\n\n\ndef start(command):\n    return subprocess.Popen(command, start_new_session=True)\n',
  'spawn.mjs': "import { spawn } from 'node:child_process';\n\nexport function start(command, args) {\n  return spawn(command, args, { detached: true });\n}\n",
};
for (const [name, text] of Object.entries(files)) writeFileSync(join(project, name), text);
writeFileSync(join(empty, 'README.md'), '# nothing to check\n');
for (const dir of [project, empty]) {
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@leash.invalid', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'bench');
}

const ENTRIES = [
  { name: 'leash check', argv: [process.execPath, join(REPO, 'bin/leash.js'), 'check'] },
  { name: 'leash-check', argv: [process.execPath, join(REPO, 'packages/check/bin/leash-check.js')] },
];
const SCENARIOS = [
  { name: 'empty run', cwd: empty, args: [] as string[], code: 0 },
  { name: 'one clean file', cwd: project, args: ['app.py'], code: 0 },
  { name: 'one Python finding', cwd: project, args: ['run.py'], code: 1 },
  { name: 'one JS finding', cwd: project, args: ['spawn.mjs'], code: 1 },
];
interface Case {
  scenario: string;
  entry: string;
  argv: string[];
  cwd: string;
  code: number;
  timings: Timing[];
}
const cases: Case[] = [{ scenario: 'node -e 0', entry: 'node', argv: [process.execPath, '-e', '0'], cwd: project, code: 0, timings: [] }];
for (const scenario of SCENARIOS) {
  for (const entry of ENTRIES) cases.push({ scenario: scenario.name, entry: entry.name, argv: [...entry.argv, ...scenario.args], cwd: scenario.cwd, code: scenario.code, timings: [] });
}

try {
  for (const c of cases) {
    const warm = timeRun(c.argv, c.cwd);
    if (warm.code !== c.code) throw new Error(`${c.entry} ${c.scenario}: exit ${warm.code}, expected ${c.code}`);
  }
  for (let round = 0; round < RUNS; round++) {
    for (const c of cases) {
      const timing = timeRun(c.argv, c.cwd);
      if (timing.code !== c.code) throw new Error(`${c.entry} ${c.scenario}: exit ${timing.code}, expected ${c.code}`);
      c.timings.push(timing);
    }
  }
} finally {
  rmSync(project, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
}

const rows = cases.map((c) => {
  const cpu = median(c.timings.map((t) => t.cpuMs)) / 1000;
  const wall = median(c.timings.map((t) => t.wallMs));
  const finding = c.scenario.includes('finding');
  return {
    scenario: c.scenario,
    entry: c.entry,
    runs: c.timings.length,
    medianCpuSeconds: Number(cpu.toFixed(4)),
    medianWallMs: Number(wall.toFixed(1)),
    minCpuSeconds: Number((Math.min(...c.timings.map((t) => t.cpuMs)) / 1000).toFixed(4)),
    cpuTargetMet: finding ? cpu <= TARGET.cpuSeconds : undefined,
    wallTargetMet: finding ? wall <= TARGET.wallMs : undefined,
  };
});

const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`leash check start-up: whole process, median of ${RUNS} interleaved runs (node ${process.version}, load average ${load})`);
console.log(`target for a file with a finding: <= ${TARGET.cpuSeconds} CPU-s and <= ${TARGET.wallMs} ms wall (quiet machine: wall time under load measures the neighbours)`);
if (process.env.NODE_EXTRA_CA_CERTS) console.log('(NODE_EXTRA_CA_CERTS is set here; the runs go without it: it costs every Node start about 0.03 CPU-s)');
console.log('\n| scenario | entry | CPU-s (median) | CPU-s (min) | wall ms (median) | CPU target | wall target |');
console.log('|---|---|---|---|---|---|---|');
const verdict = (met: boolean | undefined) => (met === undefined ? '' : met ? 'met' : 'missed');
for (const row of rows) {
  console.log(`| ${row.scenario} | ${row.entry} | ${row.medianCpuSeconds.toFixed(3)} | ${row.minCpuSeconds.toFixed(3)} | ${row.medianWallMs.toFixed(0)} | ${verdict(row.cpuTargetMet)} | ${verdict(row.wallTargetMet)} |`);
}
mkdirSync(join(REPO, 'bench/results'), { recursive: true });
writeFileSync(
  join(REPO, 'bench/results/check-startup.json'),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, loadAverage: load, runs: RUNS, target: TARGET, rows }, null, 2)}\n`,
);
