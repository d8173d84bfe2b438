// Reading and replacing a config file: through its symlink to the real file, a backup copy
// first (never over an existing one), then an atomic replace that keeps its mode and owner and
// refuses when the client changed the file meanwhile.
import { constants, copyFileSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { replaceFileAtomically } from '../run/state.js';

export interface ConfigFile {
  /** The file itself, symlinks followed: what is backed up and replaced. */
  realPath: string;
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
  return { realPath, text: readFileSync(realPath, 'utf8'), stats };
}

/** A copy of the file next to it, `NAME.leash-backup-<UTC time>[-N]`; an existing name is never reused. */
export function backUp(file: ConfigFile, now = new Date()): string {
  const stamp = now.toISOString().replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  for (let attempt = 0; ; attempt++) {
    const backup = `${file.realPath}.leash-backup-${stamp}${attempt === 0 ? '' : `-${attempt}`}`;
    try {
      copyFileSync(file.realPath, backup, constants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 99) throw error;
    }
  }
}

export class ChangedMeanwhile extends Error {}

/** Replaces the file's content by `text`, unless it no longer holds what was read. */
export function replaceConfig(file: ConfigFile, text: string): void {
  if (readFileSync(file.realPath, 'utf8') !== file.text) throw new ChangedMeanwhile(`${file.realPath} changed while leash was editing it`);
  replaceFileAtomically(file.realPath, text, { mode: file.stats.mode, uid: file.stats.uid, gid: file.stats.gid });
}
