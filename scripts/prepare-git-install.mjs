// Run by `prepare` before the build, for one case only: this repository installed from git by a
// global install (`npm install -g git+…`, how pre-commit 4.6.1 and later install the leash-check
// hook). npm then prepares its clone with the global flag still in the environment, so the clone's
// own install skips it (and the dev dependencies the build needs: typescript, esbuild). Install
// them here, locally, from the lock file; in every other case this does nothing.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

function resolvable(specifier) {
  try {
    createRequire(import.meta.url).resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

if (process.env.npm_config_global === 'true' && !resolvable('typescript/bin/tsc') && process.env.npm_execpath) {
  process.stderr.write('prepare: installed from git by a global install; installing the build tools in the clone first\n');
  const result = spawnSync(
    process.execPath,
    [process.env.npm_execpath, 'install', '--include=dev', '--ignore-scripts', '--no-save', '--no-audit', '--no-fund'],
    { stdio: ['ignore', 2, 2], env: { ...process.env, npm_config_global: 'false' } },
  );
  if (result.status !== 0) process.exit(result.status ?? 1);
}
