// `leash run`: the command line, then the tree supervisor (Linux) or the process-group fallback.
import { loadNative, nativeLoadFailure } from '../sys/native.js';
import { hasProcfs } from '../sys/procfs.js';
import { runWithProcessGroup } from './group-fallback.js';
import { TreeSupervisor } from './supervisor.js';

export const RUN_USAGE =
  'usage: leash run [--grace SECONDS] [--state FILE] [--die-with-parent] -- COMMAND [ARG...]';

export const DEFAULT_GRACE_SECONDS = 10;
export const MIN_GRACE_SECONDS = 0.05;
export const MAX_GRACE_SECONDS = 30;
const EXIT_USAGE = 64;

export interface RunArguments {
  graceMs: number;
  statePath?: string;
  dieWithParent: boolean;
  command: string;
  args: string[];
}

/** The grace in ms from a number of seconds, clamped to the allowed range. */
export function graceFromSeconds(seconds: number): number {
  return Math.round(Math.min(MAX_GRACE_SECONDS, Math.max(MIN_GRACE_SECONDS, seconds)) * 1000);
}

function parseSeconds(text: string): number | undefined {
  if (!/^[0-9]+(\.[0-9]+)?$|^\.[0-9]+$/.test(text.trim())) return undefined;
  return Number(text);
}

/** Parses `leash run` arguments and environment; a string is the usage error to print. */
export function parseRunArgs(argv: readonly string[], env: NodeJS.ProcessEnv): RunArguments | string {
  let graceSeconds = DEFAULT_GRACE_SECONDS;
  const fromEnv = env.LEASH_GRACE_SECONDS;
  if (fromEnv !== undefined && fromEnv !== '') {
    const seconds = parseSeconds(fromEnv);
    if (seconds === undefined) return `LEASH_GRACE_SECONDS must be a number of seconds, not '${fromEnv}'`;
    graceSeconds = seconds;
  }
  let statePath = env.LEASH_STATE_PATH || undefined;
  let dieWithParent = false;
  let i = 0;
  for (; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--') break;
    if (arg === '--die-with-parent') {
      dieWithParent = true;
    } else if (arg === '--grace' || arg === '--state') {
      const value = argv[i + 1];
      if (value === undefined) return `${arg} needs a value`;
      i += 1;
      if (arg === '--state') {
        if (value === '') return '--state needs a file name';
        statePath = value;
      } else {
        const seconds = parseSeconds(value);
        if (seconds === undefined) return `--grace takes a number of seconds, not '${value}'`;
        graceSeconds = seconds;
      }
    } else {
      return `unknown argument '${arg}' (the command goes after --)`;
    }
  }
  const command = argv[i + 1];
  if (i >= argv.length || command === undefined || command === '') return 'a command is required after --';
  return {
    graceMs: graceFromSeconds(graceSeconds),
    statePath,
    dieWithParent,
    command,
    args: argv.slice(i + 2) as string[],
  };
}

export async function runMain(argv: string[]): Promise<number> {
  const parsed = parseRunArgs(argv, process.env);
  if (typeof parsed === 'string') {
    process.stderr.write(`leash run: ${parsed}\n${RUN_USAGE}\n`);
    return EXIT_USAGE;
  }
  const log = (line: string) => process.stderr.write(`leash run: ${line}\n`);
  if (process.platform === 'win32') return (await import('./windows-run.js')).runOnWindows({ ...parsed, log }); // Job Objects
  if (process.platform === 'linux' && hasProcfs() && (await loadNative())) {
    return new TreeSupervisor({ ...parsed, log }).run();
  }
  const why = process.platform === 'linux' ? `native calls unavailable: ${nativeLoadFailure()}` : `${process.platform} has no child subreaper`;
  log(
    `warning: ${why}; supervising the command's process group only. Orphans are not adopted, ` +
      'and descendants that leave the group (setsid, setpgid) are not stopped' +
      (parsed.dieWithParent ? '; --die-with-parent is not supported here' : ''),
  );
  return runWithProcessGroup({ ...parsed, log });
}
