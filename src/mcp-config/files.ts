// Reading and replacing a config file: through its symlink to the real file, a backup copy first
// (in the owner's leash folder, never beside the file: a symlink may lead into a dotfiles
// repository, a project file lives in one), then an atomic replace that keeps its mode and owner
// and refuses when the client changed the file meanwhile.
import { readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, join } from 'node:path';
import { replaceFileAtomically } from '../run/state.js';
import { digest } from './record.js';
import { type Owner, writePrivate } from './state.js';

export interface ConfigFile {
  /** The file itself, symlinks followed: what is backed up and replaced. */
  realPath: string;
  bytes: Buffer;
  text: string;
  stats: Stats;
}

/** The file at `path`, or undefined when there is none. Other errors are thrown. */
export function readConfigFile(path: string): ConfigFile | undefined {
  let realPath: string;
  try {
    realPath = realpathSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const stats = statSync(realPath);
  if (!stats.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'EISDIR' });
  const bytes = readFileSync(realPath);
  return { realPath, bytes, text: bytes.toString('utf8'), stats };
}

export const BACKUPS_REL = join('mcp', 'backups');

/** A private copy of `bytes` in the owner's leash folder, `mcp/backups/NAME.<path digest>.<UTC time>[-N]`; its path. */
export function backUp(file: ConfigFile, owner: Owner, now = new Date(), bytes: Buffer = file.bytes): string {
  const stamp = now.toISOString().replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  const rel = join(BACKUPS_REL, `${basename(file.realPath)}.${digest(file.realPath).slice(0, 8)}.${stamp}`);
  return writePrivate(owner, [{ rel, content: bytes.toString('base64'), mode: 0o600, exclusive: true }])[0]!;
}

export class ChangedMeanwhile extends Error {}

/** Replaces the file's content by `content`, unless it no longer holds what was read. */
export function replaceConfig(file: ConfigFile, content: string | Buffer): void {
  if (!readFileSync(file.realPath).equals(file.bytes)) throw new ChangedMeanwhile(`${file.realPath} changed while leash was editing it`);
  replaceFileAtomically(file.realPath, content as string, { mode: file.stats.mode, uid: file.stats.uid, gid: file.stats.gid });
}
