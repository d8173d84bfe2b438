// Benchmark of the package as a user installs it: the core packed, installed alone into a scratch
// project from npm's cache, then its install size (all of node_modules, and per dependency) and the
// time `import 'proc-leash'` takes in a fresh Node process. It also reports what the install would
// weigh without the check's parsers (typescript, tree-sitter), which the split would move out.
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

const core = PACKAGES[0]!;
const packDir = mkdtempSync(join(tmpdir(), 'leash-bench-pack-'));
process.stderr.write('packing and installing the core from npm\'s cache (about 10 s)...\n');
const [tarball] = packAll(packDir);
const project = scratchProject([tarball!]);
try {
  if (project.install.status !== 0) throw new Error(`install failed: ${describeResult(project.install)}`);
  const modules = join(project.dir, 'node_modules');
  const perPackage: Array<{ name: string; bytes: number }> = [];
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((sub) => `${entry}/${sub}`) : [entry];
    for (const name of names) perPackage.push({ name, bytes: folderBytes(join(modules, name)) });
  }
  perPackage.sort((a, b) => b.bytes - a.bytes);
  const total = perPackage.reduce((sum, row) => sum + row.bytes, 0);
  const checkOnly = perPackage.filter((row) => CHECK_ONLY.includes(row.name)).reduce((sum, row) => sum + row.bytes, 0);
  const own = perPackage.find((row) => row.name === core.name)!.bytes;
  const checkCode = folderBytes(join(modules, core.name, 'dist/src/check')) + folderBytes(join(modules, core.name, 'dist/src/eslint'));

  // Import time: fresh processes, the import alone timed inside each (Node's own start excluded).
  // The first import() of any ES module starts Node's ESM loader: a one-line module in the same
  // project, timed the same way, is the floor the package's own cost sits on.
  writeFileSync(join(project.dir, 'one-line.mjs'), 'export const x = 1;\n');
  const importMs: number[] = [];
  const floorMs: number[] = [];
  const processMs: number[] = [];
  const bareMs: number[] = [];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (let run = 0; run < RUNS; run += 1) {
    const started = performance.now();
    const result = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `const t = performance.now(); await import('${core.name}'); process.stdout.write(String(performance.now() - t));`],
      { cwd: project.dir, encoding: 'utf8', env },
    );
    processMs.push(performance.now() - started);
    if (result.status !== 0) throw new Error(`import failed: ${result.stderr}`);
    importMs.push(Number(result.stdout));
    const floor = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "const t = performance.now(); await import('./one-line.mjs'); process.stdout.write(String(performance.now() - t));"],
      { cwd: project.dir, encoding: 'utf8', env },
    );
    floorMs.push(Number(floor.stdout));
    const bareStart = performance.now();
    spawnSync(process.execPath, ['--input-type=module', '-e', ''], { cwd: project.dir, env });
    bareMs.push(performance.now() - bareStart);
  }

  const graph = moduleGraph(join(modules, core.name, 'dist/src/index.js'));
  const graphBytes = [...graph.files].reduce((sum, file) => sum + lstatSync(file).size, 0);
  const loadsCheck = [...graph.files].some((file) => file.includes('/check/')) || CHECK_ONLY.some((name) => graph.bare.has(name));

  const rows = [
    { what: 'install, all of node_modules', value: `${(total / MB).toFixed(1)} MB`, target: '≤ 5 MB' },
    { what: `  of which ${CHECK_ONLY.join(' + ')} (only leash check needs them)`, value: `${(checkOnly / MB).toFixed(1)} MB`, target: '' },
    { what: '  without them (the core after the split)', value: `${((total - checkOnly) / MB).toFixed(1)} MB`, target: '≤ 5 MB' },
    { what: `  ${core.name} itself (its check and eslint code: ${(checkCode / MB).toFixed(2)} MB)`, value: `${(own / MB).toFixed(2)} MB`, target: '' },
    { what: `import '${core.name}', median of ${RUNS} fresh processes`, value: `${median(importMs).toFixed(1)} ms`, target: '≤ 30 ms' },
    { what: '  the same for a one-line ES module (the ESM loader\'s own start)', value: `${median(floorMs).toFixed(1)} ms`, target: '' },
    { what: '  whole process (node start + import + exit) / bare node', value: `${median(processMs).toFixed(0)} / ${median(bareMs).toFixed(0)} ms`, target: '' },
    { what: '  modules it loads (static graph) / their size', value: `${graph.files.size} / ${(graphBytes / 1024).toFixed(0)} KB`, target: '' },
    { what: '  loads typescript, tree-sitter or the check', value: loadsCheck ? 'yes' : 'no', target: 'no' },
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
        checkOnlyBytes: checkOnly,
        coreWithoutCheckOnlyBytes: total - checkOnly,
        ownBytes: own,
        ownCheckCodeBytes: checkCode,
        perPackage,
        importMsMedian: median(importMs),
        importMs,
        oneLineModuleImportMsMedian: median(floorMs),
        loadAverage: loadavg(),
        processMsMedian: median(processMs),
        bareNodeMsMedian: median(bareMs),
        importGraphModules: graph.files.size,
        importGraphBytes: graphBytes,
        importLoadsCheck: loadsCheck,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`wrote ${out}`);
} finally {
  project.remove();
  rmSync(packDir, { recursive: true, force: true });
}
