// Benchmark of the packages as a user installs them: the core packed, installed alone into a scratch
// project from npm's cache, then its install size (all of node_modules, and per dependency) and the
// time `import 'proc-leash'` takes in a fresh Node process; then the same for the core with the
// check's package, proc-leash-check (its parsers: typescript, tree-sitter), and its import time.
// Targets from issue 9: core install ≤ 5 MB, import ≤ 30 ms.
// Run: npm run build && node dist/bench/package.js   (not part of npm test)
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeResult, PACKAGES, packAll, scratchProject } from '../test/package/packages.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const RUNS = 15;
const CHECK_ONLY = ['typescript', '@vscode/tree-sitter-wasm'];
const MB = 1024 * 1024;

/** Bytes of the files under a folder (apparent size, symlinks not followed). */
function folderBytes(path: string): number {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  let total = 0;
  for (const entry of readdirSync(path)) total += folderBytes(join(path, entry));
  return total;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** The relative imports reachable from an ES file (static `import`/`export ... from` only), and the bare ones. */
function moduleGraph(entry: string): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm)) {
      const spec = match[1]!;
      if (spec.startsWith('.')) queue.push(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:')) bare.add(spec);
    }
  }
  return { files, bare };
}

/** Every package in a project's node_modules with its size, largest first. */
function installedPackages(modules: string): Array<{ name: string; bytes: number }> {
  const perPackage: Array<{ name: string; bytes: number }> = [];
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((sub) => `${entry}/${sub}`) : [entry];
    for (const name of names) perPackage.push({ name, bytes: folderBytes(join(modules, name)) });
  }
  return perPackage.sort((a, b) => b.bytes - a.bytes);
}

/**
 * Import time: fresh processes, the import alone timed inside each (Node's own start excluded).
 * The first import() of any ES module starts Node's ESM loader: a one-line module in the same
 * project, timed the same way, is the floor the package's own cost sits on.
 */
function importTimes(dir: string, specifier: string) {
  writeFileSync(join(dir, 'one-line.mjs'), 'export const x = 1;\n');
  const importMs: number[] = [];
  const floorMs: number[] = [];
  const processMs: number[] = [];
  const bareMs: number[] = [];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (let run = 0; run < RUNS; run += 1) {
    const started = performance.now();
    const result = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `const t = performance.now(); await import('${specifier}'); process.stdout.write(String(performance.now() - t));`],
      { cwd: dir, encoding: 'utf8', env },
    );
    processMs.push(performance.now() - started);
    if (result.status !== 0) throw new Error(`import failed: ${result.stderr}`);
    importMs.push(Number(result.stdout));
    const floor = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "const t = performance.now(); await import('./one-line.mjs'); process.stdout.write(String(performance.now() - t));"],
      { cwd: dir, encoding: 'utf8', env },
    );
    floorMs.push(Number(floor.stdout));
    const bareStart = performance.now();
    spawnSync(process.execPath, ['--input-type=module', '-e', ''], { cwd: dir, env });
    bareMs.push(performance.now() - bareStart);
  }
  return { importMs, floorMs, processMs, bareMs };
}

