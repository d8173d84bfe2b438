// leash run --die-with-parent watches stdin only where it can show the client's death: a pipe's
// read end (every writer gone) or a connected stream socket (the peer closed). An unconnected
// socket, a pipe's write end and a datagram socket are named once and not watched: the tree
// stays while the client lives. The stdin of each case is made by Python, which can hand a child
// any descriptor (Node's spawn cannot make these).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { CLI_ENTRY, killMarked, MARK_VARIABLE, markedPids, newMark } from '../helpers/processes.js';

const DRIVER = String.raw`
import json, os, socket, subprocess, sys, time
kind, node, leash, wait = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
if kind == 'unconnected-socket':
    mine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); fd = mine.fileno(); other = None
elif kind == 'pipe-write-end':
    r, w = os.pipe(); fd = w; other = r
elif kind == 'datagram-socket':
    mine, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); fd = mine.fileno(); other = peer
elif kind == 'stream-socket':
    mine, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM); fd = mine.fileno(); other = peer
elif kind == 'pipe-read-end':
    r, w = os.pipe(); fd = r; other = w
server = "process.stdout.write('up\\n'); setInterval(() => {}, 1000)"
p = subprocess.Popen([node, leash, 'run', '--die-with-parent', '--grace', '1', '--', node, '-e', server], stdin=fd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
os.close(fd) if isinstance(fd, int) and kind.startswith('pipe') else None
if kind.endswith('socket'): mine.close()
up = p.stdout.readline().decode().strip()
# The far side leaves: the peer, the reader, or (unconnected) nothing at all.
if other is not None:
    other.close() if hasattr(other, 'close') else os.close(other)
deadline = time.monotonic() + wait
while p.poll() is None and time.monotonic() < deadline:
    time.sleep(0.05)
by_itself = p.poll() is not None
if not by_itself:
    p.terminate()
out, err = p.communicate(timeout=20)
print(json.dumps({'up': up, 'byItself': by_itself, 'stderr': err.decode()}))
`;

function hasPython(): boolean {
  return spawnSync('python3', ['-c', 'import socket']).status === 0;
}

function drive(kind: string, waitSeconds: number, mark: string): { up: string; byItself: boolean; stderr: string } {
  const result = spawnSync('python3', ['-c', DRIVER, kind, process.execPath, CLI_ENTRY, String(waitSeconds)], {
    encoding: 'utf8',
    env: { ...process.env, [MARK_VARIABLE]: mark, LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' },
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as { up: string; byItself: boolean; stderr: string };
}

const skip = process.platform !== 'linux' ? 'the stdin watch is Linux only' : hasPython() ? false : 'needs python3';

describe('the stdin watch of leash run --die-with-parent', { skip }, () => {
  const cases: [string, RegExp][] = [
    ['unconnected-socket', /stdin is a socket with no peer/],
    ['pipe-write-end', /stdin is the write end of a pipe/],
    ['datagram-socket', /stdin is a datagram socket/],
  ];
  for (const [kind, note] of cases) {
    it(`${kind}: named once, not watched, the tree stays while the client lives`, async () => {
      const mark = newMark();
      try {
        const result = drive(kind, 2, mark);
        assert.equal(result.up, 'up', `the server ran: ${result.stderr}`);
        assert.match(result.stderr, note);
        assert.equal(result.stderr.match(/note: --die-with-parent/g)?.length, 1, result.stderr);
        assert.equal(result.byItself, false, `the tree was stopped: ${result.stderr}`);
        assert.doesNotMatch(result.stderr, /no writer left/);
      } finally {
        await killMarked(mark);
      }
    });
  }

  for (const kind of ['stream-socket', 'pipe-read-end']) {
    it(`${kind}: the far side gone stops the tree`, async () => {
      const mark = newMark();
      try {
        const result = drive(kind, 20, mark);
        assert.equal(result.up, 'up', result.stderr);
        assert.equal(result.byItself, true, result.stderr);
        assert.doesNotMatch(result.stderr, /note: --die-with-parent/);
        assert.deepEqual(markedPids(mark), []);
      } finally {
        await killMarked(mark);
      }
    });
  }
});
