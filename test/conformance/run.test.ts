// The tree supervisor's promises (seed: cli_lane_supervisor.py; leash: `leash run`), each a scenario
// run against both: exit statuses, the state document, orphans adopted from the first fork, runner
// exit with leftovers, graceful then forced teardown, stop signals. docs/conformance.md lists them.
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import { waitUntil } from '../../src/sys/wait.js';
import { guardOf } from '../helpers/leash-run.js';
import {
  aliveAs,
  assertGotOnly,
  exitOf,
  goneAt,
  identify,
  MEMBER,
  readJsonFile,
  readLog,
  readyPid,
  RUNNERS,
  scenario,
  signalsOf,
  sleep,
  type Identity,
  type RunImplementation,
  type RunOptions,
  type RunProcess,
} from './harness.js';

const STATE_KEYS = [
  'active_children', 'adopted_children', 'escalated', 'orphaned_children_total', 'phase', 'reaped_children_total',
  'reaped_orphans_total', 'runner_exit_code', 'termination_signal', 'updated_at',
];
const COUNTS = ['active_children', 'adopted_children', 'orphaned_children_total', 'reaped_children_total', 'reaped_orphans_total'];

/** The state document's shape, the same for both: ten keys, typed, `updated_at` an ISO-8601 UTC time. */
function assertDocumentShape(document: Record<string, unknown> | undefined): Record<string, unknown> {
  assert.ok(document, 'no state document');
  assert.deepEqual(Object.keys(document).sort(), STATE_KEYS);
  for (const key of COUNTS) assert.ok(Number.isInteger(document[key]) && (document[key] as number) >= 0, `${key}: ${String(document[key])}`);
  assert.equal(typeof document.escalated, 'boolean');
  assert.ok(['starting', 'running', 'stopping', 'killing', 'exited'].includes(document.phase as string), String(document.phase));
  for (const key of ['runner_exit_code', 'termination_signal']) assert.ok(document[key] === null || Number.isInteger(document[key]), key);
  // Both ISO-8601 in UTC; the seed writes Python's isoformat (`+00:00`, microseconds), leash `Z` (milliseconds).
  assert.match(document.updated_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$/);
  assert.ok(Math.abs(Date.parse(document.updated_at as string) - Date.now()) < 120_000, 'updated_at is not now');
  return document;
}

interface Finished {
  exit: { code: number | null; signal: NodeJS.Signals | null };
  document: Record<string, unknown>;
  run: RunProcess;
}

async function runToEnd(impl: RunImplementation, mark: string, dir: string, command: string[], options: Partial<RunOptions> = {}, budgetMs = 20_000): Promise<Finished> {
  const statePath = join(dir, 'state.json');
  const run = impl.start(mark, command, { graceMs: 2000, statePath, ...options });
  const exit = await exitOf(run.child, budgetMs);
  return { exit, document: assertDocumentShape(readJsonFile(statePath)), run };
}

/** The final document every finished run agrees on, whatever the counters. */
function assertFinal(document: Record<string, unknown>, expected: Record<string, unknown>): void {
  assert.equal(document.phase, 'exited');
  assert.equal(document.active_children, 0);
  assert.equal(document.adopted_children, 0);
  // Every orphan adopted was reaped, and the runner was reaped too.
  assert.equal(document.reaped_orphans_total, document.orphaned_children_total, 'an adopted orphan was not reaped');
  assert.equal(document.reaped_children_total, (document.reaped_orphans_total as number) + 1, 'reaped = runner + orphans');
  for (const [key, value] of Object.entries(expected)) assert.deepEqual(document[key], value, key);
}

/** Runs assertions, adding the supervisor's stderr (what it says it ended, and how) to a failure. */
function withStderr(run: RunProcess, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof Error) error.message += `\n--- ${run.stderr.trim()}`;
    throw error;
  }
}

const sh = (script: string, ...args: string[]) => ['/bin/sh', '-c', script, 'runner', ...args];
const logIn = (dir: string) => join(dir, 'log');
/** Shell text: wait until the member named $2 logged that it is ready in $1. */
const WAIT_READY = 'until grep -q "^$2 ready" "$1" 2>/dev/null; do sleep 0.02; done';

