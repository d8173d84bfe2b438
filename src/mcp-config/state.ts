// leash's per-user folder for what `leash mcp` keeps: the launcher wrapped servers start, the
// backups of edited configs and the record of what each wrap replaced. It belongs to the owner of
// the config file, never to whoever runs leash: root editing alice's file keeps alice's backup in
// alice's folder, written by alice's uid (a child process), so it stays hers and readable to her.
// Every folder leash creates there is 0700 and checked to be a real folder of that user, and files
// are created without following symlinks (O_EXCL | O_NOFOLLOW, then renamed into place).
import { spawnSync } from '../sys/child-process.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { homedir } from 'node:os';

export interface Owner {
  uid?: number;
  gid?: number;
  /** leash's folder of that user. */
  root: string;
  /** Whether writes there go through a child running as that user. */
  other: boolean;
}

export interface PlatformEnvironment {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** This user's leash folder: %LOCALAPPDATA%\leash on Windows, else $XDG_STATE_HOME/leash (~/.local/state/leash). */
export function ownStateRoot({ env, platform }: PlatformEnvironment): string {
  if (platform === 'win32') {
    const home = nonEmpty(env.USERPROFILE) ?? homedir();
    return path.win32.join(nonEmpty(env.LOCALAPPDATA) ?? path.win32.join(home, 'AppData', 'Local'), 'leash');
  }
  const home = nonEmpty(env.HOME) ?? homedir();
  return path.join(nonEmpty(env.XDG_STATE_HOME) ?? path.join(home, '.local', 'state'), 'leash');
}

/** The home folder and group of `uid` from /etc/passwd, or undefined. */
function passwdEntry(uid: number): { home: string; gid: number } | undefined {
  let text: string;
  try {
    text = fs.readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields.length >= 7 && Number(fields[2]) === uid && fields[2] !== '') return { home: fields[5]!, gid: Number(fields[3]) };
  }
  return undefined;
}

export class NoStateFolder extends Error {}

/** Whose leash folder keeps what belongs to a file owned by `uid`. */
export function ownerOf(uid: number | undefined, where: PlatformEnvironment): Owner {
  const me = process.geteuid?.();
  if (uid === undefined || me === undefined || uid === me || me !== 0) return { uid: me, root: ownStateRoot(where), other: false };
  const entry = passwdEntry(uid);
  if (!entry || entry.home === '' || !fs.existsSync(entry.home) || fs.statSync(entry.home).uid !== uid) {
    throw new NoStateFolder(`its owner (uid ${uid}) has no home folder of their own to keep leash's backup in`);
  }
  return { uid, gid: entry.gid, root: path.join(entry.home, '.local', 'state', 'leash'), other: true };
}

export interface PrivateFile {
  /** Path below the leash folder. */
  rel: string;
  /** The bytes, base64. */
  content: string;
  mode: number;
  /** Create it under a new name (NAME, NAME-1, ...), never replacing anything; else replace it atomically. */
  exclusive: boolean;
}

/**
 * Writes `files` under `root` as the current user. Self-contained (it is also run, as its text,
 * by a child with another uid): only the modules it is handed.
 */
function writeStateFiles(fsm: typeof fs, pathm: typeof path, root: string, files: PrivateFile[]): string[] {
  const myUid = process.geteuid ? process.geteuid() : undefined;
  const privateFolder = (dir: string) => {
    fsm.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stats = fsm.lstatSync(dir);
    if (!stats.isDirectory()) throw new Error(`${dir} is not a folder (a symlink?)`);
    if (myUid !== undefined && stats.uid !== myUid) throw new Error(`${dir} belongs to uid ${stats.uid}, not ${myUid}`);
    if (myUid !== undefined && (stats.mode & 0o077) !== 0) fsm.chmodSync(dir, 0o700);
  };
  const flags = fsm.constants.O_WRONLY | fsm.constants.O_CREAT | fsm.constants.O_EXCL | (fsm.constants.O_NOFOLLOW ?? 0);
  const create = (name: string, file: PrivateFile) => {
    const fd = fsm.openSync(name, flags, file.mode);
    try {
      fsm.writeSync(fd, Buffer.from(file.content, 'base64'));
      if (myUid !== undefined) fsm.fchmodSync(fd, file.mode);
    } finally {
      fsm.closeSync(fd);
    }
  };
  privateFolder(root);
  const written: string[] = [];
  for (const file of files) {
    let dir = root;
    for (const part of pathm.dirname(file.rel).split(/[\\/]/)) {
      if (part === '' || part === '.') continue;
      dir = pathm.join(dir, part);
      privateFolder(dir);
    }
    const target = pathm.join(root, file.rel);
    if (file.exclusive) {
      for (let n = 0; ; n++) {
        const name = n === 0 ? target : `${target}-${n}`;
        try {
          create(name, file);
          written.push(name);
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 99) throw error;
        }
      }
    } else {
      const temporary = `${target}.${process.pid}.${Math.random().toString(16).slice(2)}.tmp`;
      create(temporary, file);
      fsm.renameSync(temporary, target);
      written.push(target);
    }
  }
  return written;
}

/** Writes `files` into `owner`'s leash folder, as that user; returns the paths written. */
export function writePrivate(owner: Owner, files: PrivateFile[]): string[] {
  if (!owner.other) return writeStateFiles(fs, path, owner.root, files);
  const program =
    "const fs=require('node:fs'),path=require('node:path');let s='';process.stdin.setEncoding('utf8');" +
    `process.stdin.on('data',(d)=>{s+=d}).on('end',()=>{const r=JSON.parse(s);process.stdout.write(JSON.stringify((${writeStateFiles.toString()})(fs,path,r.root,r.files)))})`;
  const result = spawnSync(process.execPath, ['-e', program], {
    uid: owner.uid,
    gid: owner.gid,
    cwd: '/',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    input: JSON.stringify({ root: owner.root, files }),
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (result.status !== 0) {
    const why = /^(?:Error|\w+Error): .*$/m.exec(result.stderr ?? '')?.[0] ?? result.error?.message ?? `exit ${result.status}`;
    throw new Error(`cannot write in ${owner.root} as uid ${owner.uid}: ${why}`);
  }
  return JSON.parse(result.stdout) as string[];
}

/** A file of the leash folder, or undefined when missing; never through a symlink. */
export function readPrivate(owner: Owner, rel: string): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path.join(owner.root, rel), fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
