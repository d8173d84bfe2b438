// A container runtime for the container tests, with no registry: podman and runc (Debian's
// packages, installed by scripts/test-containers.sh), private storage and configuration in a
// scratch folder, an image imported from a folder holding busybox-static, and for the Docker
// topology the real `docker` CLI against `podman system service` on a private socket. Every
// container a test starts carries the test's label; cleanUp removes them and stops the service.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCommandLine, listPids } from '../../src/sys/procfs.js';
import { signalProcess } from '../../src/sys/processes.js';
import { waitUntil } from '../../src/sys/wait.js';
import assert from 'node:assert/strict';
import { JsonLines, markedEnv, newMark, startFixture, waitForGone } from '../helpers/processes.js';

export const TEST_LABEL = 'leash-test';

export interface Runtime {
  dir: string;
  /** CONTAINERS_CONF and CONTAINERS_STORAGE_CONF (podman) and, with the service, DOCKER_HOST. */
  env: NodeJS.ProcessEnv;
  image: string;
  /** `docker` (Docker topology) or `podman` (podman CLI topology) with this runtime's env; sync. */
  cli(name: 'docker' | 'podman', args: readonly string[]): { code: number | null; stdout: string; stderr: string };
  /** Ids of the containers carrying a label (key=value), all states. */
  containers(name: 'docker' | 'podman', label: string): string[];
  cleanUp(): Promise<void>;
}

function onPath(name: string): boolean {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    try {
      accessSync(join(dir || '.', name), constants.X_OK);
      return true;
    } catch {
      // next
    }
  }
  return false;
}

/** A static busybox: busybox-static installs it at /bin/busybox (dynamic builds cannot run in the image). */
function staticBusybox(): string | undefined {
  for (const path of ['/bin/busybox', '/usr/bin/busybox']) {
    if (!existsSync(path)) continue;
    const interp = spawnSync('sh', ['-c', `od -An -c -N 4096 '${path}' | tr -d ' \\n' | grep -q 'ld-linux'`]);
    if (interp.status !== 0) return path;
  }
  return undefined;
}

/** Why the container tests cannot run here, or undefined when they can. */
export function whyNoRuntime(needDocker: boolean): string | undefined {
  if (process.platform !== 'linux') return `${process.platform}: the container tests run on Linux`;
  if (process.getuid?.() !== 0) return 'needs root (podman with private storage, no user namespace set-up)';
  for (const tool of ['podman', 'runc', ...(needDocker ? ['docker'] : [])]) {
    if (!onPath(tool)) return `${tool} is not installed (scripts/test-containers.sh installs podman, runc, busybox-static, docker.io)`;
  }
  if (!staticBusybox()) return 'busybox-static is not installed (scripts/test-containers.sh installs it)';
  return undefined;
}

/**
 * Makes the runtime: configuration, storage, the image; with `service`, the podman API service on
 * a socket for the docker CLI. A string says why it cannot start (the test then skips).
 */
