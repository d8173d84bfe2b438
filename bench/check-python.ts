// Benchmark and equivalence check of the Python analyser's statement split: every Python file
// under the given folders (default: this machine's Python standard library, found through
// `python3`) that passes the prefilter is analysed in one process both ways, parsing the whole
// file and parsing only the statements that can matter, interleaved file by file (the order
// alternating between rounds), CPU time summed per way. The two must give the same findings; a
// difference is printed and makes the exit code 1. Prints a table and writes
// bench/results/check-python.json.
// Run: npm run build && node dist/bench/check-python.js [FOLDER...]   (also `npm run bench`)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mayMatter } from 'proc-leash-check';
import type * as Rules from '../packages/check/src/check/python-rules.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const ROUNDS = 3;
// An internal of proc-leash-check, not part of its exports: loaded from its build by path.
const { analysePython, pythonParses } = (await import(pathToFileURL(join(REPO, 'packages/check/dist/check/python-rules.js')).href)) as typeof Rules;

function pythonLibrary(): string[] {
  try {
    return [execFileSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' }).trim()];
  } catch {
    return [join(REPO, 'test/fixtures/check/python')];
  }
}

function pythonFiles(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) pythonFiles(path, found);
    else if (entry.isFile() && entry.name.endsWith('.py')) found.push(path);
  }
  return found;
}

const folders = process.argv.length > 2 ? process.argv.slice(2) : pythonLibrary();
const texts = folders
  .flatMap((folder) => pythonFiles(folder))
  .map((path) => ({ path, text: readFileSync(path, 'utf8') }))
  .filter(({ text }) => mayMatter(text, 'python'));
const megabytes = texts.reduce((sum, { text }) => sum + text.length, 0) / 1e6;
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};
const key = (findings: unknown) => JSON.stringify(findings);

const rounds: Array<{ wholeMs: number; statementsMs: number }> = [];
const differences: string[] = [];
const failures: string[] = [];
let findings = 0;
for (let round = 0; round < ROUNDS; round++) {
  let wholeMs = 0;
  let statementsMs = 0;
  for (const { path, text } of texts) {
    const ways = round % 2 === 0 ? [true, false] : [false, true];
    const results: Record<string, string> = {};
    for (const whole of ways) {
      const started = cpuMs();
      try {
        results[String(whole)] = key(await analysePython(text, { whole }));
      } catch (error) {
        results[String(whole)] = `threw ${error instanceof Error ? error.message : String(error)}`;
        if (round === 0) failures.push(`${path} (${whole ? 'whole' : 'statements'}): ${results[String(whole)]}`);
      }
      if (whole) wholeMs += cpuMs() - started;
      else statementsMs += cpuMs() - started;
    }
    if (round === 0) {
      findings += results.true?.startsWith('[') ? (JSON.parse(results.true) as unknown[]).length : 0;
      if (results.true !== results.false) differences.push(`${path}\n  whole:      ${results.true}\n  statements: ${results.false}`);
    }
  }
  rounds.push({ wholeMs: Math.round(wholeMs), statementsMs: Math.round(statementsMs) });
}

const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const perRound = (count: number) => Math.round(count / ROUNDS);
const parsedShare = pythonParses.statementFilesText > 0 ? pythonParses.statementsText / pythonParses.statementFilesText : 0;
console.log(`Python analysis, whole file vs statements that can matter, one process, ${ROUNDS} interleaved rounds; load average ${load}`);
console.log(`corpus: ${folders.join(', ')}: ${texts.length} files passing the prefilter, ${megabytes.toFixed(2)} MB, ${findings} findings`);
console.log('round  wholeMs  statementsMs  speedup');
for (const [index, r] of rounds.entries()) console.log(`${String(index + 1).padEnd(5)}  ${String(r.wholeMs).padEnd(7)}  ${String(r.statementsMs).padEnd(12)}  ${(r.wholeMs / Math.max(1, r.statementsMs)).toFixed(2)}x`);
console.log(
  `per round: ${perRound(pythonParses.statements)} files by statements (${(parsedShare * 100).toFixed(1)} % of their text parsed), ${perRound(pythonParses.none)} with no statement to parse, ` +
    `${perRound(pythonParses.whole) - texts.length} whole (the split declined), ${perRound(pythonParses.wholeAfterStatements)} whole after the statements`,
);
for (const failure of failures) console.log(`could not analyse: ${failure}`);
for (const difference of differences) console.log(`DIFFERENT FINDINGS: ${difference}`);
console.log(differences.length === 0 ? 'findings: identical both ways' : `findings: ${differences.length} file(s) differ`);
mkdirSync(join(REPO, 'bench/results'), { recursive: true });
const out = join(REPO, 'bench/results/check-python.json');
writeFileSync(
  out,
  `${JSON.stringify({ node: process.version, loadAverage: load, folders, files: texts.length, megabytes: +megabytes.toFixed(2), findings, rounds, parses: pythonParses, parsedShare: +parsedShare.toFixed(3), differences: differences.length, failures: failures.length }, null, 2)}\n`,
);
console.log(`wrote ${out}`);
if (differences.length > 0) process.exitCode = 1;
