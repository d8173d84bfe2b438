// Servers in containers: `docker run -i --rm IMAGE` starts a container that is no descendant of
// the CLI (dockerd, or podman's conmon, runs it). Ending the CLI leaves the container running, and
// `--rm` never fires. So leash recognises a container run, adds a label naming this run (a label
// exists from create on, where a cidfile is written only once create returns), and when the run
// ends for any reason, stops every container carrying it through the same CLI, with the same
// global options and environment: `stop -t <grace, rounded up to whole seconds>`, then, if the
// user asked for --rm, `rm -f`. A container the user meant to keep is stopped, not removed.
//
// The teardown is done by a small POSIX shell (the container guard) started before the command,
// outside the run's tree (double-forked, so neither a subreaper's walk nor the run's cgroup holds
// it). leash tells it "stop" when the tree's stop begins, or "release"; end of file on its pipe
// means leash itself died (SIGKILL, the OOM killer), and the guard runs the same teardown. Where
// no shell exists (Windows), leash runs the CLI itself once the run has ended.
import type { ChildProcess } from 'node:child_process';
import { spawn } from '../sys/child-process.js';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { ownIdentity } from '../sys/process-identity.js';

/** The label every container a wrapped run creates carries; its value names the run (runIdentity). */
export const CONTAINER_LABEL = 'proc-leash.run';

export type ContainerCliName = 'docker' | 'podman' | 'nerdctl';

/** What a container command line is made of. */
export interface ContainerCommand {
  cli: ContainerCliName;
  /** The command as given (a name found on PATH, or a path). */
  executable: string;
  /** The CLI's global options, before the subcommand (-H, --context, --url, --connection ...). */
  globals: string[];
  /** The subcommand words: ['run'] or ['container', 'run']. */
  subcommand: string[];
  /** Index in args of the first run option (right after the subcommand). */
  runOptionsAt: number;
  detached: boolean;
  remove: boolean;
  /** The user's own --label/-l values and --cidfile, kept as they are. */
  userLabels: string[];
  cidfile?: string;
  image?: string;
}

const CLI_NAMES: Record<string, ContainerCliName> = {
  docker: 'docker',
  podman: 'podman',
  'podman-remote': 'podman',
  nerdctl: 'nerdctl',
};

/** Global options that take no value (all three CLIs); any other option is read as taking one. */
const GLOBAL_FLAGS = new Set([
  '-D', '--debug', '--tls', '--tlsverify', '-v', '--version', '-h', '--help', // docker
  '-r', '--remote', '--syslog', '--noout', '--transient-store', // podman
  '--debug-full', '--experimental', '--insecure-registry', // nerdctl
]);

/** Global options known to take a value (the next word, even one that reads `run`). */
const GLOBAL_VALUE_OPTIONS = new Set([
  '-H', '--host', '-c', '--context', '--config', '-l', '--log-level', '--tlscacert', '--tlscert', '--tlskey', // docker
  '--url', '--connection', '--identity', '--root', '--runroot', '--storage-driver', '--storage-opt', '--runtime',
  '--runtime-flag', '--cgroup-manager', '--conmon', '--events-backend', '--hooks-dir', '--module', '--tmpdir',
  '--network-cmd-path', '--network-config-dir', '--volumepath', '--imagestore', '--ssh', '--out', // podman
  '-a', '--address', '-n', '--namespace', '--snapshotter', '--cni-path', '--cni-netconfpath', '--data-root',
  '--host-gateway-ip', '--hosts-dir', // nerdctl
]);

/** Short run options that take no value (-d, -i, -t, -P, -q), which may be bundled (-dit). */
const RUN_SHORT_FLAGS = new Set(['d', 'i', 't', 'P', 'q']);

/** Long run options that take no value (docker, podman, nerdctl); any other takes one. */
const RUN_LONG_FLAGS = new Set([
  '--detach', '--interactive', '--tty', '--rm', '--init', '--privileged', '--publish-all', '--read-only',
  '--sig-proxy', '--no-healthcheck', '--oom-kill-disable', '--disable-content-trust', '--quiet', '--help',
  '--use-api-socket', '--replace', '--rmi', '--read-only-tmpfs', '--http-proxy', '--env-host', '--passwd',
  '--no-hosts', '--tls-verify', '--privileged', '--rootfs', '--pull-always', '--preserve-fd', '--detach-keys-none',
]);

