// A fork storm of short-lived orphans (each handed to leash, the subreaper, where it dies: one
// SIGCHLD each) must cost leash a bounded amount of work per orphan, and leave no zombie behind.
// The work is counted, not timed: read() calls by leash (/proc/<pid>/io syscr), which a tree walk
// multiplies (children files, stat files). Before the running phase's SIGCHLDs were coalesced
// into reap-only passes, every death walked the tree: ~30 reads per orphan. Now a death costs a
// share of a reap pass (at most one per 50 ms) and the tree's sweep (at most one per 200 ms while
// it changes): paced by time, not by deaths, so on a machine where the storm's forks are slow the
// same orphans cost more reads each (2-3 each in a storm of a few seconds, 7.5 in one of 17 s,
// 10.6 in one of 28 s beside a full CI run). The bound allows the paced passes per second of
// storm on top of a few reads per orphan: a walk per death stays far above it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { readChildren, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { markedScratch, startLeash } from '../helpers/leash-run.js';
import { exited } from '../helpers/processes.js';
import { readCalls } from './walks.js';

const HAS_PERL = spawnSync('perl', ['-e', '1']).status === 0;
const ORPHANS = 2000;
const MAX_READS_PER_ORPHAN = 4;
/**
 * Reads of the paced passes per second: 20 reap passes (leash's ~11 threads' children files and
 * a stat or two each) and 5 sweeps (the tree walked until it holds still: about 80 reads), with
 * room to spare.
 */
const PACED_READS_PER_SECOND = 1000;
/** A leash that reaped only once the storm was over would have them all waiting at its end. */
const MAX_ZOMBIES = ORPHANS / 2;

// Waits for SIGUSR1, makes the orphans (each intermediate reaped at once), says "end", then
// waits for SIGTERM.
const STORM = `
$| = 1;
my $go = 0;
$SIG{USR1} = sub { $go = 1 };
print "ready\\n";
sleep 1 until $go;
for (1..${ORPHANS}) {
  my $p = fork() // die "fork: $!";
  if ($p == 0) { fork(); exit 0; }
  waitpid($p, 0);
}
print "end\\n";
sleep 1 while 1;
`;

function zombieChildren(pid: number): number {
  return (readChildren(pid) ?? []).filter((child) => readProcStat(child)?.state === 'Z').length;
}

test('a storm of short-lived orphans: bounded work per orphan, bounded zombies, all reaped', { skip: HAS_PERL ? false : 'perl is not installed' }, async (t) => {
  const { mark } = markedScratch(t);
  const leash = startLeash(['run', '-q', '--grace', '5', '--', 'perl', '-e', STORM], mark);
  const pid = leash.child.pid as number;
  assert.ok(await waitUntil(() => leash.stdout().includes('ready'), 15_000), `the storm never got ready: ${leash.stderr()}`);
  const before = readCalls(pid);
  const started = performance.now();
  signalRunner(pid);
  let maxZombies = 0;
  const ended = await waitUntil(() => {
    maxZombies = Math.max(maxZombies, zombieChildren(pid));
    return leash.stdout().includes('end');
  }, 120_000);
  assert.ok(ended, `the storm did not end: ${leash.stderr()}`);
  assert.ok(await waitUntil(() => zombieChildren(pid) === 0, 5000), `zombies left after the storm: ${zombieChildren(pid)}`);
  const seconds = (performance.now() - started) / 1000;
  const reads = readCalls(pid) - before;
  const allowed = ORPHANS * MAX_READS_PER_ORPHAN + seconds * PACED_READS_PER_SECOND;
  assert.ok(maxZombies <= MAX_ZOMBIES, `${maxZombies} zombies waited for leash at once`);
  assert.ok(reads < allowed, `leash made ${reads} read() calls for ${ORPHANS} orphans in ${seconds.toFixed(1)} s (${(reads / ORPHANS).toFixed(1)} per orphan; at most ${Math.round(allowed)})`);
  t.diagnostic(`reads per orphan ${(reads / ORPHANS).toFixed(2)} over ${seconds.toFixed(1)} s (bound ${(allowed / ORPHANS).toFixed(1)}), most zombies at once ${maxZombies}`);
  process.kill(pid, 'SIGTERM');
  assert.equal((await exited(leash.child)).signal, null);
});

function signalRunner(leashPid: number): void {
  const runner = (readChildren(leashPid) ?? []).find((child) => readFileSync(`/proc/${child}/comm`, 'utf8').trim() === 'perl');
  assert.ok(runner, 'no perl runner below leash');
  process.kill(runner, 'SIGUSR1');
}