export async function startRuntime(options: { service: boolean }): Promise<Runtime | string> {
  const why = whyNoRuntime(options.service);
  if (why) return why;
  const dir = mkdtempSync(join(tmpdir(), 'leash-containers-'));
  // crun refuses hybrid cgroups and the default RLIMIT_NOFILE raise may be refused: runc,
  // cgroupfs, no default ulimits; vfs storage needs no overlay support.
  writeFileSync(join(dir, 'containers.conf'), [
    '[containers]', 'default_ulimits = []', '[engine]', 'runtime = "runc"', 'cgroup_manager = "cgroupfs"', 'events_logger = "file"',
    `events_logfile_path = "${dir}/events.log"`,
    '',
  ].join('\n'));
  writeFileSync(join(dir, 'storage.conf'), ['[storage]', 'driver = "vfs"', `graphroot = "${dir}/root"`, `runroot = "${dir}/run"`, ''].join('\n'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CONTAINERS_CONF: join(dir, 'containers.conf'),
    CONTAINERS_STORAGE_CONF: join(dir, 'storage.conf'),
    DOCKER_HOST: `unix://${dir}/api.sock`,
    DOCKER_CONFIG: join(dir, 'docker-config'),
  };
  const cli: Runtime['cli'] = (name, args) => {
    const result = spawnSync(name, args, { env, encoding: 'utf8', timeout: 60_000 });
    return { code: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  };
  mkdirSync(join(dir, 'docker-config'));
  writeFileSync(join(dir, 'docker-config', 'config.json'), '{}\n');
  const rootfs = join(dir, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  copyFileSync(staticBusybox() as string, join(rootfs, 'bin', 'busybox'));
  for (const applet of ['sh', 'sleep', 'cat', 'echo']) symlinkSync('busybox', join(rootfs, 'bin', applet));
  const tar = spawnSync('tar', ['-C', rootfs, '-cf', join(dir, 'rootfs.tar'), '.']);
  const image = 'localhost/leash-busybox:test';
  const imported = tar.status === 0 ? cli('podman', ['import', join(dir, 'rootfs.tar'), image]) : { code: 1, stderr: 'tar failed' };
  if (imported.code !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `podman cannot import an image here: ${imported.stderr.trim().split('\n').pop()}`;
  }
  let service: ChildProcess | undefined;
  // The service's own mark: its processes are the runtime's, not the test's.
  const serviceMark = newMark();
  if (options.service) {
    // detached-spawn: ok — the test's own API service, ended by pid in cleanUp.
    service = spawn('podman', ['system', 'service', '--time=0', `unix://${dir}/api.sock`], { env: markedEnv(serviceMark, env), stdio: 'ignore' });
    service.on('error', () => undefined);
    const up = await waitUntil(() => cli('docker', ['version', '--format', '{{.Server.Version}}']).code === 0, 20_000);
    if (!up) {
      service.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      return 'podman system service did not answer the docker CLI within 20 s';
    }
  }
  const containers: Runtime['containers'] = (name, label) =>
    cli(name, ['ps', '-aq', '--filter', `label=${label}`]).stdout.split(/\s+/).filter(Boolean);
  const cleanUp = async () => {
    // Only this runtime's storage is touched: every container in it is a test's.
    const ids = cli('podman', ['ps', '-aq', '--filter', `label=${TEST_LABEL}`]).stdout.split(/\s+/).filter(Boolean);
    if (ids.length > 0) cli('podman', ['rm', '-f', '-t', '0', ...ids]);
    if (service?.pid !== undefined && service.exitCode === null) {
      signalProcess(service.pid, 'SIGTERM');
      if (!(await waitForGone([service.pid], 5000))) signalProcess(service.pid, 'SIGKILL');
    }
    // What conmon or the service left running in this runtime (never anything else: by the folder).
    for (const pid of processesMentioning(dir)) signalProcess(pid, 'SIGKILL');
    // runc with cgroupfs leaves each container's (empty) cgroups behind: those of this runtime's
    // containers (its own events log names them all) are removed; a cgroup still in use is not.
    const created = cli('podman', ['events', '--stream=false', '--filter', 'event=create', '--format', '{{.ID}}']).stdout.split(/\s+/).filter(Boolean);
    for (const id of new Set(created)) {
      for (const hierarchy of listDirectory('/sys/fs/cgroup')) {
        const place = join('/sys/fs/cgroup', hierarchy, 'libpod_parent', `libpod-${id}`);
        if (!existsSync(place)) continue;
        spawnSync('sh', ['-c', 'find "$1" -depth -type d -exec rmdir {} + 2>/dev/null', 'sh', place]);
      }
    }
    spawnSync('sh', ['-c', `grep -o " ${dir}[^ ]*" /proc/self/mounts | sort -r | xargs -r -n1 umount -l`]);
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, env, image, cli, containers, cleanUp };
}

function listDirectory(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

/** Live processes whose command line names `text` (a container id, the runtime's folder). */
export function processesMentioning(text: string): number[] {
  return listPids().filter((pid) => pid !== process.pid && (readCommandLine(pid) ?? []).some((word) => word.includes(text)));
}

/** Starts the test client (fixtures/containers/client.mjs) with `command` as its server; waits for the server's "ready". */
export async function startClient(rt: Runtime, mark: string, command: string[], containment = 'auto') {
  const client = startFixture('containers/client.mjs', command, mark, {
    stdio: ['ignore', 'pipe', 'pipe'],
    extraEnv: { ...rt.env, LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '', LEASH_CONTAINMENT: containment },
  });
  const lines = new JsonLines(client);
  const { server } = await lines.next<{ server: number }>(10_000);
  let line = await lines.next<{ line?: string; exit?: number }>(30_000);
  while (line.line !== 'ready') {
    assert.equal(line.exit, undefined, `the server exited before it was ready: ${lines.stderr}`);
    line = await lines.next(30_000);
  }
  return { client, lines, server };
}
