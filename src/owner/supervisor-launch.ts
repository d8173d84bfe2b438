// How to start the death supervisor from whatever runtime the owner runs in: plain Node, Electron
// (main, utility process, extension host), Bun, Deno, or a bundle. The decision is a pure function
// of the facts it is given, so every case can be tested without the runtime itself.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PARENT_DEATH_SIGNAL } from '../supervisor/protocol.js';
import { GROUP_HANDLES_VARIABLE } from '../sys/native.js';
import { parentDeathLauncher } from '../sys/parent-death.js';

/** What the launch decision depends on: the owner's runtime, its environment and what exists on disk. */
export interface LaunchFacts {
  /** The running executable (`process.execPath`): node, bun, deno, or an Electron app's own binary. */
  execPath: string;
  /** `process.versions`: `electron`, `bun` and `deno` say which runtime this is. */
  versions: Readonly<Record<string, string | undefined>>;
  /** The owner's environment (PATH, and the LEASH_SUPERVISOR_* overrides). */
  env: Readonly<Record<string, string | undefined>>;
  /** The URL of this module (`import.meta.url`), or undefined where a bundler left none (a CommonJS bundle). */
  moduleUrl: string | undefined;
  exists: (path: string) => boolean;
  /**
   * Words that start a command with the parent-death signal armed (sys/parent-death.ts), where
   * this system has them: the supervisor then hears of its owner's death when the owner's main
   * thread exits, before the pipe's EOF.
   */
  parentDeathPrefix?: readonly string[];
}

export type LaunchPlan =
  | { ok: true; command: string[]; env: Record<string, string>; runtime: Runtime; note?: string }
  | { ok: false; problem: string };

export type Runtime = 'node' | 'electron' | 'bun' | 'deno' | 'override';

/**
 * Where the package keeps the supervisor, relative to this module. The build bundles it into one
 * CommonJS file (measured: faster start, about 1 MB less private memory than the same ES modules);
 * the ES entry serves a tree compiled without the bundling step.
 */
const SUPERVISOR_FILES = ['../supervisor/supervisor.cjs', '../supervisor/entry.js'];

const MISSING_HINT =
  'When the owner library is bundled (esbuild, webpack, rollup), either mark proc-leash as external, ' +
  'or copy node_modules/proc-leash/dist/src/supervisor/supervisor.cjs next to the bundle and set ' +
  'LEASH_SUPERVISOR_FILE to its path. Owned groups are unguarded until then.';

/** The supervisor's file: LEASH_SUPERVISOR_FILE, else the package's own, outside app.asar where unpacked. */
export function supervisorFile(facts: LaunchFacts): { path: string; note?: string } | { problem: string } {
  const override = facts.env.LEASH_SUPERVISOR_FILE;
  if (override) {
    if (facts.exists(override)) return { path: override };
    return { problem: `LEASH_SUPERVISOR_FILE names '${override}', which does not exist. ${MISSING_HINT}` };
  }
  let candidates: string[];
  try {
    candidates = SUPERVISOR_FILES.map((file) => fileURLToPath(new URL(file, facts.moduleUrl)));
  } catch {
    return { problem: `cannot locate the death supervisor: this code was bundled without import.meta.url. ${MISSING_HINT}` };
  }
  for (const candidate of candidates) {
    // An Electron app's archive is readable only by the app's patched fs: a process started from it
    // needs the real file, which electron-builder and electron-forge put in app.asar.unpacked.
    const unpacked = candidate.replace(/([\\/])app\.asar([\\/])/, '$1app.asar.unpacked$2');
    if (unpacked !== candidate) {
      if (facts.exists(unpacked)) return { path: unpacked };
      if (facts.exists(candidate)) {
        return {
          problem:
            `the death supervisor is inside the app's archive (${candidate}), where a separate process cannot ` +
            'run it: unpack it (electron-builder: asarUnpack ["**/node_modules/proc-leash/dist/src/supervisor/**"]; ' +
            'electron-forge: packagerConfig.asar.unpack "**/proc-leash/dist/src/supervisor/**"). Owned groups are unguarded until then.',
        };
      }
      continue;
    }
    if (facts.exists(candidate)) return { path: candidate };
  }
  return { problem: `cannot find the death supervisor (looked for ${candidates.join(', ')}). ${MISSING_HINT}` };
}

/**
 * The supervisor's whole environment: a scrubbed one starts faster (no NODE_OPTIONS, no extra CA
 * certificates: +38 ms each start) and carries no owner token. One libuv thread is plenty for
 * the one read it keeps in flight.
 */
function baseEnvironment(facts: LaunchFacts): Record<string, string> {
  const env: Record<string, string> = { PATH: facts.env.PATH ?? '/usr/bin:/bin', UV_THREADPOOL_SIZE: '1' };
  // The switch that forces the witness fallback (group-handle.ts) holds for the supervisor too.
  if (facts.env[GROUP_HANDLES_VARIABLE] === 'off') env[GROUP_HANDLES_VARIABLE] = 'off';
  return env;
}

/** Decides how to start the supervisor; never throws. */
export function planSupervisorLaunch(facts: LaunchFacts): LaunchPlan {
  const plan = planRuntimeLaunch(facts);
  if (!plan.ok || !facts.parentDeathPrefix?.length) return plan;
  return { ...plan, command: [...facts.parentDeathPrefix, ...plan.command] };
}

