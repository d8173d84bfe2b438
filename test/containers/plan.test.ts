// What leash adds to a container run's command line, and what it leaves alone. Pure: no runtime.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasProcfs } from '../../src/sys/procfs.js';
import { CONTAINER_LABEL, isContainerCommand, parseContainerCommand, parseRunIdentity, planContainerRun, runIdentity } from '../../src/run/containers.js';

const RUN = 'host/1/2/boot/3';
const LABEL = `${CONTAINER_LABEL}=${RUN}`;
const plan = (command: string, args: string[]) => planContainerRun(command, args, RUN, {}, 2500);

test('the label goes right after `run`, global options kept before it', () => {
  assert.deepEqual(plan('docker', ['run', '-i', '--rm', 'img'])?.args, ['run', '--label', LABEL, '-i', '--rm', 'img']);
  assert.deepEqual(plan('docker', ['-H', 'tcp://h:2375', '--context', 'ctx', 'container', 'run', '-i', 'img', 'serve'])?.args,
    ['-H', 'tcp://h:2375', '--context', 'ctx', 'container', 'run', '--label', LABEL, '-i', 'img', 'serve']);
  const podman = plan('/usr/bin/podman', ['--url', 'unix:///s', '--connection=remote', 'run', '-i', '--rm', 'img']);
  assert.deepEqual(podman?.command.globals, ['--url', 'unix:///s', '--connection=remote']);
  assert.deepEqual(podman?.args.slice(3, 6), ['run', '--label', LABEL]);
  assert.deepEqual(plan('nerdctl', ['--namespace', 'k8s.io', 'run', 'img'])?.command.globals, ['--namespace', 'k8s.io']);
  assert.equal(plan('docker.exe', ['--debug', 'run', 'img'])?.command.cli, 'docker');
  assert.deepEqual(plan('docker.exe', ['--debug', 'run', 'img'])?.command.globals, ['--debug']);
});

test('--rm, -d (bundled too), the user\'s labels and cidfile are read, not changed', () => {
  const parsed = parseContainerCommand('docker', ['run', '-it', '--rm', '-l', 'a=b', '--label=c=d', '--cidfile', '/tmp/cid', '-e', 'X=-d', '--name', 'srv', 'img', '-d']);
  assert.equal(parsed?.remove, true);
  assert.equal(parsed?.detached, false, 'a -d after the image is the container command\'s, and -e takes a value');
  assert.deepEqual(parsed?.userLabels, ['a=b', 'c=d']);
  assert.equal(parsed?.cidfile, '/tmp/cid');
  assert.equal(parsed?.image, 'img');
  assert.equal(parseContainerCommand('docker', ['run', '-dit', 'img'])?.detached, true);
  assert.equal(parseContainerCommand('docker', ['run', '--detach', 'img'])?.detached, true);
  assert.equal(parseContainerCommand('docker', ['run', '--detach=false', 'img'])?.detached, false);
  assert.equal(parseContainerCommand('docker', ['run', '--rm=false', 'img'])?.remove, false);
  assert.equal(parseContainerCommand('docker', ['run', '-p8080:80', '-d', 'img'])?.detached, true);
  const kept = plan('docker', ['run', '-i', 'img']);
  assert.match(kept?.describe() ?? '', /stop -t 3 \(kept: no --rm\)/, 'the grace rounded up to whole seconds');
});

test('a detached run is named and left alone: nothing added', () => {
  const detached = plan('docker', ['run', '-d', '--rm', 'img']);
  assert.equal(detached?.label, undefined);
  assert.deepEqual(detached?.args, ['run', '-d', '--rm', 'img']);
  assert.match(detached?.describe() ?? '', /detached container: not labelled, left running/);
});

test('nothing is added to a command that is not a container run', () => {
  for (const [command, args] of [
    ['docker', ['ps']], ['docker', ['container', 'ls']], ['docker', ['--context', 'run', 'ps']], ['docker', []],
    ['node', ['run', 'img']], ['npx', ['docker', 'run']], ['podman', ['compose', 'run', 'x']], ['dockerd', ['run']],
  ] as const) {
    assert.equal(planContainerRun(command, [...args], RUN, {}, 1000), undefined, `${command} ${args.join(' ')}`);
    assert.equal(isContainerCommand(command, args), false);
  }
  assert.equal(isContainerCommand('docker', ['run', '-i', '--rm', 'ghcr.io/github/github-mcp-server']), true);
  assert.equal(isContainerCommand('C:\\Program Files\\Docker\\docker.exe', ['run', 'img']), true);
});

test('the run identity reads back', () => {
  const id = runIdentity();
  const parsed = parseRunIdentity(id);
  assert.equal(parsed?.pid, process.pid);
  // Where procfs can say (not the macOS-paths lane, which hides /proc): start time, boot, namespace.
  if (hasProcfs()) assert.ok(parsed?.startTime !== undefined && parsed.bootId !== undefined && parsed.pidNamespace !== undefined);
  assert.equal(parseRunIdentity('not/ours'), undefined);
});