describe('tree supervisor conformance', { concurrency: 6 }, () => {
  scenario(RUNNERS, 'the runner exits 0 with nothing left: exit 0, the final state document', {}, async (impl, { mark, dir }) => {
    const { exit, document } = await runToEnd(impl, mark, dir, sh('exit 0'));
    assert.deepEqual(exit, { code: 0, signal: null });
    assertFinal(document, { runner_exit_code: 0, escalated: false, termination_signal: null, orphaned_children_total: 0 });
  });

  scenario(RUNNERS, 'exit status: the runner\'s own (3)', {}, async (impl, { mark, dir }) => {
    const { exit, document } = await runToEnd(impl, mark, dir, sh('exit 3'));
    assert.deepEqual(exit, { code: 3, signal: null });
    assertFinal(document, { runner_exit_code: 3, escalated: false, termination_signal: null });
  });

  for (const [signal, status] of [['KILL', 137], ['TERM', 143]] as const) {
    scenario(RUNNERS, `exit status 128+n: the runner dies of SIG${signal} (${status})`, {}, async (impl, { mark, dir }) => {
      const { exit, document } = await runToEnd(impl, mark, dir, sh(`kill -s ${signal} $$`));
      assert.deepEqual(exit, { code: status, signal: null });
      assertFinal(document, { runner_exit_code: status, escalated: false, termination_signal: null });
    });
  }

  scenario(RUNNERS, 'a command that does not exist: exit 127', {}, async (impl, { mark, dir }) => {
    const run = impl.start(mark, [join(dir, 'no-such-program')], { graceMs: 500, statePath: join(dir, 'state.json') });
    assert.deepEqual(await exitOf(run.child, 15_000), { code: 127, signal: null });
  });

  scenario(
    RUNNERS,
    'difference: a command that exists but cannot be executed (seed: 127, any exec failure; leash: 126, as shells do)',
    {},
    async (impl, { mark, dir }) => {
      const program = join(dir, 'not-executable');
      writeFileSync(program, '#!/bin/sh\nexit 0\n');
      chmodSync(program, 0o644);
      const run = impl.start(mark, [program], { graceMs: 500, statePath: join(dir, 'state.json') });
      assert.deepEqual(await exitOf(run.child, 15_000), { code: impl.name === 'leash' ? 126 : 127, signal: null });
    },
  );

  scenario(RUNNERS, 'no command after --: usage, exit 64', {}, async (impl, { mark, dir }) => {
    const run = impl.start(mark, [], { graceMs: 500, statePath: join(dir, 'state.json') });
    assert.deepEqual(await exitOf(run.child, 15_000), { code: 64, signal: null });
  });

  scenario(RUNNERS, 'while the runner runs: phase running, no exit code, the runner counted', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const statePath = join(dir, 'state.json');
    const run = impl.start(mark, ['/bin/sh', MEMBER, log, 'runner', 'die'], { graceMs: 2000, statePath });
    const runner = identify(await readyPid(log, 'runner'));
    let document: Record<string, unknown> | undefined;
    assert.ok(await waitUntil(() => (document = readJsonFile(statePath))?.phase === 'running', 5000), 'no running document');
    assertDocumentShape(document);
    assert.equal(document!.runner_exit_code, null);
    assert.equal(document!.termination_signal, null);
    assert.equal(document!.escalated, false);
    assert.equal(aliveAs(runner), true);
    run.child.kill('SIGTERM');
    await exitOf(run.child);
  });

  scenario(
    RUNNERS,
    'a steady tree: active_children and adopted_children settle on the same values (gauges compared once settled, never at a moment)',
    {},
    async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const statePath = join(dir, 'state.json');
      // The runner (a member fixture, with its own sleep), two children and, half a second in (past
      // any start-up window), one orphan: five live processes, one of them adopted.
      const script = 'sleep 1000 & sleep 1000 & sleep 0.5; (sleep 1000 &); exec /bin/sh "$2" "$1" runner die';
      const run = impl.start(mark, sh(script, log, MEMBER), { graceMs: 2000, statePath });
      await readyPid(log, 'runner');
      let document: Record<string, unknown> | undefined;
      const settled = await waitUntil(() => {
        document = readJsonFile(statePath);
        return document?.active_children === 5 && document.adopted_children === 1;
      }, 15_000); // leash refreshes its gauges with its walks (about 5 s here), the seed every 100 ms
      assert.ok(settled, `the gauges never settled on 5 live, 1 adopted: ${JSON.stringify(document)}`);
      assert.equal(document!.phase, 'running');
      run.child.kill('SIGTERM');
      assert.deepEqual(await exitOf(run.child), { code: 143, signal: null });
      assertFinal(assertDocumentShape(readJsonFile(statePath)), { runner_exit_code: 143, termination_signal: 15, escalated: false });
    },
  );

  const leftoversHonouring = async (impl: RunImplementation, mark: string, dir: string, env: NodeJS.ProcessEnv) => {
    const log = logIn(dir);
    const { exit, document, run } = await runToEnd(
      impl, mark, dir,
      sh(`/bin/sh "$3" "$1" left honour & (/bin/sh "$3" "$1" orphan honour &); ${WAIT_READY}; set -- "$1" orphan; ${WAIT_READY}; exit 5`, log, 'left', MEMBER),
      { graceMs: 3000, env },
    );
    assert.deepEqual(exit, { code: 5, signal: null });
    assertGotOnly(log, 'left', 'TERM');
    assertGotOnly(log, 'orphan', 'TERM');
    withStderr(run, () => assertFinal(document, { runner_exit_code: 5, escalated: false, termination_signal: null }));
    assert.ok((document.orphaned_children_total as number) >= 2, `the leftovers were not counted as adopted: ${JSON.stringify(document)}`);
  };

  scenario(
    RUNNERS,
    'runner exit with leftovers that honour SIGTERM: they get it, no SIGKILL, the runner\'s status, the orphans counted (default containment)',
    {},
    async (impl, { mark, dir }) => leftoversHonouring(impl, mark, dir, {}),
  );

  scenario(RUNNERS, 'runner exit with leftovers that honour SIGTERM, process-tree containment: the same', {}, async (impl, { mark, dir }) =>
    leftoversHonouring(impl, mark, dir, { LEASH_CONTAINMENT: 'tree' }),
  );

  scenario(RUNNERS, 'runner exit with a leftover that ignores SIGTERM: SIGTERM, the grace, SIGKILL; escalated', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const started = performance.now();
    const { exit, document } = await runToEnd(impl, mark, dir, sh(`/bin/sh "$3" "$1" stubborn ignore & ${WAIT_READY}; exit 4`, log, 'stubborn', MEMBER), { graceMs: 500 });
    const stubborn = readLog(log).find((line) => line.name === 'stubborn' && line.event === 'ready');
    assert.ok(stubborn, 'the leftover never started');
    // Once (1 CI run of many, the seed's half, under load) the supervisor ended after 328 ms: the
    // document and the members' log now say what it saw, should that come again.
    assert.ok(performance.now() - started >= 500, `it did not wait for the grace: exit ${JSON.stringify(exit)}, document ${JSON.stringify(document)}, log ${JSON.stringify(readLog(log))}`);
    assert.deepEqual(exit, { code: 4, signal: null });
    assertGotOnly(log, 'stubborn', 'TERM');
    assertFinal(document, { runner_exit_code: 4, escalated: true, termination_signal: null });
  });

  for (const [signal, number] of [['SIGTERM', 15], ['SIGINT', 2], ['SIGHUP', 1]] as const) {
    scenario(RUNNERS, `${signal} to the supervisor: the tree gets ${signal}; exit 128+${number}; termination_signal ${number}`, {}, async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const statePath = join(dir, 'state.json');
      const run = impl.start(mark, ['/bin/sh', MEMBER, log, 'runner', 'die'], { graceMs: 2000, statePath });
      const runner = identify(await readyPid(log, 'runner'));
      run.child.kill(signal);
      assert.deepEqual(await exitOf(run.child), { code: 128 + number, signal: null });
      assertGotOnly(log, 'runner', signal.slice(3));
      assert.equal(aliveAs(runner), false);
      assertFinal(assertDocumentShape(readJsonFile(statePath)), { runner_exit_code: 128 + number, escalated: false, termination_signal: number });
    });
  }

  scenario(RUNNERS, 'a stop signal with a runner that ignores it: SIGKILL after the grace, 137, escalated', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const statePath = join(dir, 'state.json');
    const run = impl.start(mark, ['/bin/sh', MEMBER, log, 'runner', 'ignore'], { graceMs: 500, statePath });
    const runner = identify(await readyPid(log, 'runner'));
    const sent = performance.now();
    run.child.kill('SIGTERM');
    assert.deepEqual(await exitOf(run.child), { code: 137, signal: null });
    assert.ok(performance.now() - sent >= 500 * 0.75, 'killed before the grace');
    assert.equal(aliveAs(runner), false);
    assert.ok(signalsOf(log, 'runner').includes('TERM'));
    assertFinal(assertDocumentShape(readJsonFile(statePath)), { runner_exit_code: 137, escalated: true, termination_signal: 15 });
  });

  scenario(
    RUNNERS,
    'difference: SIGUSR1 to the supervisor (leash: forwarded to the runner, nothing else; seed: its default action ends it, the tree is left)',
    {},
    async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const run = impl.start(mark, ['/bin/sh', MEMBER, log, 'runner', 'die'], { graceMs: 500, statePath: join(dir, 'state.json') });
      const runner = identify(await readyPid(log, 'runner'));
      await sleep(300); // past the supervisor's start-up, where a signal still has its default effect
      run.child.kill('SIGUSR1');
      if (impl.name === 'leash') {
        assert.ok(await waitUntil(() => signalsOf(log, 'runner').includes('USR1'), 5000), 'SIGUSR1 was not forwarded');
        assert.equal(run.child.exitCode, null);
        assert.equal(aliveAs(runner), true);
        run.child.kill('SIGTERM');
        assert.deepEqual(await exitOf(run.child), { code: 143, signal: null });
      } else {
        assert.deepEqual(await exitOf(run.child), { code: null, signal: 'SIGUSR1' });
        await sleep(200);
        assert.equal(aliveAs(runner), true, 'the seed\'s tree ended with it');
        assert.deepEqual(signalsOf(log, 'runner'), []);
      }
    },
  );

  const orphansFromTheFirstFork = async (impl: RunImplementation, mark: string, dir: string, env: NodeJS.ProcessEnv) => {
    const pids = join(dir, 'orphans');
    const { exit, document } = await runToEnd(impl, mark, dir, sh('for i in 1 2 3 4 5; do (sleep 0.8 & echo $! >> "$1"); done', pids), { graceMs: 3000, env });
    // The setup: five sleeps, each orphaned at once by the subshell that started it.
    assert.equal(new Set(readFileSync(pids, 'utf8').split('\n').filter(Boolean)).size, 5);
    assert.deepEqual(exit, { code: 0, signal: null });
    assertFinal(document, { runner_exit_code: 0, escalated: false, orphaned_children_total: 5, reaped_orphans_total: 5, reaped_children_total: 6 });
  };

  scenario(
    RUNNERS,
    'issue 28 case 4: orphans made in the command\'s first milliseconds are adopted and counted (default containment)',
    {},
    async (impl, { mark, dir }) => orphansFromTheFirstFork(impl, mark, dir, {}),
  );

  scenario(RUNNERS, 'orphans from the first fork, process-tree containment: adopted and counted', {}, async (impl, { mark, dir }) =>
    orphansFromTheFirstFork(impl, mark, dir, { LEASH_CONTAINMENT: 'tree' }),
  );

  scenario(
    RUNNERS,
    'issue 28 case 5: a 200-process tree that honours SIGTERM: every session leader gets SIGTERM, none is SIGKILLed (grace 1 s)',
    {},
    async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const sessions = 20;
      // The shape of the seed-comparison tree benchmark: 100 children and 80 orphans of the runner
      // in its group (plain sleeps: SIGTERM ends them), and 20 member fixtures in sessions of their
      // own; the runner exits once all are up.
      const script = [
        'i=0; while [ $i -lt 100 ]; do sleep 1000 & i=$((i+1)); done',
        'i=0; while [ $i -lt 80 ]; do (sleep 1000 &); i=$((i+1)); done',
        `i=0; while [ $i -lt ${sessions} ]; do setsid /bin/sh "$2" "$1" s$i honour & i=$((i+1)); done`,
        `until [ "$(grep -c ' ready ' "$1" 2>/dev/null)" -ge ${sessions} ]; do sleep 0.02; done`,
        'echo "runner exit $$" >> "$1"; exit 0',
      ].join('\n');
      const graceMs = 1000;
      const statePath = join(dir, 'state.json');
      const run = impl.start(mark, sh(script, log, MEMBER), { graceMs, statePath });
      assert.ok(await waitUntil(() => readLog(log).some((line) => line.name === 'runner'), 20_000), 'the tree never got up');
      const runnerExited = performance.now();
      assert.deepEqual(await exitOf(run.child, 20_000), { code: 0, signal: null });
      const emptied = performance.now() - runnerExited;
      if (process.env.LEASH_CONFORMANCE_VERBOSE) console.log(`case 5 [${impl.name}]: runner exit -> supervisor exit ${Math.round(emptied)} ms`);
      withStderr(run, () => {
        for (let i = 0; i < sessions; i += 1) assertGotOnly(log, `s${i}`, 'TERM', `session leader s${i} was not given SIGTERM`);
      });
      const document = assertDocumentShape(readJsonFile(statePath));
      withStderr(run, () => assertFinal(document, { runner_exit_code: 0, escalated: false }));
      // Not a time bound: on a loaded machine the seed itself swings from 0.3 to 1 s here. What the
      // seed promises is the order: everyone is asked first, and escalated stays false for a tree
      // that honours the request (the failure above took the whole grace, then SIGKILLed the last
      // session leaders without a SIGTERM).
    },
  );

  scenario(
    RUNNERS,
    'difference: the supervisor SIGKILLed (leash: its guard ends the tree; the seed has no guard, the tree runs on)',
    {},
    async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const run = impl.start(mark, ['/bin/sh', MEMBER, log, 'runner', 'honour'], { graceMs: 500, statePath: join(dir, 'state.json') });
      const runner = identify(await readyPid(log, 'runner'));
      if (impl.name === 'leash') assert.ok(await waitUntil(() => guardOf(run.child.pid!) !== undefined, 5000), 'no guard');
      run.child.kill('SIGKILL');
      await exitOf(run.child);
      if (impl.name === 'leash') {
        assert.notEqual(await goneAt([runner], 10_000), undefined, 'the guard did not end the tree');
        assertGotOnly(log, 'runner', 'TERM');
      } else {
        await sleep(500);
        assert.equal(aliveAs(runner), true);
      }
    },
  );

  scenario(
    RUNNERS,
    'issue 28 case 6: the guard killed four times is replaced each time; leash SIGKILLed then still ends the tree',
    { notApplicable: { seed: 'the seed has no guard (see the SIGKILL difference)' } },
    async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const run = impl.start(mark, ['/bin/sh', MEMBER, log, 'runner', 'honour'], { graceMs: 500, statePath: join(dir, 'state.json') });
      const runner = identify(await readyPid(log, 'runner'));
      const leash = run.child.pid!;
      let guard: Identity | undefined;
      for (let death = 1; death <= 4; death += 1) {
        let pid: number | undefined;
        const seen = await waitUntil(() => (pid = guardOf(leash)) !== undefined && (guard === undefined || pid !== guard.pid), 8000);
        assert.ok(seen, `no guard ${death === 1 ? 'at start' : `after death ${death - 1}`}: ${run.stderr}`);
        guard = identify(pid!);
        process.kill(guard.pid, 'SIGKILL');
        assert.notEqual(await goneAt([guard], 5000), undefined);
      }
      let last: number | undefined;
      assert.ok(await waitUntil(() => (last = guardOf(leash)) !== undefined && last !== guard!.pid, 8000), `no guard after the 4th death: ${run.stderr}`);
      run.child.kill('SIGKILL');
      await exitOf(run.child);
      assert.notEqual(await goneAt([runner], 10_000), undefined, 'the tree outlived leash');
    },
  );

  scenario(
    RUNNERS,
    'issue 28 case 6: process tree, a group whose leader exits leaving a scrubbed member; leash SIGKILLed right after: the member ends',
    { notApplicable: { seed: 'the seed has no guard' } },
    async (impl, { mark, dir }) => {
      // Three runs side by side, leash SIGKILLed 50, 200 and 400 ms after the leader's exit: the
      // leak is a race with leash's next walk, so one trial alone reproduces it about 1 in 3.
      await Promise.all([50, 200, 400].map(async (delayMs) => {
        const log = logIn(dir) + delayMs;
        // The runner starts a group (setsid) whose leader starts a member with a scrubbed
        // environment (`env -i`: no owner token; the test's mark kept, so that the test can clean
        // up), then exits on a line from the test through a fifo.
        const fifo = join(dir, `go${delayMs}`);
        const script = [
          'mkfifo "$3"',
          'setsid /bin/sh -c \'env -i LEASH_TEST_MARK="$LEASH_TEST_MARK" /bin/sh "$1" "$2" scrubbed honour & read go < "$3"; echo "leader exit $$" >> "$2"\' leader "$2" "$1" "$3" &',
          'exec /bin/sh "$2" "$1" runner honour',
        ].join('\n');
        const run = impl.start(mark, sh(script, log, MEMBER, fifo), { graceMs: 500, statePath: join(dir, `state${delayMs}.json`), env: { LEASH_CONTAINMENT: 'tree' } });
        const member = identify(await readyPid(log, 'scrubbed'));
        await readyPid(log, 'runner');
        await sleep(1500); // leash has walked the tree and registered the group with its guard
        writeFileSync(fifo, 'go\n');
        assert.ok(await waitUntil(() => readLog(log).some((line) => line.name === 'leader' && line.event === 'exit'), 5000), 'the leader never exited');
        assert.equal(aliveAs(member), true, 'the member died with its leader');
        await sleep(delayMs);
        run.child.kill('SIGKILL');
        await exitOf(run.child);
        assert.notEqual(await goneAt([member], 10_000), undefined, `the scrubbed member outlived leash (SIGKILLed ${delayMs} ms after the leader's exit)`);
      }));
    },
  );
});
