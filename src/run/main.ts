// `leash run`: the command line, then the tree supervisor (Linux) or the process-group fallback.
import { constants } from 'node:os';
import { describeRange, graceFromEnvironment, parseGrace, RUN_GRACE } from '../config/grace.js';
import { loadNative, nativeLoadFailure } from '../sys/native.js';
import { hasProcfs } from '../sys/procfs.js';
import { QuickExit } from '../sys/quick-exit.js';
import { writeDiagnostic } from '../sys/safe-output.js';
import { runWithProcessGroup } from './group-fallback.js';
import { lightenFootprint } from './footprint.js';
import { RunGuard } from './guard.js';
import { chooseContainment, CONTAINMENT_VARIABLE, containmentNeedsNative } from './containment.js';
import { describeContainment, primeMigrations } from '../sys/cgroup.js';
import { ignoreHangup, installSignalShield } from './signals.js';
import { TreeSupervisor } from './supervisor.js';
import { planContainerRun, runIdentity } from './containers.js';
import { forgetEndedRecord } from './ended.js';

export const RUN_USAGE =
  'usage: leash run [--grace TIME] [--state FILE] [--die-with-parent] [--no-stdin-watch] [--parent-death-signal SIG] ' +
  '[--ignore-hangup] [--keep-terminal] [--quiet] [--] COMMAND [ARG...]';

export const DEFAULT_GRACE_SECONDS = RUN_GRACE.fallback;
export const MIN_GRACE_SECONDS = RUN_GRACE.min;
export const MAX_GRACE_SECONDS = RUN_GRACE.max;
const EXIT_USAGE = 64;
/** What --quiet drops: the phase lines and the names of what a stop ended. */
const PROGRESS_LINE = /^(phase=|ending \d|killed \d)/;

export interface RunArguments {
  graceMs: number;
  statePath?: string;
  dieWithParent: boolean;
  /** With dieWithParent: stdin with no writer left also means the client is gone (default). */
  watchStdin: boolean;
  /** What the tree gets first when the parent or client is gone (tini's -p); SIGTERM by default. */
  parentDeathSignal?: NodeJS.Signals;
  /** A hangup (SIGHUP) neither stops leash nor reaches the tree: what nohup users want. */
  ignoreHangup: boolean;
  /** No phase lines on stderr; warnings and errors still go there. */
  quiet: boolean;
  /** The runner stays in leash's session and group, keeping the controlling terminal. */
  keepTerminal: boolean;
  command: string;
  args: string[];
}

/** The grace in ms from a number of seconds, clamped to the allowed range. */
export function graceFromSeconds(seconds: number): number {
  return Math.round(Math.min(MAX_GRACE_SECONDS, Math.max(MIN_GRACE_SECONDS, seconds)) * 1000);
}

/**
 * Parses `leash run` arguments and environment; a string is the usage error to print. A bad
 * LEASH_GRACE_SECONDS is a warning (`warn`) and the default, as for every grace setting; a bad
 * --grace, typed on this very command line, is a usage error.
 */
export function parseRunArgs(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void = (message) => writeDiagnostic(`leash run: warning: ${message}\n`),
): RunArguments | string {
  let graceSeconds = graceFromEnvironment(env, RUN_GRACE, warn);
  let statePath = env.LEASH_STATE_PATH || undefined;
  let dieWithParent = false;
  let watchStdin = true;
  let parentDeathSignal: NodeJS.Signals | undefined;
  let ignoreHangup = false;
  let quiet = false;
  let keepTerminal = false;
  let i = 0;
  for (; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--') {
      i += 1;
      break;
    }
    // The first word that is not an option starts the command (as tini does): its own options follow it.
    if (!arg.startsWith('-') || arg === '-') break;
    if (arg === '--die-with-parent') {
      dieWithParent = true;
    } else if (arg === '--no-stdin-watch') {
      watchStdin = false;
    } else if (arg === '--ignore-hangup') {
      ignoreHangup = true;
    } else if (arg === '--parent-death-signal') {
      const value = argv[i + 1];
      if (value === undefined) return `${arg} needs a value`;
      i += 1;
      const signal = parseSignalName(value);
      if (signal === undefined) return `--parent-death-signal takes a signal name or number (TERM, SIGINT, 9), not '${value}'`;
      parentDeathSignal = signal;
    } else if (arg === '--quiet' || arg === '-q') {
      quiet = true;
    } else if (arg === '--keep-terminal') {
      keepTerminal = true;
    } else if (arg === '--grace' || arg === '--state') {
      const value = argv[i + 1];
      if (value === undefined) return `${arg} needs a value`;
      i += 1;
      if (arg === '--state') {
        if (value === '') return '--state needs a file name';
        statePath = value;
      } else {
        const seconds = parseGrace(value, RUN_GRACE);
        if (seconds === undefined) return `--grace takes ${describeRange(RUN_GRACE)}, not '${value}'`;
        graceSeconds = seconds;
      }
    } else {
      return `unknown option '${arg}' (a command that starts with - goes after --)`;
    }
  }
  const command = argv[i];
  if (command === undefined || command === '') return 'a command is required';
  if (parentDeathSignal && !dieWithParent) return '--parent-death-signal needs --die-with-parent';
  return {
    graceMs: graceFromSeconds(graceSeconds),
    statePath,
    dieWithParent,
    watchStdin,
    parentDeathSignal,
    ignoreHangup,
    quiet,
    keepTerminal,
    command,
    args: argv.slice(i + 1) as string[],
  };
}