/** The CLI a command names (docker, /usr/bin/podman, docker.exe), or undefined. */
export function containerCliOf(command: string): ContainerCliName | undefined {
  const name = basename(command.replace(/\\/g, '/')).toLowerCase().replace(/\.exe$/, '');
  return CLI_NAMES[name];
}

const truthy = (value: string | undefined) => value === undefined || !/^(false|0)$/i.test(value);

/** Reads a container run command line; undefined when it is not one (nothing is then added). */
export function parseContainerCommand(command: string, args: readonly string[]): ContainerCommand | undefined {
  const cli = containerCliOf(command);
  if (!cli) return undefined;
  let i = 0;
  const globals: string[] = [];
  for (; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--' || !arg.startsWith('-') || arg === '-') break;
    globals.push(arg);
    if (arg.includes('=') || GLOBAL_FLAGS.has(arg)) continue;
    // An unknown option followed by the subcommand is read as a flag.
    const next = args[i + 1];
    if (next === undefined || (!GLOBAL_VALUE_OPTIONS.has(arg) && (next === 'run' || next === 'container'))) continue;
    globals.push(next);
    i += 1;
  }
  const subcommand: string[] = [];
  if (args[i] === 'run') subcommand.push('run');
  else if (args[i] === 'container' && args[i + 1] === 'run') subcommand.push('container', 'run');
  else return undefined;
  const runOptionsAt = i + subcommand.length;
  const parsed: ContainerCommand = {
    cli, executable: command, globals, subcommand, runOptionsAt, detached: false, remove: false, userLabels: [],
  };
  for (i = runOptionsAt; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--') {
      parsed.image = args[i + 1];
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      parsed.image = arg;
      break;
    }
    if (arg.startsWith('--')) {
      const equals = arg.indexOf('=');
      const name = equals < 0 ? arg : arg.slice(0, equals);
      const inline = equals < 0 ? undefined : arg.slice(equals + 1);
      let value = inline;
      if (inline === undefined && !RUN_LONG_FLAGS.has(name)) {
        value = args[i + 1];
        i += 1;
      }
      if (name === '--detach') parsed.detached = truthy(inline);
      else if (name === '--rm') parsed.remove = truthy(inline);
      else if (name === '--label' && value !== undefined) parsed.userLabels.push(value);
      else if (name === '--cidfile') parsed.cidfile = value;
      continue;
    }
    // Bundled short options: flags, then at most one that takes a value (the rest, or the next word).
    for (let j = 1; j < arg.length; j += 1) {
      const letter = arg[j] as string;
      if (RUN_SHORT_FLAGS.has(letter)) {
        if (letter === 'd') parsed.detached = true;
        continue;
      }
      let value = arg.slice(j + 1);
      if (value === '') {
        value = args[i + 1] ?? '';
        i += 1;
      }
      if (letter === 'l') parsed.userLabels.push(value);
      break;
    }
  }
  return parsed;
}

/** Whether a command line is a container run (`leash mcp status` uses it to name container servers). */
export function isContainerCommand(command: string, args: readonly string[]): boolean {
  return parseContainerCommand(command, args) !== undefined;
}

/**
 * The label value naming this run: host/pid/start time/boot id/pid namespace, enough for
 * `leash reap` to tell, on this machine, whether the run is gone (identityState). Where procfs
 * cannot say, the three last parts are '-'.
 */
export function runIdentity(): string {
  const identity = ownIdentity();
  const host = hostname().replace(/[^A-Za-z0-9._-]/g, '_');
  if (!identity) return `${host}/${process.pid}/-/-/-`;
  const namespace = /\[(\d+)\]/.exec(identity.pid_namespace)?.[1] ?? '-';
  return `${host}/${identity.pid}/${identity.start_time}/${identity.boot_id}/${namespace}`;
}

