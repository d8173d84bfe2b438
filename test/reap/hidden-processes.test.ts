// /proc mounted with hidepid=invisible hides other users' processes from an ordinary user: they
// are not even listed, so "no holder seen" proves nothing and the scan must say it is partly
// blind. A fresh procfs instance in a private mount namespace: the machine's /proc is untouched.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import type { ReapReport } from './harness.js';
import { OTHER_USER_CLI, idle, q, reapScratch, runShell } from './harness.js';

const CALLER_UID = 1; // daemon

function reapUnderHidepid(args: string[]): { code: number | null; report: ReapReport; stderr: string } {
  const reap = ['setpriv', `--reuid=${CALLER_UID}`, `--regid=${CALLER_UID}`, '--clear-groups', process.execPath, OTHER_USER_CLI, 'reap', '--json', ...args];
  const script = `mount -t proc -o hidepid=invisible proc /proc && exec ${reap.map(q).join(' ')}`;
  const result = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8', timeout: 60_000 });
  try {
    return { code: result.status, report: JSON.parse(result.stdout) as ReapReport, stderr: result.stderr };
  } catch {
    throw new Error(`no JSON (exit ${result.status}): ${result.stdout}${result.stderr}`);
  }
}

const canMount = process.getuid?.() === 0 && spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', 'mount -t proc -o hidepid=invisible proc /proc'], { timeout: 10_000 }).status === 0;

test('under hidepid=invisible the scan names its blind spot, and the kernel still proves a real leak', { skip: !canMount && 'needs root and a private mount namespace' }, async (t) => {
  const { mark, marker, ready, byIdentity } = reapScratch(t);
  await runShell(`true | ${idle(marker, 'cut')} >/dev/null 2>&1 &`, mark, ready, CALLER_UID);
  const cut = byIdentity(await ready.pid('cut'));

  const hidden = reapUnderHidepid(['--match', marker]);
  assert.match(hidden.report.blindSpot ?? '', /hidepid=invisible/, hidden.stderr);
  assert.deepEqual(hidden.report.trees.map((tree) => [tree.pid, tree.reasons]), [[cut, ['stdin-no-writer']]]);
  assert.deepEqual(hidden.report.unknown, []);
});