/** A signal by name (TERM, SIGTERM, sigterm) or number, as Node knows it here; undefined otherwise. */
export function parseSignalName(text: string): NodeJS.Signals | undefined {
  const known = constants.signals as Record<string, number>;
  const trimmed = text.trim();
  if (/^[0-9]+$/.test(trimmed)) {
    const number = Number(trimmed);
    return (Object.keys(known) as NodeJS.Signals[]).find((name) => known[name] === number && name !== 'SIGIOT' && name !== 'SIGPOLL');
  }
  const upper = trimmed.toUpperCase();
  const name = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  return name in known ? (name as NodeJS.Signals) : undefined;
}

export async function runMain(argv: string[]): Promise<number> {
  // First of all: no stray signal may end leash (or open the inspector). Every line goes through
  // writeDiagnostic: a full stderr drops it, a closed one never ends leash, and process.stderr
  // (blocking, and non-blocking for the whole tree once opened) is never touched.
  installSignalShield();
  // Before anything can change fds 0-2: the quick exit puts them back as they were.
  const quickExit = new QuickExit();
  lightenFootprint();
  // --quiet drops the phase lines only: warnings and errors are always written.
  let quiet = false;
  const log = (line: string) => {
    if (!(quiet && (PROGRESS_LINE.test(line) || line.startsWith('containment: ')))) writeDiagnostic(`leash run: ${line}\n`);
  };
  // Node's own warnings (the guard's link reports through them) go the same safe way.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => log(`warning: ${warning.message}`));
  const parsed = parseRunArgs(argv, process.env);
  if (typeof parsed === 'string') {
    writeDiagnostic(`leash run: ${parsed}\n${RUN_USAGE}\n`);
    return EXIT_USAGE;
  }
  quiet = parsed.quiet;
  // The document is this run's: a `leash run` inside the command (nested runs are supported)
  // would otherwise write its own over it. Every spawn below reads process.env.
  delete process.env.LEASH_STATE_PATH;
  // What an earlier run with this document ended is not this run's (leash status reads it beside the document).
  if (parsed.statePath !== undefined) forgetEndedRecord(parsed.statePath);
  if (parsed.ignoreHangup) ignoreHangup();
  // A container run (docker/podman/nerdctl run) gets a label naming this run; its guard starts now, outside the tree.
  const containers = planContainerRun(parsed.command, parsed.args, runIdentity, process.env, parsed.graceMs, (message) => log(`warning: ${message}`));
  if (containers) {
    parsed.args = containers.args;
    log(containers.describe());
    await containers.startGuard();
  }
  const onStop = containers && (() => void containers.teardown(parsed.graceMs));
  if (process.platform === 'win32') return (await import('./windows-run.js')).runOnWindows({ ...parsed, log }).then(async (code) => (await containers?.finish(), code)); // Job Objects
  if (process.platform === 'linux' && hasProcfs()) {
    // koffi is needed before the command starts (the subreaper bit, in every mode): its loading
    // begins now. The kernel's wait before the first cgroup move runs beside it (primeMigrations),
    // so that the trial move and the runner's come in the fast window after.
    const primed = containmentNeedsNative(process.env) ? primeMigrations(process.env[CONTAINMENT_VARIABLE] === 'cgroup') : undefined;
    const native = loadNative();
    if (containmentNeedsNative(process.env)) await native;
    // Settled before any real move: a late no-op write would move leash back out of the run's cgroup.
    await primed;
    const containment = await chooseContainment(process.env, (message) => log(`warning: ${message}`));
    if (containment.cgroup || (await native)) {
      // One line says which containment is in force (--quiet drops it, as the phase lines).
      const described = describeContainment(containment.cgroup, containment.cgroup ? undefined : containment.reason);
      log(`containment: ${described}`);
      // The process tree's guard is a death supervisor (Node); contained, a shell (cgroup-guard.ts).
      const guard = containment.cgroup ? undefined : new RunGuard(parsed.graceMs);
      const supervisor = new TreeSupervisor({ ...parsed, log, guard, cgroup: containment.cgroup, containment: described, native, onStop, containers: containers?.describe() });
      const code = await supervisor.run();
      await containers?.finish();
      // The tree is gone and the guard told: nothing of leash's own teardown is of use to anyone,
      // and a client that waits for the server to be gone would wait for it (sys/quick-exit.ts).
      quickExit.exitIfClean(code, supervisor.allWritten());
      return code;
    }
  }
  const guard = new RunGuard(parsed.graceMs);
  const why = process.platform === 'linux' ? `native calls unavailable: ${nativeLoadFailure()}` : `${process.platform} has no child subreaper`;
  log(
    `warning: ${why}; supervising the command's process group only. Orphans are not adopted, ` +
      'and descendants that leave the group (setsid, setpgid) are not stopped' +
      (parsed.dieWithParent ? '; --die-with-parent is not supported here' : '') +
      // The fallback signals the runner's group as a whole: that group must not be leash's own.
      (parsed.keepTerminal ? '; --keep-terminal is not supported here (the command gets a new session)' : ''),
  );
  return runWithProcessGroup({ ...parsed, log, guard, onStop }).then(async (code) => (await containers?.finish(), code));
}

