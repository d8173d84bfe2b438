// Inside a container (a nested pid namespace) the processes outside are not listed, and neither
// are the pipe ends they hold: a server fed from outside (by a container runtime, say) has no
// writer in sight. It must not be listed, let alone ended: the kernel, asked through the server's
// own descriptor, says the writer is there.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI_ENTRY } from '../helpers/processes.js';
import type { ReapReport } from './harness.js';
import { idle, q, reapScratch, runShell } from './harness.js';

const canUnshare = process.getuid?.() === 0 && spawnSync('unshare', ['-pf', '--mount-proc', 'true'], { timeout: 10_000 }).status === 0;

test('inside a pid namespace, a server fed from outside it is never listed nor ended', { skip: !canUnshare && 'needs root and unshare' }, async (t) => {
  const { mark, marker, ready } = reapScratch(t);
  const dir = ready.path;
  // Inside: the server reads the pipe from outside (fd 3: an asynchronous list would get
  // /dev/null), in a session of its own so that reap, run from the namespace's init, may judge it.
  const inside = [
    'exec 3<&0',
    `setsid ${idle(marker, 'fed')} <&3 >/dev/null 2>&1 &`,
    `i=0; while [ ! -s ${q(`${dir}/fed`)} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`,
    `${q(process.execPath)} ${q(CLI_ENTRY)} reap --json --match ${q(marker)} --kill --grace 1s > ${q(`${dir}/report.json`)}`,
    `grep '^State:' /proc/$(cat ${q(`${dir}/fed`)})/status > ${q(`${dir}/after`)}`,
    `echo 1 > ${q(`${dir}/finished`)}`,
    'exec sleep 3600',
  ].join('\n');
  // Outside: an idle writer holds the pipe's write end for as long as the test runs.
  await runShell(`${idle(marker, 'writer')} | unshare -pf --mount-proc sh -c ${q(inside)} &`, mark, ready);
  await ready.pid('finished', 60_000);

  const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as ReapReport & { nestedPidNamespace: boolean };
  assert.match(readFileSync(join(dir, 'after'), 'utf8'), /^State:\s+[RS]/, 'the fed server was ended');
  assert.deepEqual(report.trees, [], 'the fed server was listed as leaked');
  assert.deepEqual(report.unknown, []);
  assert.equal(report.nestedPidNamespace, true);
  assert.match(report.blindSpot ?? '', /nested pid namespace/);
});
