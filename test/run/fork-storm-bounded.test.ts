// A fork storm of short-lived orphans (each handed to leash, the subreaper, where it dies: one
// SIGCHLD each) must cost leash a bounded amount of work per orphan, and leave no zombie behind.
// The work is counted, not timed: read() calls by leash (/proc/<pid>/io syscr), which a tree walk
// multiplies (children files, stat files). Before the running phase's SIGCHLDs were coalesced
// into reap-only passes, every death walked the tree: ~30 reads per orphan against ~2-3 now
// (measured side by side); the bound below sits between, far from both.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { readChildren, readProcStat } from '../../src/sys/procfs.js';
import { waitUntil } from '../../src/sys/wait.js';
import { markedScratch, startLeash } from '../helpers/leash-run.js';
import { exited } from '../helpers/processes.js';

const HAS_PERL = spawnSync('perl', ['-e', '1']).status === 0;
const ORPHANS = 2000;
const MAX_READS_PER_ORPHAN = 10;
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

function readCalls(pid: number): number {
  const line = readFileSync(`/proc/${pid}/io`, 'utf8').split('\n').find((l) => l.startsWith('syscr:'));
  return Number(line?.split(/\s+/)[1]);
}

function zombieChildren(pid: number): number {
  return (readChildren(pid) ?? []).filter((child) => readProcStat(child)?.state === 'Z').length;
}

test('a storm of short-lived orphans: bounded work per orphan, bounded zombies, all reaped', { skip: HAS_PERL ? false : 'perl is not installed' }, async (t) => {
  const { mark } = markedScratch(t);
  const leash = startLeash(['run', '-q', '--grace', '5', '--', 'perl', '-e', STORM], mark);
  const pid = leash.child.pid as number;
  assert.ok(await waitUntil(() => leash.stdout().includes('ready'), 15_000), `the storm never got ready: ${leash.stderr()}`);
  const before = readCalls(pid);
  signalRunner(pid);
  let maxZombies = 0;
  const ended = await waitUntil(() => {
    maxZombies = Math.max(maxZombies, zombieChildren(pid));
    return leash.stdout().includes('end');
  }, 120_000);
  assert.ok(ended, `the storm did not end: ${leash.stderr()}`);
  assert.ok(await waitUntil(() => zombieChildren(pid) === 0, 5000), `zombies left after the storm: ${zombieChildren(pid)}`);
  const perOrphan = (readCalls(pid) - before) / ORPHANS;
  assert.ok(maxZombies <= MAX_ZOMBIES, `${maxZombies} zombies waited for leash at once`);
  assert.ok(perOrphan < MAX_READS_PER_ORPHAN, `leash made ${perOrphan.toFixed(1)} read() calls per orphan`);
  t.diagnostic(`reads per orphan ${perOrphan.toFixed(2)}, most zombies at once ${maxZombies}`);
  process.kill(pid, 'SIGTERM');
  assert.equal((await exited(leash.child)).signal, null);
});

function signalRunner(leashPid: number): void {
  const runner = (readChildren(leashPid) ?? []).find((child) => readFileSync(`/proc/${child}/comm`, 'utf8').trim() === 'perl');
  assert.ok(runner, 'no perl runner below leash');
  process.kill(runner, 'SIGUSR1');
}
