// The packages this repository publishes, packed and installed as a user would get them: the core
// (proc-leash, the repository's root) and the check with its parsers (proc-leash-check, packages/check).
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../helpers/processes.js';

export interface PublishedPackage {
  /** Folder holding its package.json, relative to the repository root. */
  dir: string;
  name: string;
  version: string;
}

function manifest(dir: string): { name: string; version: string; devDependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8'));
}

export const PACKAGES: PublishedPackage[] = ['.', 'packages/check'].map((dir) => ({ dir, ...manifest(dir) }));

/** The version this repository pins for a dev tool, so that an offline install finds it in npm's cache. */
export function pinnedDevVersion(name: string): string {
  const version = manifest('.').devDependencies?.[name];
  if (!version) throw new Error(`${name} is not a devDependency of the repository`);
  return `${name}@${version}`;
}

/** Runs a command with a deadline; never throws, the caller asserts on the result. */
export function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 120_000): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' });
}

export function describeResult(result: SpawnSyncReturns<string>): string {
  return `status ${result.status} signal ${result.signal} ${result.error?.message ?? ''}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

/**
 * Packs every package into `into` (tarball paths returned in PACKAGES order). Scripts are not run:
 * the caller has just built dist/, and a rebuild here would rewrite it under the other tests.
 */
export function packAll(into: string): string[] {
  return PACKAGES.map((pkg) => {
    const result = run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', into], join(REPO_ROOT, pkg.dir));
    if (result.status !== 0) throw new Error(`npm pack of ${pkg.name} failed: ${describeResult(result)}`);
    const file = result.stdout.trim().split('\n').at(-1)!;
    return join(into, file);
  });
}

/** The files a tarball holds, from `tar -tzf`. */
export function tarballFiles(tarball: string): string[] {
  const result = run('tar', ['-tzf', tarball], tmpdir());
  if (result.status !== 0) throw new Error(`tar failed: ${describeResult(result)}`);
  return result.stdout.split('\n').filter(Boolean);
}

type LockEntry = Record<string, unknown> & {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/** Where Node resolution finds `name` from the package at `from` in a hoisted lockfile, if anywhere. */
function locate(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut < 0 ? '' : base.slice(0, cut);
  }
}

/**
 * A lockfile for a scratch project: the tarballs as file: entries, and every registry package they
 * and `extra` reach, taken from this repository's lockfile (so that npm finds each in its cache by
 * integrity and never needs the registry's metadata).
 */
function scratchLock(dir: string, tarballs: readonly string[], extra: readonly string[]) {
  const repoLock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const source: Record<string, LockEntry> = { ...repoLock.packages };
  const rootDeps: Record<string, string> = {};
  PACKAGES.forEach((pkg, index) => {
    const tarball = tarballs[index];
    if (!tarball) return; // that package is not installed here
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, pkg.dir, 'package.json'), 'utf8'));
    const spec = `file:${relative(dir, tarball)}`;
    rootDeps[pkg.name] = spec;
    source[`node_modules/${pkg.name}`] = {
      version: manifest.version,
      resolved: spec,
      license: manifest.license,
      dependencies: manifest.dependencies,
      peerDependencies: manifest.peerDependencies,
      peerDependenciesMeta: manifest.peerDependenciesMeta,
      bin: manifest.bin,
      engines: manifest.engines,
    };
  });
  for (const spec of extra) {
    const at = spec.lastIndexOf('@');
    rootDeps[spec.slice(0, at)] = spec.slice(at + 1);
  }
  const packages: Record<string, LockEntry> = {};
  const queue = Object.keys(rootDeps).map((name) => locate(source, '', name)!);
  while (queue.length > 0) {
    const path = queue.pop()!;
    if (packages[path]) continue;
    const { dev: _dev, devOptional: _devOptional, ...entry } = source[path]!;
    packages[path] = entry;
    const wanted = { ...entry.dependencies, ...entry.optionalDependencies };
    for (const [name, meta] of Object.entries(entry.peerDependencies ?? {})) {
      if (!entry.peerDependenciesMeta?.[name]?.optional) wanted[name] = meta;
    }
    for (const name of Object.keys(wanted)) {
      const found = locate(source, path, name);
      if (found) queue.push(found);
    }
  }
  const manifest = { name: 'scratch', version: '1.0.0', private: true, dependencies: rootDeps };
  const lock = { name: 'scratch', version: '1.0.0', lockfileVersion: 3, requires: true, packages: { '': { ...manifest, private: undefined, name: 'scratch' }, ...packages } };
  return { manifest, lock };
}

/**
 * A scratch project with the tarballs, given in PACKAGES order (fewer, to install only the first
 * ones: `[core]` is the core alone) and `extra` registry packages (as name@version pinned in
 * this repository's lockfile), installed by `npm ci --offline`: no network beyond what `npm ci`
 * already fetched here.
 */
export function scratchProject(tarballs: readonly string[], extra: readonly string[] = []): { dir: string; remove: () => void; install: SpawnSyncReturns<string> } {
  const dir = mkdtempSync(join(tmpdir(), 'leash-package-test-'));
  const { manifest, lock } = scratchLock(dir, tarballs, extra);
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2));
  const install = run(
    'npm',
    ['ci', '--offline', '--no-audit', '--no-fund', '--loglevel=error'],
    dir,
    { ...process.env, npm_config_update_notifier: 'false' },
    300_000,
  );
  return { dir, install, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
