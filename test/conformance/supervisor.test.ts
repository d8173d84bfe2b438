// The death supervisor's promises (seed: mcp_death_supervisor.py; leash: `leash supervise`, started
// as the owner library starts it), each a scenario run against both. docs/conformance.md lists
// them with the promise each checks and every deliberate difference.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe } from 'node:test';
import { exited, FIXTURES, markedEnv } from '../helpers/processes.js';
import {
  aliveAs,
  assertGotOnly,
  isLeash,
  canUnshare,
  groupWithMember,
  memberGroup,
  exitOf,
  goneAt,
  groupOf,
  MEMBER,
  scenario,
  signalsOf,
  sleep,
  startSupervisor,
  SUPERVISORS,
  type SupervisorImplementation,
} from './harness.js';

/** The supervisor's grace, with room for a loaded machine on either side. */
function assertKilledAfterGrace(impl: SupervisorImplementation, eofAt: number, goneAtMs: number | undefined): void {
  assert.ok(goneAtMs !== undefined, 'still alive long after the grace');
  const elapsed = goneAtMs - eofAt;
  assert.ok(elapsed >= impl.graceMs * 0.75, `killed ${Math.round(elapsed)} ms after EOF, before the ${impl.graceMs} ms grace`);
}

const budget = (impl: SupervisorImplementation) => impl.graceMs + 5000;
const logIn = (dir: string) => join(dir, 'log');