function planRuntimeLaunch(facts: LaunchFacts): LaunchPlan {
  const file = supervisorFile(facts);
  if ('problem' in file) return { ok: false, problem: file.problem };
  const env = baseEnvironment(facts);

  // An app that disabled running as Node (Electron's RunAsNode fuse off) names a Node binary here.
  const override = facts.env.LEASH_SUPERVISOR_EXEC;
  if (override) {
    if (!facts.exists(override)) return { ok: false, problem: `LEASH_SUPERVISOR_EXEC names '${override}', which does not exist` };
    return { ok: true, runtime: 'override', command: [override, file.path], env };
  }
  if (facts.versions.electron) {
    // process.execPath is the app itself: without ELECTRON_RUN_AS_NODE it would open another
    // instance of the app instead of running the supervisor. Same binary for the main process,
    // utility processes and VS Code's extension host.
    return {
      ok: true,
      runtime: 'electron',
      command: [facts.execPath, file.path],
      env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
    };
  }
  if (facts.versions.bun) {
    // Bun runs the CommonJS bundle as is; V8 flags mean nothing to it.
    return { ok: true, runtime: 'bun', command: [facts.execPath, file.path], env };
  }
  if (facts.versions.deno) {
    // Deno runs the CommonJS bundle under its Node compatibility; the supervisor reads /proc and
    // signals processes, hence every permission. Deno keeps its cache under HOME.
    const denoEnv = facts.env.HOME ? { ...env, HOME: facts.env.HOME } : env;
    return { ok: true, runtime: 'deno', command: [facts.execPath, 'run', '--allow-all', '--quiet', file.path], env: denoEnv };
  }
  // --v8-pool-size=0: the supervisor needs no V8 worker threads (7 threads become 4).
  const flags = ['--v8-pool-size=0'];
  if (knowsDisableSigusr1(facts.versions.node)) flags.push('--disable-sigusr1');
  return { ok: true, runtime: 'node', command: [facts.execPath, ...flags, file.path], env };
}

/**
 * Whether this Node takes --disable-sigusr1 (22.14 and later 22.x, 23.7 and later): then SIGUSR1
 * cannot open the inspector even in the milliseconds before the supervisor's own listener is
 * installed. Older Node rejects the flag (measured on 20.20.2: "bad option"), so it is only
 * passed where the version says it is known; Electron, Bun and Deno are never given it (their
 * flag handling is their own).
 */
export function knowsDisableSigusr1(nodeVersion: string | undefined): boolean {
  const match = /^v?(\d+)\.(\d+)\./.exec(nodeVersion ?? '');
  if (!match) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major >= 24 || (major === 23 && minor >= 7) || (major === 22 && minor >= 14);
}

/** The facts of this very process. */
export function currentLaunchFacts(): LaunchFacts {
  let moduleUrl: string | undefined;
  try {
    moduleUrl = import.meta.url;
  } catch {
    moduleUrl = undefined;
  }
  return {
    execPath: process.execPath,
    versions: process.versions,
    env: process.env,
    moduleUrl,
    exists: existsSync,
    parentDeathPrefix: launcherFailed ? undefined : parentDeathLauncher(process.env.PATH, PARENT_DEATH_SIGNAL),
  };
}

/**
 * A plan that worked out is kept; a failed one is made again at the next launch: a file that was
 * missing may be there now (a package being reinstalled, an app archive unreadable for a moment).
 */
let plan: LaunchPlan | undefined;
/** Set once the parent-death launcher failed to start a supervisor: later plans go without it. */
let launcherFailed = false;
/** The last problem warned of: the same problem, planned again on every retry, is told once. */
let warnedProblem: string | undefined;

function currentPlan(): LaunchPlan {
  if (plan?.ok) return plan;
  plan = planSupervisorLaunch(currentLaunchFacts());
  return plan;
}

/**
 * A supervisor died at start with the exit code of a launcher that could not run it (setpriv's
 * 126/127): plan again without the launcher. Returns whether there was one to drop.
 */
export function dropParentDeathLauncher(): boolean {
  if (launcherFailed || !plan?.ok || !currentLaunchFacts().parentDeathPrefix) return false;
  launcherFailed = true;
  plan = undefined;
  return true;
}

/** The supervisor's command line before its own flags; throws, with what to do, when it cannot be started. */
export function supervisorCommand(): string[] {
  const current = currentPlan();
  if (!current.ok) throw new Error(current.problem);
  return current.command;
}

/** The supervisor's whole environment (scrubbed; ELECTRON_RUN_AS_NODE=1 under Electron). */
export function supervisorEnvironment(): NodeJS.ProcessEnv {
  const current = currentPlan();
  return current.ok ? current.env : baseEnvironment(currentLaunchFacts());
}

/** The command line, or undefined after one process warning (LEASH_SUPERVISOR) saying why and what to do. */
export function supervisorCommandOrWarn(): string[] | undefined {
  const current = currentPlan();
  if (current.ok) {
    warnedProblem = undefined;
    return current.command;
  }
  if (warnedProblem !== current.problem) {
    warnedProblem = current.problem;
    process.emitWarning(current.problem, { code: 'LEASH_SUPERVISOR' });
  }
  return undefined;
}
