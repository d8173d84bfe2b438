// The behaviour seeds the benches compare against: read at run time from the `shared/seeds`
// folder beside the repository (beside the main checkout, for a git worktree), never copied in.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/lib/ is two levels down, in the sources and in dist/ alike). */
const REPO = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', ...(import.meta.url.includes('/dist/bench/') ? ['..'] : []));

/** The seeds folders to look in, nearest first: LEASH_BENCH_SEEDS, then `../shared/seeds` of this checkout and of the main one. */
export function seedFolders(): string[] {
  if (process.env.LEASH_BENCH_SEEDS) return [resolve(process.env.LEASH_BENCH_SEEDS)];
  const roots = [REPO];
  try {
    const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    roots.push(resolve(common, '..'));
  } catch {
    // not a git checkout: the repository's own parent only
  }
  return [...new Set(roots.map((root) => resolve(root, '..', 'shared', 'seeds')))].filter((folder) => existsSync(folder));
}

/** The first seed file (its origin's path on the first line, then the program) that `matches`, or undefined. */
export function findSeed(matches: (text: string) => boolean): string | undefined {
  for (const folder of seedFolders()) {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      if (matches(readFileSync(path, 'utf8'))) return path;
    }
  }
  return undefined;
}
