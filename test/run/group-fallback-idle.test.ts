// The process-group fallback of `leash run` (no subreaper: no koffi, or not Linux) polled its group
// every 100 ms with liveMemberCounts, which scans all of /proc whenever the group answers a probe:
// ten full scans a second while the command ran (thousands of read() calls a second on a machine
// with ~600 processes). The runner's exit is an event; only then must the group be waited for,
// through waitForGroupEmpty. Counted, not timed: leash's read() calls (/proc/<pid>/io syscr) over
// a window of the command running.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProcessAlive, signalProcess } from '../../src/sys/processes.js';
import { hasProcfs, listPids, readChildren } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { markedScratch } from '../helpers/leash-run.js';
import { exited, startFixture } from '../helpers/processes.js';
import { readCalls } from './walks.js';

/** The window over which reads are counted: a measurement span, not a wait for an event. */
const WINDOW_MS = 1000;

test('the process-group fallback does not scan /proc while the command runs', { skip: !hasProcfs() && 'needs /proc: it counts read() calls in /proc/<pid>/io' }, async (t) => {
  const { mark } = markedScratch(t);
  const fallback = startFixture('run/group-fallback.mjs', ['sleep', '300'], mark);
  const pid = fallback.pid as number;
  assert.ok(await waitUntil(() => (readChildren(pid) ?? []).length > 0, 10_000), 'the command never started');
  const before = readCalls(pid);
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  const reads = readCalls(pid) - before;
  // One scan reads every process's stat: the old poll made ten of them in the window; half that
  // is the bound (the new code made none at all).
  const oneScan = listPids().length;
  assert.ok(reads < oneScan * 5, `${reads} read() calls in ${WINDOW_MS} ms (a /proc scan is ~${oneScan})`);
  t.diagnostic(`read() calls in ${WINDOW_MS} ms: ${reads}; processes on the machine: ${oneScan}`);
  signalProcess(pid, 'SIGTERM');
  const result = await exited(fallback);
  assert.equal(result.code, 0);
});

test('the process-group fallback still takes down what the command leaves in its group', async (t) => {
  const { mark } = markedScratch(t);
  const fallback = startFixture('run/group-fallback.mjs', ['sh', '-c', 'sleep 300 & echo $!'], mark);
  let out = '';
  fallback.stdout?.setEncoding('utf8').on('data', (text: string) => (out += text));
  const result = await exited(fallback);
  assert.equal(result.code, 0);
  assert.match(out, /exit 0/);
  const sleeper = Number(out.split('\n')[0]);
  assert.ok(sleeper > 0, out);
  assert.ok(await waitUntil(() => !isProcessAlive(sleeper), 5000), 'the sleeper outlived the fallback');
});
