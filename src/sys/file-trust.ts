// Whether files on disk may be run as code: owned by the caller or root and writable by no one
// else, so that no other user could have planted or changed them. POSIX only (uids, mode bits).
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Why a path is not trusted, for a message that names it. */
export interface TrustProblem {
  path: string;
  reason: string;
}

/** Files of one package walked at most; beyond that the package is refused, not half-checked. */
const MAX_ENTRIES = 20_000;

/** Whether `path` is `root` or lies below it (both already real paths). */
export function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !rel.startsWith(sep));
}

/** Why `stats` (of `path`) may not be trusted by `uid`, or undefined when it may. */
export function untrustedReason(path: string, stats: Stats, uid: number): TrustProblem | undefined {
  if (stats.uid !== uid && stats.uid !== 0) return { path, reason: `owned by uid ${stats.uid}, not by you (uid ${uid}) or root` };
  // 0o022: writable by the group or by everyone. A sticky bit does not help: new files can be added.
  if ((stats.mode & 0o022) !== 0) {
    const who = (stats.mode & 0o002) !== 0 ? 'everyone' : 'its group';
    return { path, reason: `writable by ${who} (mode ${(stats.mode & 0o7777).toString(8).padStart(4, '0')})` };
  }
  return undefined;
}

/** The first directory from `root` (exclusive) down to `dir` (inclusive) that `uid` may not trust. */
export function vetDirectoriesDown(root: string, dir: string, uid: number): TrustProblem | undefined {
  const parts = relative(root, dir).split(sep).filter((part) => part !== '');
  let at = root;
  for (const part of parts) {
    at = join(at, part);
    const problem = untrustedReason(at, statSync(at), uid);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * Walks every entry below `dir` (skipping folders named in `skip`, such as node_modules: what a
 * package depends on is resolved by Node, not here) and returns the first one `uid` may not trust.
 * A symbolic link must lead to a regular file inside `within` (a real path), which is then vetted.
 */
export function vetTree(dir: string, uid: number, within: string, skip: ReadonlySet<string>): TrustProblem | undefined {
  const pending = [dir];
  let seen = 0;
  while (pending.length > 0) {
    const at = pending.pop()!;
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      seen += 1;
      if (seen > MAX_ENTRIES) return { path: dir, reason: `too large to check (more than ${MAX_ENTRIES} entries)` };
      // Concatenated, not path.join: `at` is already normal, and join's normalizing was a fifth of
      // the walk (a few hundred entries on every `leash check`).
      const path = at.endsWith(sep) ? at + entry.name : at + sep + entry.name;
      if (entry.isDirectory() && skip.has(entry.name)) continue;
      let stats = lstatSync(path);
      if (stats.isSymbolicLink()) {
        const target = realpathSync(path);
        stats = statSync(target);
        if (!isWithin(within, target) || !stats.isFile()) return { path, reason: `a link to ${target}, which is not a file inside ${within}` };
        const problem = untrustedReason(target, stats, uid);
        if (problem) return problem;
        continue;
      }
      const problem = untrustedReason(path, stats, uid);
      if (problem) return problem;
      if (stats.isDirectory()) pending.push(path);
    }
  }
  return undefined;
}
