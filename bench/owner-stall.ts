// Owner-library benchmark: how long leash holds the owner's thread.
//  1. The synchronous cost of the spawnOwned() call against spawn() and spawn({ detached: true })
//     (a child leading its own group, which spawnOwned must give: libuv's setsid path costs more
//     than the plain one), interleaved call by call, with 0, 100 and 1,000 owned groups
//     (target: <= 10 % over spawn, flat in the group count). At 0 a setsid escapee keeps the
//     supervisor running (without one, the call would start a supervisor: the first-spawnOwned
//     row of bench/supervisor.ts).
//     spawnOwned writes its registrations when the turn's synchronous code ends (one write for a
//     burst): a second row times the call plus that write (up to a process.nextTick queued after
//     the call), against spawn({ detached: true }) timed the same way.
//  2. The longest event-loop stall (the largest gap between runs of a 1 ms interval timer) with
//     1,000 owned groups and 1,000 other processes on the machine (children of another process),
//     while 200 terminateOwned calls run concurrently, through a 5 s prune tick, then while the
//     rest are terminated and the owner settles with a setsid escapee alive (the sliced environ
//     scans). Target: < 20 ms. Two reference rows in the same run: the owner idle for as long
//     (the machine's own noise), and the same 200 groups as plain detached children ended with
//     killpg and their 'exit' events (what Node itself costs: libuv reaps with one waitpid per
//     child per SIGCHLD).
// Usage: node dist/bench/owner-stall.js [--owned N] [--others N] [--concurrent N] [--rounds N]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ownedProcessGroups, spawnOwned, supervisorPid, terminateOwned } from '../src/index.js';
import { SupervisorLink } from '../src/owner/supervisor-link.js';
import { listPids, readProcStat } from '../src/sys/procfs.js';
import { randomHex } from '../src/sys/random.js';
import { signalGroup, signalProcess } from '../src/sys/processes.js';
import { waitUntil } from '../src/sys/wait.js';
import { worstStall } from './lib/event-loop-stall.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
const OWNED = option('--owned', 1000);
const OTHERS = option('--others', 1000);
const CONCURRENT = option('--concurrent', 200);
const ROUNDS = option('--rounds', 200);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const exitOf = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A supervisor of the bench's own, fed the parts of spawnOwned's work one by one so that each can
 * be timed: the same process, the same protocol, a line per new group as the owner writes it.
 */
const partsLink = new SupervisorLink({ ownerToken: randomHex(12), graceMs: 0, replay: () => [], needed: () => true });

/** Median synchronous time of spawn() and spawnOwned(), alternated call by call, and of spawnOwned's parts. */
type Cost = {
  spawnMs: number;
  detachedMs: number;
  ownedMs: number;
  detachedTurnMs: number;
  ownedTurnMs: number;
  /** spawnOwned's parts, each timed alone after a spawn({ detached: true }). */
  envCopyMs: number;
  statMs: number;
  writeMs: number;
};
const ms = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;
async function callCost(rounds: number): Promise<Cost> {
  const ways = {
    spawnMs: () => spawn('true', [], { stdio: 'ignore' }),
    // detached-spawn: ok — the reference for spawnOwned's own group; `true` exits at once.
    detachedMs: () => spawn('true', [], { stdio: 'ignore', detached: true }),
    ownedMs: () => spawnOwned('true', [], { stdio: 'ignore' }),
  };
  const times: Record<keyof Cost, number[]> = {
    spawnMs: [],
    detachedMs: [],
    ownedMs: [],
    detachedTurnMs: [],
    ownedTurnMs: [],
    envCopyMs: [],
    statMs: [],
    writeMs: [],
  };
  const names = Object.keys(ways) as Array<keyof typeof ways>;
  const endOfTurn = () => new Promise<void>((resolve) => process.nextTick(resolve));
  for (let i = 0; i < rounds; i += 1) {
    // Rotate the order so that no way always follows another.
    for (let k = 0; k < names.length; k += 1) {
      const name = names[(i + k) % names.length]!;
      const began = process.hrtime.bigint();
      const child = ways[name]();
      times[name].push(Number(process.hrtime.bigint() - began) / 1e6);
      await endOfTurn();
      if (name === 'detachedMs') times.detachedTurnMs.push(Number(process.hrtime.bigint() - began) / 1e6);
      if (name === 'ownedMs') times.ownedTurnMs.push(Number(process.hrtime.bigint() - began) / 1e6);
      if (name === 'detachedMs' && child.pid !== undefined) {
        let at = process.hrtime.bigint();
        const env = { ...process.env, LEASH_BENCH_TOKEN: 'x' };
        times.envCopyMs.push(ms(at));
        at = process.hrtime.bigint();
        const startTime = readProcStat(child.pid)?.startTime;
        times.statMs.push(ms(at));
        at = process.hrtime.bigint();
        partsLink.sendAll([{ verb: 'register', pgid: child.pid, startTime }]);
        times.writeMs.push(ms(at));
        partsLink.notify({ verb: 'unregister', pgid: child.pid });
        void env;
      }
      await exitOf(child);
    }
  }
  return {
    spawnMs: median(times.spawnMs),
    detachedMs: median(times.detachedMs),
    ownedMs: median(times.ownedMs),
    detachedTurnMs: median(times.detachedTurnMs),
    ownedTurnMs: median(times.ownedTurnMs),
    envCopyMs: median(times.envCopyMs),
    statMs: median(times.statMs),
    writeMs: median(times.writeMs),
  };
}