/** Reads a label value back; undefined when it is not one leash wrote. */
export function parseRunIdentity(value: string): { host: string; pid: number; startTime?: number; bootId?: string; pidNamespace?: string } | undefined {
  const parts = value.split('/');
  if (parts.length !== 5 || !/^\d+$/.test(parts[1] as string)) return undefined;
  const [host, pid, start, boot, namespace] = parts as [string, string, string, string, string];
  return {
    host,
    pid: Number(pid),
    ...(/^\d+$/.test(start) ? { startTime: Number(start) } : {}),
    ...(boot !== '-' ? { bootId: boot } : {}),
    ...(/^\d+$/.test(namespace) ? { pidNamespace: `pid:[${namespace}]` } : {}),
  };
}

/**
 * The teardown as a shell script. Arguments: grace in whole seconds, the ps filter, 1 to remove,
 * then the CLI and its global options. Reads fd 3: "release" ends it with nothing done; "stop",
 * or end of file (leash died), runs the teardown. Then "done" on stdout. A second look catches a
 * container created while the first stop ran (running ones only, unless they are to be removed).
 */
export const CONTAINER_GUARD_SCRIPT = `
trap '' PIPE HUP
secs=$1 filter=$2 rm=$3; shift 3
while IFS= read -r line <&3; do
  case $line in release) exit 0;; stop) break;; esac
done
exec 3<&-
all=-aq pass=0
while [ $pass -lt 2 ]; do
  ids=$("$@" ps $all --filter "$filter" 2>/dev/null) || { echo "leash run: warning: cannot list the run's containers ($1 ps)" >&2; break; }
  [ -z "$ids" ] && break
  "$@" stop -t "$secs" $ids >/dev/null 2>&1 || echo "leash run: warning: $1 stop failed for" $ids >&2
  if [ "$rm" = 1 ]; then "$@" rm -f $ids >/dev/null 2>&1; else all=-q; fi
  pass=$((pass+1))
done
echo done 2>/dev/null
`;

export interface TeardownOutcome {
  /**
   * 'done': the CLI was run; 'released': nothing to do (a detached run); 'timeout': leash stopped
   * waiting (the guard goes on); 'guard-gone': the guard died before it said done; 'unavailable':
   * no guard, or the CLI could not list the containers.
   */
  result: 'done' | 'released' | 'timeout' | 'guard-gone' | 'unavailable';
  ms: number;
}

export interface ContainerRunPlan {
  command: ContainerCommand;
  /** The arguments to run (the label added), the CLI name unchanged. */
  args: string[];
  /** `proc-leash.run=<run identity>`, or undefined for a detached run (left alone). */
  label: string | undefined;
  /** The one line for stderr and `leash status`. */
  describe(): string;
  /**
   * Starts the guard that ends the containers if leash dies; false where none could start.
   * Resolves once the guard has left leash's process tree: called before leash becomes a
   * subreaper, or the guard would come back to it as an orphan and be stopped with the tree.
   */
  startGuard(): Promise<boolean>;
  /**
   * Ends the run's containers through the guard, as the tree's stop begins; idempotent (every call
   * shares the first's outcome). Without a guard it does nothing: see finish.
   */
  teardown(graceMs: number): Promise<TeardownOutcome>;
  /**
   * The run is over, stopped or not (a CLI killed by someone else leaves its container): the
   * guard's teardown, or the CLI run by leash itself where there is no guard.
   */
  finish(): Promise<TeardownOutcome>;
}

const SHELL = existsSync('/bin/sh') ? '/bin/sh' : undefined;
/** How long leash waits for the CLI beyond the grace before leaving the guard to finish alone. */
const TEARDOWN_SLACK_MS = 10_000;

/**
 * Plans a container run: the rewritten arguments and the teardown. Undefined for a command that
 * is not a container run. `env` is the environment the command runs with (DOCKER_HOST,
 * CONTAINER_HOST, DOCKER_CONTEXT ...): the teardown's CLI gets the same.
 */
