// `leash run` where there is no subreaper (not Linux, or no way to make the syscalls): the runner
// leads its own process group and session, and we supervise that group. What is lost: orphans
// go to init instead of to us, and a descendant that starts its own session or group escapes.
import { ChildProcess } from 'node:child_process';
import { liveMemberCountsInSlices, waitForGroupEmpty } from '../sys/group-exit.js';
import { groupLeaderIdentity, liveMemberCounts, signalGroup, signalProcess } from '../sys/processes.js';
import { hasProcfs } from '../sys/procfs.js';
import { proveLeader, proveMembers, recordGroupMembers, signalProven, unprovenGroupNotice, type ProcessIdentityMark } from '../sys/group-membership.js';
import { RUN_TOKEN_VARIABLE, type RunGuard } from './guard.js';
import { earlyStopRequest, forwardedSignals, stopSignals, treeSignalFor } from './signals.js';
import { signalIfSame, signalNumber } from '../sys/verified-signal.js';
import { signalThenContinue } from './containment/seam.js';
import { runnerEnd } from './runner.js';
import { startRunner } from './supervisor.js';
import { singleRunnerState, StatePublisher, type Phase } from './state.js';

export interface GroupFallbackOptions {
  command: string;
  args: string[];
  graceMs: number;
  statePath?: string;
  log: (line: string) => void;
  guard?: RunGuard;
  /** Called once when the stop begins (the run's containers: containers.ts). */
  onStop?: () => void;
}

/** How often the state document's member count is refreshed (a scan of /proc each time). */
const STATE_COUNT_MS = 5000;

export async function runWithProcessGroup(options: GroupFallbackOptions): Promise<number> {
  // A stop asked for before this point (the shield recorded it): the command is not started.
  const early = earlyStopRequest();
  if (early) {
    options.log(`${early} before the command started; not starting it`);
    return 128 + signalNumber(early);
  }
  const guard = options.guard;
  guard?.start();
  const env = guard ? { ...process.env, [RUN_TOKEN_VARIABLE]: guard.token } : process.env;
  const started = await startRunner(options.command, options.args, env);
  if (!(started instanceof ChildProcess)) {
    guard?.release();
    options.log(started.message);
    return started.code;
  }
  const pgid = started.pid ?? 0;
  const leaderStart = groupLeaderIdentity(pgid);
  guard?.track(new Map([[pgid, leaderStart]]));
  // Once the runner (the leader) is gone, the group's number proves nothing: its members are
  // recorded then, and only they, the token carriers and their descendants are signalled.
  const recorded: ProcessIdentityMark[] = [];
  const tokenEntry = guard ? `${RUN_TOKEN_VARIABLE}=${guard.token}` : undefined;
  let unprovenReported = false;
  /** 'group' while the leader is the runner; else the proven members (empty: none is ours). */
  const ours = (): 'group' | ProcessIdentityMark[] => {
    const identity = proveLeader(pgid, leaderStart, (group) => signalGroup(group, 0));
    if (identity === 'leader' || identity === 'number') return 'group';
    if (identity !== 'leaderless') return [];
    const proof = proveMembers(new Set([pgid]), { recorded: () => recorded, tokenEntry }).get(pgid) ?? { proven: [], unproven: 0 };
    if (proof.proven.length === 0 && proof.unproven > 0 && !unprovenReported) {
      unprovenReported = true;
      options.log(`warning: ${unprovenGroupNotice(pgid, proof.unproven)}`);
    }
    return proof.proven;
  };
  const signalTree = (signal: NodeJS.Signals) => {
    const target = ours();
    if (target === 'group') signalThenContinue(signal, (each) => signalGroup(pgid, each));
    else recorded.push(...signalProven(target, signal, (pid, startTime, stop) => signalThenContinue(stop, (each) => signalIfSame(pid, startTime, each))));
  };
  let phase: Phase = 'running';
  let exitCode: number | null = null;
  let requested: NodeJS.Signals | undefined;
  let escalated = false;
  let members = 1;
  const state = new StatePublisher(options.statePath, () => singleRunnerState({
    members, escalated, phase, exitCode, terminationSignal: requested ? signalNumber(requested) : null,
  }), (message) => options.log(`warning: ${message}`));
  const enter = (next: Phase) => {
    phase = next;
    options.log(`phase=${next} active=${members} escalated=${escalated}` +
      (exitCode === null ? '' : ` runner_exit_code=${exitCode}`));
    state.publish(true);
  };
  enter('running');

  let graceTimer: NodeJS.Timeout | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (phase !== 'running') return;
    enter('stopping');
    options.onStop?.();
    signalTree(treeSignalFor(signal));
    graceTimer = setTimeout(() => {
      escalated = true;
      enter('killing');
      signalTree('SIGKILL');
    }, options.graceMs);
  };
  const forwarders = forwardedSignals().map((signal) => {
    const handler = () => {
      if (exitCode === null) signalProcess(pgid, signal);
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  const handlers = stopSignals().map((signal) => {
    const handler = () => {
      requested ??= signal;
      if (phase === 'running') stop(signal);
      else signalTree(treeSignalFor(signal));
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  const runnerExited = new Promise<void>((resolve) => started.once('exit', (code, signal) => {
    exitCode = runnerEnd(started, code, signal);
    // Members left behind hold the number now: recorded while they do.
    if (hasProcfs() && signalGroup(pgid, 0) !== 'gone') recorded.push(...(recordGroupMembers(new Set([pgid])).get(pgid) ?? []));
    resolve();
  }));
  // A stop that arrived while the runner was starting, before these handlers: honoured now.
  const during = earlyStopRequest();
  if (during) {
    requested ??= during;
    stop(during);
  }

  // While the runner lives nothing is polled: its exit is an event. Only the state document's
  // member count needs the group's members, and only a scan of /proc can count them: one sliced
  // scan every STATE_COUNT_MS, and only when a document is kept.
  let counting = false;
  const countMembers = () => {
    if (counting) return;
    counting = true;
    void liveMemberCountsInSlices(new Set([pgid])).then((counts) => {
      counting = false;
      if (exitCode === null) members = counts.get(pgid) ?? members;
      state.publish();
    });
  };
  const counter = options.statePath !== undefined && hasProcfs() ? setInterval(countMembers, STATE_COUNT_MS) : undefined;
  await runnerExited;
  if (counter) clearInterval(counter);

  // Then the group must empty: what the runner left behind is stopped, and waited for with
  // waitForGroupEmpty (a probe and a stat read per check; a sliced scan at most every 50 ms once
  // the leader, the runner, is gone), never a full scan per check.
  members = liveMemberCounts([pgid]).get(pgid) ?? 0;
  if (members > 0) stop('SIGTERM');
  // Waited for while something in it is provably ours (a stranger that took the number is not).
  const oursLeft = () => {
    const target = ours();
    return target === 'group' || target.length > 0;
  };
  while (oursLeft() && !(await waitForGroupEmpty(pgid, STATE_COUNT_MS))) {
    members = liveMemberCounts([pgid]).get(pgid) ?? 0;
    state.publish();
  }
  members = 0;
  if (graceTimer) clearTimeout(graceTimer);
  for (const [signal, handler] of [...handlers, ...forwarders]) process.removeListener(signal, handler);
  guard?.release();
  enter('exited');
  state.close();
  return exitCode ?? 1;
}