describe('death supervisor conformance', { concurrency: 8 }, () => {
  scenario(SUPERVISORS, 'register then EOF: the group gets SIGTERM and ends; the supervisor exits 0', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const group = await memberGroup(mark, log, 'g');
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send(`register ${group.pid}\n`);
    assert.equal(aliveAs(group), true, 'nothing happens before EOF');
    await supervisor.eof();
    assert.notEqual(await goneAt([group], budget(impl)), undefined, 'the group outlived the teardown');
    assertGotOnly(log, 'g', 'TERM');
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
  });

  scenario(SUPERVISORS, 'unregister: the group is left alone at EOF', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const group = await memberGroup(mark, log, 'g');
    const control = await memberGroup(mark, log, 'control');
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send(`register ${group.pid}\nregister ${control.pid}\nunregister ${group.pid}\n`);
    await supervisor.eof();
    assert.notEqual(await goneAt([control], budget(impl)), undefined, 'the teardown did not run');
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
    assert.equal(aliveAs(group), true);
    assert.deepEqual(signalsOf(log, 'g'), []);
  });

  scenario(SUPERVISORS, 'duplicate register: one registration (SIGTERM once); one unregister forgets it', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const twice = await memberGroup(mark, log, 'twice', 'ignore');
    const forgotten = await memberGroup(mark, log, 'forgotten');
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send(`register ${twice.pid}\nregister ${twice.pid}\nregister ${forgotten.pid}\nregister ${forgotten.pid}\nunregister ${forgotten.pid}\n`);
    const eofAt = await supervisor.eof();
    assertKilledAfterGrace(impl, eofAt, await goneAt([twice], budget(impl)));
    assert.deepEqual(signalsOf(log, 'twice'), ['TERM'], 'SIGTERM exactly once, then SIGKILL');
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
    assert.equal(aliveAs(forgotten), true, 'one unregister undoes two registers');
  });

  scenario(SUPERVISORS, 'garbage lines are ignored, and the lines after them still count', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const target = await memberGroup(mark, log, 'target');
    const bystander = await memberGroup(mark, log, 'bystander');
    const supervisor = startSupervisor(impl, mark);
    const b = bystander.pid;
    const garbage = [
      'hello', 'register', `register ${b} ${b} ${b}`, `register x${b}`, `register ${b}.5`, `REGISTER ${b}`, `kill ${b}`,
      `unregister`, `register 0x${b.toString(16)}`, '', '   ', `\u0000\u00ff register ${b}`,
    ];
    await supervisor.send(garbage.join('\n') + `\nregister ${target.pid}\n`);
    await supervisor.eof();
    assert.notEqual(await goneAt([target], budget(impl)), undefined, 'the valid line after the garbage was lost');
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
    assert.equal(aliveAs(bystander), true, 'a garbage line was taken as a command');
  });

  scenario(SUPERVISORS, 'a line of 256 bytes, its newline included, is a command; 257 bytes is not', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const fits = await memberGroup(mark, log, 'fits');
    const over = await memberGroup(mark, log, 'over');
    const padded = (pgid: number, bytes: number) => `register ${pgid}`.padEnd(bytes - 1, ' ') + '\n';
    assert.equal(padded(fits.pid, 256).length, 256);
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send(padded(fits.pid, 256) + padded(over.pid, 257));
    await supervisor.eof();
    assert.notEqual(await goneAt([fits], budget(impl)), undefined, 'the 256-byte line was not taken');
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
    assert.equal(aliveAs(over), true, 'the 257-byte line was taken');
  });

  scenario(
    SUPERVISORS,
    'difference: an over-long line whose tail is a command (seed: the tail registers; leash: the whole line is dropped)',
    {},
    async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const tail = await memberGroup(mark, log, 'tail');
      const control = await memberGroup(mark, log, 'control');
      const supervisor = startSupervisor(impl, mark);
      await supervisor.send('x'.repeat(256) + `register ${tail.pid}\nregister ${control.pid}\n`);
      await supervisor.eof();
      assert.notEqual(await goneAt([control], budget(impl)), undefined, 'the teardown did not run');
      assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
      if (impl.name === 'seed') assert.equal(aliveAs(tail), false, 'the seed acts on the tail past its 256-character read');
      else {
        assert.equal(aliveAs(tail), true, 'leash acted on part of an over-long line');
        assert.match(supervisor.stderr, /overlong/);
      }
    },
  );

  scenario(
    SUPERVISORS,
    'difference: a number written with a sign (seed: Python int() takes "+N"; leash: digits only)',
    {},
    async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const signed = await memberGroup(mark, log, 'signed');
      const control = await memberGroup(mark, log, 'control');
      const supervisor = startSupervisor(impl, mark);
      await supervisor.send(`register +${signed.pid}\nregister ${control.pid}\n`);
      await supervisor.eof();
      assert.notEqual(await goneAt([control], budget(impl)), undefined, 'the teardown did not run');
      assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
      assert.equal(aliveAs(signed), isLeash(impl.name), impl.name === 'seed' ? 'the seed registers "+N"' : 'leash took a signed number');
    },
  );

  scenario(SUPERVISORS, 'an unterminated last line at EOF is not a command', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const unterminated = await memberGroup(mark, log, 'unterminated');
    const control = await memberGroup(mark, log, 'control');
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send(`register ${control.pid}\nregister ${unterminated.pid}`);
    await supervisor.eof();
    assert.notEqual(await goneAt([control], budget(impl)), undefined, 'the teardown did not run');
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
    assert.equal(aliveAs(unterminated), true);
  });

  scenario(SUPERVISORS, 'EOF with nothing registered: it exits 0 at once', {}, async (impl, { mark }) => {
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send('');
    const eofAt = await supervisor.eof();
    assert.deepEqual(await supervisor.exited(budget(impl)), { code: 0, signal: null });
    assert.ok(performance.now() - eofAt < impl.graceMs + 2000, 'it waited for nothing');
  });

  scenario(SUPERVISORS, 'grace: a member that ignores SIGTERM gets it, then SIGKILL once the grace is over', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const stubborn = await memberGroup(mark, log, 'stubborn', 'ignore');
    const polite = await memberGroup(mark, log, 'polite');
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send(`register ${stubborn.pid}\nregister ${polite.pid}\n`);
    const eofAt = await supervisor.eof();
    const politeGone = await goneAt([polite], budget(impl));
    assert.ok(politeGone !== undefined && politeGone - eofAt < impl.graceMs + 2000, 'the polite group waited for the grace');
    assertKilledAfterGrace(impl, eofAt, await goneAt([stubborn], budget(impl)));
    assertGotOnly(log, 'stubborn', 'TERM', 'SIGTERM first (logged), then an uncatchable end');
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
  });

  scenario(SUPERVISORS, 'a TERM-ignoring member in a group whose leader honours SIGTERM: killed after the grace', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const group = await groupWithMember(mark, log, 'member', 'ignore');
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send(`register ${group.pgid}\n`);
    const eofAt = await supervisor.eof();
    assertKilledAfterGrace(impl, eofAt, await goneAt([group.member, group.leader], budget(impl)));
    assertGotOnly(log, 'member', 'TERM');
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
  });

  scenario(SUPERVISORS, 'a group whose leader died before its registration: the member left in it ends at EOF', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const group = await groupWithMember(mark, log, 'member', 'honour');
    await group.leaderExits();
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send(`register ${group.pgid}\n`);
    await supervisor.eof();
    assert.notEqual(await goneAt([group.member], budget(impl)), undefined, 'the member left by the leader runs on');
    assertGotOnly(log, 'member', 'TERM');
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
  });

  scenario(
    SUPERVISORS,
    'issue 28 case 1: registered while the leader lives; the leader exits leaving a member; EOF ends the member',
    {},
    async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const group = await groupWithMember(mark, log, 'member', 'honour');
      const supervisor = startSupervisor(impl, mark);
      await supervisor.send(`register ${group.pgid}\n`);
      await sleep(50); // taken (read) above; a little more for it to act on the line
      await group.leaderExits();
      await supervisor.eof();
      assert.notEqual(await goneAt([group.member], budget(impl)), undefined, 'the member the leader left behind runs on');
      assertGotOnly(log, 'member', 'TERM');
      assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
    },
  );

  scenario(SUPERVISORS, 'SIGINT and SIGHUP do not end it: only EOF does, and the teardown follows', {}, async (impl, { mark, dir }) => {
    const log = logIn(dir);
    const group = await memberGroup(mark, log, 'g');
    const supervisor = startSupervisor(impl, mark);
    await supervisor.send(`register ${group.pid}\n`);
    supervisor.child.kill('SIGINT');
    supervisor.child.kill('SIGHUP');
    await sleep(200);
    assert.equal(supervisor.child.exitCode, null, `it exited: ${supervisor.stderr}`);
    assert.equal(supervisor.child.signalCode, null, `a signal ended it: ${supervisor.stderr}`);
    assert.equal(aliveAs(group), true);
    await supervisor.eof();
    assert.notEqual(await goneAt([group], budget(impl)), undefined);
    assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
  });

  scenario(
    SUPERVISORS,
    'difference: SIGTERM to the supervisor (seed: it dies of it and reaps nothing; leash: ignored, EOF still tears down)',
    {},
    async (impl, { mark, dir }) => {
      const log = logIn(dir);
      const group = await memberGroup(mark, log, 'g');
      const supervisor = startSupervisor(impl, mark);
      await supervisor.send(`register ${group.pid}\n`);
      supervisor.child.kill('SIGTERM');
      if (impl.name === 'seed') {
        assert.deepEqual(await supervisor.exited(), { code: null, signal: 'SIGTERM' });
        await sleep(200);
        assert.equal(aliveAs(group), true, 'the seed reaped after all');
      } else {
        await sleep(200);
        assert.equal(supervisor.child.exitCode, null, 'SIGTERM ended leash supervise');
        await supervisor.eof();
        assert.notEqual(await goneAt([group], budget(impl)), undefined);
        assert.deepEqual(await supervisor.exited(), { code: 0, signal: null });
      }
    },
  );

  scenario(SUPERVISORS, 'started inside the parent\'s process group: it refuses, exit 2', {}, async (impl, { mark }) => {
    const [command, ...args] = impl.argv(groupOf(process.pid)!);
    const child = spawn(command!, args, { stdio: ['pipe', 'ignore', 'pipe'], env: markedEnv(mark, impl.env) });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    assert.equal(groupOf(child.pid!), groupOf(process.pid), 'it was started in the parent\'s group');
    assert.deepEqual(await exited(child, 10_000), { code: 2, signal: null }); // (its stderr drained too)
    assert.match(stderr, /group/);
  });

  scenario(
    SUPERVISORS,
    'never signals pgid 0, 1 or below, its own group or its parent\'s (pid namespace: group 1 is a recorder)',
    { skip: canUnshare ? false : 'needs root and unshare --pid' },
    async (impl, { mark, dir }) => {
      const outcome = await inNamespace(mark, dir, 'never', impl);
      assert.equal(outcome.victimAlive, false, 'the teardown did not run (the victim group lives)');
      assert.deepEqual(outcome.victimSignals, ['TERM']);
      assert.deepEqual(outcome.initSignals, [], 'group 1 (init of the namespace) was signalled');
      assert.equal(outcome.parentAlive, true, 'the parent\'s group was signalled');
      assert.deepEqual(outcome.parentSignals, []);
      assert.deepEqual(outcome.exit, { code: 0, signal: null }, 'its own group was signalled, or it failed');
    },
  );

  scenario(
    SUPERVISORS,
    'difference: a stranger at a reused group number (seed: SIGTERMed by number; leash: the recorded leader is gone, never signalled)',
    { skip: canUnshare ? false : 'needs root and unshare --pid' },
    async (impl, { mark, dir }) => {
      const outcome = await inNamespace(mark, dir, 'stranger', impl);
      assert.equal(outcome.reused, true, 'the stranger did not take the number');
      assert.equal(outcome.controlAlive, false, 'the teardown did not run (the control group lives)');
      assert.deepEqual(outcome.exit, { code: 0, signal: null });
      if (impl.name === 'seed') {
        assert.equal(outcome.strangerAlive, false, 'the seed spared the stranger');
        assert.deepEqual(outcome.strangerSignals, ['TERM']);
      } else {
        assert.equal(outcome.strangerAlive, true, 'leash signalled a stranger');
        assert.deepEqual(outcome.strangerSignals, []);
      }
    },
  );
});

/** Runs ns-supervisor.mjs PLAN as pid 1 of a private pid namespace, owning this implementation's supervisor. */
async function inNamespace(mark: string, dir: string, plan: string, impl: SupervisorImplementation): Promise<Record<string, unknown>> {
  const child = spawn(
    'unshare',
    ['--pid', '--fork', '--mount-proc', 'setsid', process.execPath, join(FIXTURES, 'conformance', 'ns-supervisor.mjs'), plan, logIn(dir), MEMBER, '--', ...impl.argv(-1).map((word) => (word === '-1' ? 'PARENT' : word))],
    { stdio: ['ignore', 'pipe', 'pipe'], env: markedEnv(mark, impl.env) },
  );
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (out += text));
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (err += text));
  await exitOf(child, 40_000);
  const line = out.split('\n').find(Boolean);
  assert.ok(line, `no outcome from the namespace; stderr: ${err}`);
  const outcome = JSON.parse(line) as Record<string, unknown>;
  assert.equal(outcome.error, undefined, `${String(outcome.error)}; stderr: ${err}`);
  return outcome;
}