export function planContainerRun(
  command: string,
  args: readonly string[],
  /** The label's value (runIdentity), or how to get it: read only for a container run. */
  runIdOrSource: string | (() => string),
  env: NodeJS.ProcessEnv,
  graceMs: number,
  warn: (message: string) => void = () => undefined,
): ContainerRunPlan | undefined {
  const parsed = parseContainerCommand(command, args);
  if (!parsed) return undefined;
  const cliWords = [parsed.executable, ...parsed.globals];
  const shown = [parsed.cli, ...parsed.globals, ...parsed.subcommand].join(' ');
  if (parsed.detached) {
    return {
      command: parsed,
      args: [...args],
      label: undefined,
      describe: () => `containers: ${shown} -d is a detached container: not labelled, left running when the run ends`,
      startGuard: async () => true,
      teardown: async () => ({ result: 'released', ms: 0 }),
      finish: async () => ({ result: 'released', ms: 0 }),
    };
  }
  const runId = typeof runIdOrSource === 'string' ? runIdOrSource : runIdOrSource();
  const label = `${CONTAINER_LABEL}=${runId}`;
  const rewritten = [...args.slice(0, parsed.runOptionsAt), '--label', label, ...args.slice(parsed.runOptionsAt)];
  const seconds = Math.max(0, Math.ceil(graceMs / 1000));
  let guard: { child: ChildProcess; control: Writable; done: Promise<boolean> } | undefined;
  let outcome: Promise<TeardownOutcome> | undefined;

  const startGuard = async (): Promise<boolean> => {
    if (!SHELL || guard) return guard !== undefined;
    let child: ChildProcess;
    try {
      // The outer shell backgrounds the guard and exits, so the guard is no child of leash (a
      // subreaper's walk would stop it with the tree) and sits in no cgroup of the run.
      // detached-spawn: ok — the container guard must outlive leash: it ends the run's containers if leash dies.
      child = spawn(SHELL, ['-c', `${SHELL} -c "$0" leash-container-guard "$@" &`, CONTAINER_GUARD_SCRIPT, String(seconds), `label=${label}`, parsed.remove ? '1' : '0', ...cliWords], {
        detached: true,
        stdio: ['ignore', 'pipe', 'inherit', 'pipe'],
        env,
      });
    } catch (error) {
      warn(`cannot start the container guard: ${(error as Error).message}`);
      return false;
    }
    const outerGone = new Promise<boolean>((resolve) => {
      child.once('exit', (code) => resolve(code === 0));
      child.once('error', () => resolve(false));
    });
    const control = child.stdio[3] as Writable;
    const reply = child.stdout as Readable;
    control.on('error', () => undefined);
    (control as Writable & { unref?: () => void }).unref?.();
    (reply as Readable & { unref?: () => void }).unref?.();
    const done = new Promise<boolean>((resolve) => {
      let text = '';
      reply.setEncoding('latin1');
      reply.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('done')) resolve(true);
      });
      reply.on('end', () => resolve(text.includes('done')));
      reply.on('error', () => resolve(false));
    });
    guard = { child, control, done };
    // Held until then (nothing else keeps leash's loop alive yet); never after.
    const started = await outerGone;
    // detached-spawn: ok — leash's exit never waits for the guard's pipes.
    child.unref();
    if (started) return true;
    warn('cannot start the container guard');
    guard = undefined;
    return false;
  };

  const viaGuard = async (started: number, graceForWait: number): Promise<TeardownOutcome> => {
    const current = guard as NonNullable<typeof guard>;
    current.control.write('stop\n');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceForWait + TEARDOWN_SLACK_MS);
    });
    const finished = await Promise.race([current.done, timedOut]);
    clearTimeout(timer);
    current.control.end();
    if (finished === 'timeout') warn(`the run's containers are still being stopped (${CONTAINER_LABEL}=${runId}); the container guard goes on alone`);
    return { result: finished === true ? 'done' : finished === false ? 'guard-gone' : 'timeout', ms: performance.now() - started };
  };

  // While the tree is being stopped, only the guard acts: a CLI started by leash itself would be
  // part of the tree (a subreaper's walk) and stopped with it.
  const teardown = (grace: number): Promise<TeardownOutcome> => {
    if (!guard) return Promise.resolve({ result: 'unavailable', ms: 0 });
    outcome ??= viaGuard(performance.now(), grace);
    return outcome;
  };

  // Once the run is over: the guard's teardown, or where there is none (no shell: Windows; or it
  // died), the CLI straight from leash.
  const finish = async (): Promise<TeardownOutcome> => {
    const viaShell = await teardown(graceMs);
    if (viaShell.result !== 'unavailable' && viaShell.result !== 'guard-gone') return viaShell;
    return directTeardown(cliWords, label, seconds, parsed.remove, env, warn, performance.now());
  };

  return {
    command: parsed,
    args: rewritten,
    label,
    describe: () =>
      `containers: ${shown} labelled ${label}; when the run ends, ${parsed.cli} stop -t ${seconds}` +
      (parsed.remove ? ' then rm -f (--rm)' : ' (kept: no --rm)') + ` for every container carrying it`,
    startGuard,
    teardown,
    finish,
  };
}

