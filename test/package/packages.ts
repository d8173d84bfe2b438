// The packages this repository publishes, packed and installed as a user would get them. One entry
// today (the core); the check's own package is one more entry here once it is split out.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

export const PACKAGES: PublishedPackage[] = ['.'].map((dir) => ({ dir, ...manifest(dir) }));

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

/**
 * A scratch project with the tarballs (and `extra` registry packages) installed from npm's cache
 * only: no network beyond what `npm ci` already fetched.
 */
export function scratchProject(tarballs: readonly string[], extra: readonly string[] = []): { dir: string; remove: () => void; install: SpawnSyncReturns<string> } {
  const dir = mkdtempSync(join(tmpdir(), 'leash-package-test-'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true }, null, 2));
  const install = run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', ...tarballs, ...extra],
    dir,
    { ...process.env, npm_config_update_notifier: 'false' },
    300_000,
  );
  return { dir, install, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