let others: ChildProcess | undefined;
const anchors: ChildProcess[] = [];
let escapee: number | undefined;
try {
  // A descendant that leaves its group: once its group is gone it keeps the supervisor with no
  // owned group at all (the 0-group rows below), and later, after the last group is gone, the
  // sliced environ scan on every prune tick.
  const leaver = spawnOwned('sh', ['-c', 'setsid sleep 1000 & echo $!'], { stdio: ['ignore', 'pipe', 'ignore'] });
  escapee = await new Promise<number>((resolve) => leaver.stdout!.once('data', (text: Buffer) => resolve(Number(String(text).trim()))));
  await exitOf(leaver);
  if (!(await waitUntil(() => ownedProcessGroups().length === 0 && supervisorPid() !== undefined, 10_000))) {
    throw new Error('the escapee did not keep the supervisor with no owned group');
  }

  // 1. spawnOwned's own cost, with the supervisor running, at 0, 100 and 1,000 owned groups.
  const costs: Array<{ owned: number } & Cost> = [];
  partsLink.ensure();
  await callCost(20); // warm-up
  for (const target of [0, 100, 1000].filter((n) => n <= OWNED)) {
    while (anchors.length < target) anchors.push(spawnOwned('sleep', ['1000'], { stdio: 'ignore' }));
    await sleep(500);
    costs.push({ owned: target, ...(await callCost(ROUNDS)) });
  }
  await partsLink.release();

  // 2. The stall, with OWNED owned groups and OTHERS unrelated processes.
  while (anchors.length < OWNED) anchors.push(spawnOwned('sleep', ['1000'], { stdio: 'ignore' }));
  // The bystanders are another process's children: libuv's reaping cost for our own children
  // is measured by the reference row, not mixed into every row.
  // detached-spawn: ok — the bench ends this group with killpg in the finally block.
  others = spawn('sh', ['-c', `i=0; while [ $i -lt ${OTHERS} ]; do sleep 1000 & i=$((i+1)); done; echo ready; wait`], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve) => others!.stdout!.once('data', () => resolve()));
  await sleep(1000);
  const processes = listPids().length;
  const idleMs = await worstStall(() => sleep(5500));

  // Reference: what the same number of plain detached groups cost Node itself to end.
  const plainGroups = Array.from({ length: CONCURRENT }, () =>
    // detached-spawn: ok — reference groups, ended with killpg just below.
    spawn('sleep', ['1000'], { stdio: 'ignore', detached: true }),
  );
  await sleep(1000);
  const referenceMs = await worstStall(async () => {
    for (const child of plainGroups) process.kill(-child.pid!, 'SIGTERM');
    await Promise.all(plainGroups.map(exitOf));
  });

  const batch = anchors.slice(0, CONCURRENT);
  const concurrentMs = await worstStall(async () => {
    const results = await Promise.all(batch.map((child) => terminateOwned(child, { graceMs: 1000 })));
    if (results.some((result) => !result.empty)) throw new Error('a group did not empty');
    await Promise.all(batch.map(exitOf));
  });
  const pruneTickMs = await worstStall(() => sleep(5500));
  const rest = anchors.slice(CONCURRENT);
  const settleMs = await worstStall(async () => {
    for (let i = 0; i < rest.length; i += CONCURRENT) {
      await Promise.all(rest.slice(i, i + CONCURRENT).map((child) => terminateOwned(child, { graceMs: 1000 })));
    }
    // The last group is gone: the owner scans for escapees (sliced), keeps the supervisor, and
    // scans again on the next prune tick.
    await sleep(5500);
  });
  const supervisorKept = supervisorPid() !== undefined && ownedProcessGroups().length === 0;

  const rows: Array<[string, string, string]> = [];
  for (const cost of costs) {
    const percent = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(1)} %`;
    rows.push([
      `spawn() / spawn(detached) / spawnOwned() call, ${cost.owned} owned (median of ${ROUNDS})`,
      `${cost.spawnMs.toFixed(2)} / ${cost.detachedMs.toFixed(2)} / ${cost.ownedMs.toFixed(2)} ms`,
      '',
    ]);
    rows.push([`spawnOwned() call over spawn({ detached: true }), ${cost.owned} owned`, percent((cost.ownedMs / cost.detachedMs - 1) * 100), '<= 10 %']);
    rows.push([`spawnOwned() call over plain spawn(), ${cost.owned} owned`, percent((cost.ownedMs / cost.spawnMs - 1) * 100), '<= 10 %']);
    rows.push([
      `the same with the turn's end (the deferred write): spawn(detached) / spawnOwned(), ${cost.owned} owned`,
      `${cost.detachedTurnMs.toFixed(2)} / ${cost.ownedTurnMs.toFixed(2)} ms (${percent((cost.ownedTurnMs / cost.detachedTurnMs - 1) * 100)})`,
      '',
    ]);
    rows.push([
      `its parts, timed alone: environment copy / leader's stat read / line to a supervisor, ${cost.owned} owned`,
      `${cost.envCopyMs.toFixed(3)} / ${cost.statMs.toFixed(3)} / ${cost.writeMs.toFixed(3)} ms`,
      '',
    ]);
  }
  rows.push([`longest stall: idle owner, 5.5 s (reference: the machine's noise)`, `${idleMs.toFixed(1)} ms`, '']);
  rows.push([`longest stall: ${CONCURRENT} plain detached groups, killpg + exit events (reference)`, `${referenceMs.toFixed(1)} ms`, '']);
  rows.push([`longest stall: ${CONCURRENT} concurrent terminateOwned (${OWNED} owned, ${processes} processes)`, `${concurrentMs.toFixed(1)} ms`, '< 20 ms']);
  rows.push([`longest stall: a prune tick (${OWNED - CONCURRENT} owned)`, `${pruneTickMs.toFixed(1)} ms`, '< 20 ms']);
  rows.push([`longest stall: terminating the rest, settling with an escapee, a prune tick`, `${settleMs.toFixed(1)} ms`, '< 20 ms']);
  rows.push(['supervisor kept for the escapee after the last group', String(supervisorKept), 'true']);
  const width = Math.max(...rows.map((row) => row[0].length));
  console.log(`load average ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);
  console.log(`${'metric'.padEnd(width)}  ${'value'.padStart(20)}  target`);
  for (const [name, value, target] of rows) console.log(`${name.padEnd(width)}  ${value.padStart(20)}  ${target}`);
  mkdirSync(RESULTS, { recursive: true });
  const out = `${RESULTS}owner-stall.json`;
  writeFileSync(
    out,
    JSON.stringify(
      { when: new Date().toISOString(), node: process.version, loadavg: loadavg(), owned: OWNED, others: OTHERS, concurrent: CONCURRENT, processes, costs, stallMs: { idle: idleMs, reference: referenceMs, concurrent: concurrentMs, pruneTick: pruneTickMs, settle: settleMs }, supervisorKept },
      null,
      2,
    ) + '\n',
  );
  console.log(`wrote ${out}`);
} finally {
  await partsLink.release();
  if (others?.pid !== undefined) signalGroup(others.pid, 'SIGKILL');
  if (escapee !== undefined) signalProcess(escapee, 'SIGKILL');
  await Promise.all(anchors.map((child) => terminateOwned(child, { graceMs: 0 })));
  if (others) await waitUntil(() => others!.exitCode !== null || others!.signalCode !== null, 10_000);
}