function runCli(words: readonly string[], args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    let stdout = '';
    let child: ChildProcess;
    try {
      child = spawn(words[0] as string, [...words.slice(1), ...args], { stdio: ['ignore', 'pipe', 'ignore'], env, windowsHide: true });
    } catch {
      resolve({ code: null, stdout: '' });
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => (stdout += chunk));
    child.on('error', () => undefined);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout });
    });
  });
}

/** The teardown from leash itself, where no guard shell runs. */
async function directTeardown(
  cliWords: readonly string[],
  label: string,
  seconds: number,
  remove: boolean,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
  started: number,
): Promise<TeardownOutcome> {
  const limit = seconds * 1000 + TEARDOWN_SLACK_MS;
  const listed = await runCli(cliWords, ['ps', '-aq', '--filter', `label=${label}`], env, limit);
  if (listed.code !== 0) {
    warn(`cannot list the run's containers (${cliWords[0]} ps)`);
    return { result: 'unavailable', ms: performance.now() - started };
  }
  const ids = listed.stdout.split(/\s+/).filter(Boolean);
  if (ids.length > 0) {
    await runCli(cliWords, ['stop', '-t', String(seconds), ...ids], env, limit);
    if (remove) await runCli(cliWords, ['rm', '-f', ...ids], env, limit);
  }
  return { result: 'done', ms: performance.now() - started };
}

/** A container that carries a leash label, as `leash reap` lists it. */
export interface LabelledContainer {
  cli: ContainerCliName;
  id: string;
  name: string;
  image: string;
  status: string;
  run: string;
}

/**
 * Lists the containers carrying the leash label that `cli` (with this environment) sees; undefined
 * when the CLI is missing or its daemon does not answer. podman's template reads labels as a map,
 * docker's and nerdctl's as one "k=v,k=v" string.
 */
export async function listLabelledContainers(cli: ContainerCliName, env: NodeJS.ProcessEnv, timeoutMs = 10_000): Promise<LabelledContainer[] | undefined> {
  const labels = cli === 'podman' ? `{{index .Labels "${CONTAINER_LABEL}"}}` : '{{.Labels}}';
  const format = `{{.ID}}\t{{.Names}}\t{{.Image}}\t{{.Status}}\t${labels}`;
  const result = await runCli([cli], ['ps', '-a', '--filter', `label=${CONTAINER_LABEL}`, '--format', format], env, timeoutMs);
  if (result.code !== 0) return undefined;
  return result.stdout.split('\n').filter(Boolean).map((line) => {
    const [id = '', name = '', image = '', status = '', labelText = ''] = line.split('\t');
    const run = cli === 'podman' ? labelText : (labelText.split(',').find((entry) => entry.startsWith(`${CONTAINER_LABEL}=`)) ?? '').slice(CONTAINER_LABEL.length + 1);
    return { cli, id, name, image, status, run };
  });
}

/**
 * Stops containers by id with the grace (reap's --kill). Not removed: one started with --rm is
 * removed by its daemon as it stops; one the user meant to keep stays, stopped.
 */
export async function stopContainers(cli: ContainerCliName, ids: readonly string[], graceMs: number, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (ids.length === 0) return true;
  const seconds = Math.max(0, Math.ceil(graceMs / 1000));
  const stop = await runCli([cli], ['stop', '-t', String(seconds), ...ids], env, seconds * 1000 + TEARDOWN_SLACK_MS);
  return stop.code === 0;
}
