// Issue #28, case 5: contained, a graceful stop of a large tree is graceful. The runner exits and
// leaves 120 members, each in a session of its own (the shape that was signalled group by group,
// a few groups per time slice, the rest at later sweeps), each honouring SIGTERM with a handler
// that records it. The cgroup is frozen, every member of one read signalled, thawed: every member
// has its SIGTERM at once, none is SIGKILLed, and leash exits well within the grace. Before, the
// stop reached a few groups per sweep and the grace ran out first: members got SIGKILL without
// ever getting SIGTERM (`escalated` true).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readCommandLine, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { destroyCgroup, usableCgroup } from '../helpers/cgroup.js';
import { markedScratch, readJson, startLeash } from '../helpers/leash-run.js';
import { exited, markedPids } from '../helpers/processes.js';

const place = await usableCgroup();
const skip = typeof place === 'string' ? `no cgroup to test with: ${place}` : false;
const SESSIONS = 120;

test('contained: 120 sessions that honour SIGTERM all get it at once when the runner exits; none is SIGKILLed', { skip }, async (t) => {
  const { mark, dir, state } = markedScratch(t);
  const go = join(dir, 'go');
  const termed = join(dir, 'termed');
  const ready = join(dir, 'ready');
  execFileSync('mkfifo', [go]);
  writeFileSync(termed, '');
  writeFileSync(ready, '');
  // Each member: a shell in a session of its own that records its SIGTERM and exits; `wait` is
  // interrupted by the trap (a foreground sleep would hold it back).
  const member = `trap 'echo $$ >> ${termed}; exit 0' TERM; echo $$ >> ${ready}; sleep 1000 & wait`;
  const script = `i=0; while [ $i -lt ${SESSIONS} ]; do setsid sh -c "${member.replace(/"/g, '\\"').replace(/\$\$/g, '\\$\\$')}" & i=$((i+1)); done; read x < '${go}'; exit 0`;
  const leash = startLeash(['run', '--grace', '2', '--state', state, '--', 'sh', '-c', script], mark);
  t.after(async () => {
    const run = /containment: cgroup v2 \((.+)\)$/m.exec(leash.stderr())?.[1];
    if (run !== undefined) await destroyCgroup(run);
  });
  const readyPids = () => readFileSync(ready, 'utf8').split('\n').filter(Boolean).map(Number);
  assert.ok(await waitUntil(() => readyPids().length === SESSIONS, 30_000), `${readyPids().length} ready; ${leash.stderr()}`);
  assert.match(leash.stderr(), /containment: cgroup v2/);
  // The case: every member leads a session of its own, and is a shell waiting on its sleep.
  const members = readyPids();
  assert.equal(new Set(members.map((pid) => readProcStat(pid)?.sid)).size, SESSIONS);
  assert.ok(members.every((pid) => readProcStat(pid)?.sid === pid && (readCommandLine(pid) ?? [])[0] === 'sh'));
  writeFileSync(go, 'go\n');
  const { code } = await exited(leash.child, 30_000);
  assert.equal(code, 0, leash.stderr());
  const final = readJson(state);
  assert.equal(final?.escalated, false, leash.stderr());
  assert.doesNotMatch(leash.stderr(), /killed \d+ process/);
  const got = new Set(readFileSync(termed, 'utf8').split('\n').filter(Boolean).map(Number));
  assert.deepEqual(members.filter((pid) => !got.has(pid)), [], 'members that never got SIGTERM');
  assert.deepEqual(markedPids(mark), []);
});