const [core, check] = [PACKAGES[0]!, PACKAGES[1]!];
const packDir = mkdtempSync(join(tmpdir(), 'leash-bench-pack-'));
process.stderr.write('packing both packages, installing the core alone, then both, from npm\'s cache (about 20 s)...\n');
const tarballs = packAll(packDir);
const project = scratchProject(tarballs.slice(0, 1));
const both = scratchProject(tarballs);
try {
  for (const { install } of [project, both]) if (install.status !== 0) throw new Error(`install failed: ${describeResult(install)}`);
  const modules = join(project.dir, 'node_modules');
  const perPackage = installedPackages(modules);
  const total = perPackage.reduce((sum, row) => sum + row.bytes, 0);
  const own = perPackage.find((row) => row.name === core.name)!.bytes;
  const checkOnlyInCore = perPackage.filter((row) => CHECK_ONLY.includes(row.name) || row.name === check.name).map((row) => row.name);
  const coreTimes = importTimes(project.dir, core.name);

  const graph = moduleGraph(join(modules, core.name, 'dist/src/index.js'));
  const graphBytes = [...graph.files].reduce((sum, file) => sum + lstatSync(file).size, 0);
  const loadsCheck = [...graph.files].some((file) => file.includes('/check/')) || CHECK_ONLY.some((name) => graph.bare.has(name));

  // The core with the check: what `npm install proc-leash proc-leash-check` adds.
  const bothPackages = installedPackages(join(both.dir, 'node_modules'));
  const bothTotal = bothPackages.reduce((sum, row) => sum + row.bytes, 0);
  const checkOwn = bothPackages.find((row) => row.name === check.name)!.bytes;
  const parsers = bothPackages.filter((row) => CHECK_ONLY.includes(row.name)).reduce((sum, row) => sum + row.bytes, 0);
  const checkTimes = importTimes(both.dir, check.name);
  const eslintTimes = importTimes(both.dir, `${check.name}/eslint`);

  const ms = (values: number[]) => `${median(values).toFixed(1)} ms`;
  const rows = [
    { what: `${core.name} alone: install, all of node_modules`, value: `${(total / MB).toFixed(2)} MB`, target: '≤ 5 MB' },
    { what: `  ${core.name} itself`, value: `${(own / MB).toFixed(2)} MB`, target: '' },
    { what: `  ${CHECK_ONLY.join(', ')} or ${check.name} installed`, value: checkOnlyInCore.length ? checkOnlyInCore.join(', ') : 'none', target: 'none' },
    { what: `  import '${core.name}', median of ${RUNS} fresh processes`, value: ms(coreTimes.importMs), target: '≤ 30 ms' },
    { what: '  the same for a one-line ES module (the ESM loader\'s own start)', value: ms(coreTimes.floorMs), target: '' },
    { what: '  whole process (node start + import + exit) / bare node', value: `${median(coreTimes.processMs).toFixed(0)} / ${median(coreTimes.bareMs).toFixed(0)} ms`, target: '' },
    { what: '  modules it loads (static graph) / their size', value: `${graph.files.size} / ${(graphBytes / 1024).toFixed(0)} KB`, target: '' },
    { what: '  loads typescript, tree-sitter or the check', value: loadsCheck ? 'yes' : 'no', target: 'no' },
    { what: `${core.name} + ${check.name}: install, all of node_modules`, value: `${(bothTotal / MB).toFixed(1)} MB`, target: '' },
    { what: `  ${check.name} itself / its parsers (${CHECK_ONLY.join(' + ')})`, value: `${(checkOwn / MB).toFixed(2)} / ${(parsers / MB).toFixed(1)} MB`, target: '' },
    { what: `  import '${check.name}' / '${check.name}/eslint' (the first loads its parsers on first use, the rule loads typescript at once)`, value: `${ms(checkTimes.importMs)} / ${ms(eslintTimes.importMs)}`, target: '' },
  ];
  console.table(rows);
  console.log(`load average during the run: ${loadavg().map((x) => x.toFixed(1)).join(' ')} (${process.version}; timings under load are upper bounds)`);
  console.table(perPackage.map((row) => ({ package: row.name, MB: Number((row.bytes / MB).toFixed(2)) })));
  mkdirSync(RESULTS, { recursive: true });
  const out = join(RESULTS, 'package.json');
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        node: process.version,
        runs: RUNS,
        installBytes: total,
        ownBytes: own,
        checkOnlyPackagesInCoreInstall: checkOnlyInCore,
        perPackage,
        importMsMedian: median(coreTimes.importMs),
        importMs: coreTimes.importMs,
        oneLineModuleImportMsMedian: median(coreTimes.floorMs),
        loadAverage: loadavg(),
        processMsMedian: median(coreTimes.processMs),
        bareNodeMsMedian: median(coreTimes.bareMs),
        importGraphModules: graph.files.size,
        importGraphBytes: graphBytes,
        importLoadsCheck: loadsCheck,
        withCheck: {
          installBytes: bothTotal,
          checkOwnBytes: checkOwn,
          parserBytes: parsers,
          perPackage: bothPackages,
          importMsMedian: median(checkTimes.importMs),
          eslintImportMsMedian: median(eslintTimes.importMs),
        },
      },
      null,
      2,
    )}\n`,
  );
  console.log(`wrote ${out}`);
} finally {
  project.remove();
  both.remove();
  rmSync(packDir, { recursive: true, force: true });
}
