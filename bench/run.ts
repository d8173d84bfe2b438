// Benchmark of `leash run`: a 200-process tree under supervision with ~500 unrelated processes
// on the machine. Measures leash's CPU over 10 s of idle against a reference design (a loop that
// scans all of /proc every 100 ms), the time from the runner's exit to an empty tree, and the
// time from the parent's SIGKILL to an empty tree with --die-with-parent, the teardown against a
// plain killpg floor measured alongside (and a second floor whose sleepers were first handed to
// an idle C subreaper, as leash's are: the kernel's part), and the memory of leash run plus its guard.
// Run: npm run build && node dist/bench/run.js   (not part of npm test)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readChildren, readCommandLine, readProcStat, scanAllStats } from '../src/sys/procfs.js';
import { isProcessAlive, signalGroup } from '../src/sys/processes.js';
import { readProcessMemory } from '../src/sys/process-memory.js';
import { walkDescendants } from '../src/sys/tree.js';
import { waitUntil } from '../src/sys/wait.js';
import { endStarted } from './lib/end-started.js';

const CLI = fileURLToPath(new URL('../../bin/leash.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../bench/fixtures/', import.meta.url));
const TREE_SIZE = 200;
const BYSTANDERS = 500;
const IDLE_MS = 10_000;
const ROUNDS = 7;
const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux

// The runner plus 199 sleepers that honour SIGTERM.
const TREE = `i=1; while [ $i -lt ${TREE_SIZE} ]; do sleep 600 & i=$((i+1)); done; wait`;
const SMALL_TREE = 'sleep 600 & sleep 600 & wait';
const env = { ...process.env, LEASH_GRACE_SECONDS: '10', LEASH_STATE_PATH: '' };

/** User plus system CPU of a process so far. */
function cpuMs(pid: number): number {
  const stat = readProcStat(pid);
  return stat ? stat.cpuTicks * TICK_MS : NaN;
}

async function treeBelow(pid: number, size: number): Promise<number[]> {
  const ok = await waitUntil(() => walkDescendants(pid).size >= size, 20_000);
  if (!ok) throw new Error(`tree below ${pid} never reached ${size}`);
  return [...walkDescendants(pid).keys()];
}

/** A guard of `leash run`: the death supervisor, or, contained in a cgroup, the leash-guard shell. */
function isGuard(pid: number): boolean {
  const command = readCommandLine(pid) ?? [];
  return command.includes('--owner-token') || command.includes('leash-guard');
}

/** The runner of a `leash run`: its child that is not its guard. */
function runnerOf(leashPid: number): number {
  return (readChildren(leashPid) ?? []).find((pid) => !isGuard(pid)) as number;
}

function guardOf(leashPid: number): number | undefined {
  return (readChildren(leashPid) ?? []).find(isGuard);
}

/** The command's tree among `pids`: neither the guard nor its watchdog (its one child), which end after leash. */
function withoutGuard(leashPid: number, pids: number[]): number[] {
  const guard = guardOf(leashPid);
  return pids.filter((pid) => pid !== guard && (guard === undefined || readProcStat(pid)?.ppid !== guard));
}

/** When, after t0, the detector saw things happen (ms); undefined where it did not see them. */
interface DeathTimes {
  /** The first listed process seen dead: roughly when the first signal landed. */
  first?: number;
  /** The last one: the tree is empty. */
  last?: number;
  /** The runner's /proc entry gone: leash run (libuv) has reaped it, so leash has seen its exit. */
  runnerSeen?: number;
}

/**
 * Waits until every listed process is dead (zombies count), checking only those still alive,
 * with no back-off: the same detector times leash and the killpg floor. With `runner`, also
 * notes when that (killed) process stops being a zombie: its parent has reaped it.
 */
async function allDead(
  identities: Array<{ pid: number; start: number | undefined }>,
  budgetMs: number,
  t0 = performance.now(),
  runner?: number,
): Promise<DeathTimes | undefined> {
  let left = identities;
  const times: DeathTimes = {};
  const deadline = performance.now() + budgetMs;
  for (;;) {
    if (runner !== undefined && times.runnerSeen === undefined && readProcStat(runner) === undefined) {
      times.runnerSeen = performance.now() - t0;
    }
    if (left.length === 0 && (runner === undefined || times.runnerSeen !== undefined)) return times;
    if (performance.now() > deadline) return undefined;
    const before = left.length;
    left = left.filter(({ pid, start }) => isProcessAlive(pid, start));
    if (left.length < before) times.first ??= performance.now() - t0;
    if (left.length === 0) times.last ??= performance.now() - t0;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** bench/fixtures/idle-subreaper.c, compiled now; undefined (row left out) without a C compiler. */
function compileIdleSubreaper(): string | undefined {
  const out = join(mkdtempSync(join(tmpdir(), 'leash-bench-run-')), 'idle-subreaper');
  const result = spawnSync('cc', ['-O2', '-o', out, join(FIXTURES, 'idle-subreaper.c')], { encoding: 'utf8' });
  if (result.status !== 0) {
    console.log(`(no C compiler: the idle-subreaper floor is left out) ${result.error?.message ?? result.stderr}`);
    return undefined;
  }
  return out;
}

/**
 * The kernel's part of leash's teardown, without leash: the sleepers' parent (sh) is SIGKILLed
 * under a subreaper that does nothing, so its 199 children are handed to that subreaper, as they
 * are to leash; once sh has exited, one killpg. Returns the time from the SIGKILL to sh's exit
 * (the reparenting done) and from the killpg to all dead. With `wake`, the subreaper is woken by
 * each death (an empty SIGCHLD handler), as leash is.
 */
async function subreaperFloor(binary: string, wake: boolean, started: ChildProcess[], groups: number[]): Promise<{ exitMs: number; killpgMs: number }> {
  const subreaper = spawn(binary, [...(wake ? ['--wake'] : []), 'sh', '-c', TREE], { stdio: ['ignore', 'pipe', 'ignore'] });
  started.push(subreaper);
  const sh = await new Promise<number>((resolve, reject) => {
    subreaper.stdout?.once('data', (data: Buffer) => resolve(Number(String(data).trim())));
    subreaper.once('exit', () => reject(new Error('idle subreaper exited early')));
  });
  groups.push(sh);
  const members = identitiesOf((await treeBelow(sh, TREE_SIZE - 1)).filter((pid) => pid !== sh));
  const t0 = performance.now();
  process.kill(sh, 'SIGKILL');
  // The subreaper never reaps: sh stays a zombie once its exit (and the reparenting) is done.
  if (!(await waitUntil(() => readProcStat(sh)?.state === 'Z', 10_000))) throw new Error('sh outlived SIGKILL');
  const t1 = performance.now();
  signalGroup(sh, 'SIGTERM');
  const times = await allDead(members, 20_000, t1);
  if (!times) throw new Error('killpg left processes under the idle subreaper');
  subreaper.kill('SIGKILL');
  return { exitMs: t1 - t0, killpgMs: times.last ?? 0 };
}

function identitiesOf(pids: number[]) {
  return pids.map((pid) => ({ pid, start: readProcStat(pid)?.startTime }));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

const REFERENCE_LOOP = `
const { readdirSync, readFileSync } = require('fs');
setInterval(() => {
  const parents = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const text = readFileSync('/proc/' + name + '/stat', 'latin1');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(name), Number(f[1]));
    } catch {}
  }
  const family = new Set([${'${ROOT}'}]);
  let grew = true;
  while (grew) { grew = false; for (const [pid, ppid] of parents) if (!family.has(pid) && family.has(ppid)) { family.add(pid); grew = true; } }
}, 100);`;

async function main(): Promise<void> {
  const started: ChildProcess[] = [];
  const floorGroups: number[] = [];
  const results: Record<string, unknown> = { tree: TREE_SIZE, bystanders: BYSTANDERS, idle_ms: IDLE_MS };
  try {
    for (let i = 0; i < BYSTANDERS; i += 1) started.push(spawn('sleep', ['600'], { stdio: 'ignore' }));
    const onMachine = scanAllStats().length;

    // 1. Idle CPU: leash against the reference poller, side by side.
    const leash = spawn(process.execPath, [CLI, 'run', '--', 'sh', '-c', TREE], { stdio: ['ignore', 'ignore', 'ignore'], env });
    started.push(leash);
    await treeBelow(leash.pid as number, TREE_SIZE);
    // A small tree too (a server and two helpers): its quiet sweep comes every second.
    const small = spawn(process.execPath, [CLI, 'run', '--', 'sh', '-c', SMALL_TREE], { stdio: ['ignore', 'ignore', 'ignore'], env });
    started.push(small);
    await treeBelow(small.pid as number, 3);
    const reference = spawn(process.execPath, ['-e', REFERENCE_LOOP.replace('${ROOT}', String(leash.pid))], { stdio: 'ignore' });
    started.push(reference);
    // What any Node process costs, idle: the floor under leash run and under its guard.
    const bareNode = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
    started.push(bareNode);
    // Past the 200 ms sweeps of a young tree: the quiet pace is what is measured.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const before = { leash: cpuMs(leash.pid as number), small: cpuMs(small.pid as number), reference: cpuMs(reference.pid as number) };
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idle = {
      leash: cpuMs(leash.pid as number) - before.leash,
      small_tree: cpuMs(small.pid as number) - before.small,
      reference: cpuMs(reference.pid as number) - before.reference,
    };
    small.kill('SIGTERM');
    reference.kill('SIGKILL');
    results.processes_on_machine = onMachine;
    results.idle_cpu_ms = idle;

    // What one wrapped command costs in memory: leash run and its guard, after the idle period.
    const guard = guardOf(leash.pid as number);
    const leashMemory = readProcessMemory(leash.pid as number);
    const guardMemory = guard === undefined ? undefined : readProcessMemory(guard);
    const bareMemory = readProcessMemory(bareNode.pid as number);
    bareNode.kill('SIGKILL');
    const memory = {
      bare_node_private_kb: bareMemory?.privateKb,
      leash_private_kb: leashMemory?.privateKb,
      leash_pss_kb: leashMemory?.pssKb,
      leash_rss_kb: leashMemory?.rssKb,
      guard_private_kb: guardMemory?.privateKb,
      guard_pss_kb: guardMemory?.pssKb,
      guard_rss_kb: guardMemory?.rssKb,
      total_private_kb: (leashMemory?.privateKb ?? NaN) + (guardMemory?.privateKb ?? NaN),
      total_pss_kb: (leashMemory?.pssKb ?? NaN) + (guardMemory?.pssKb ?? NaN),
    };
    results.memory = memory;

    // One reference scan, timed: what a 100 ms poller pays per tick, and its mean detection delay.
    const scans: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      const t0 = performance.now();
      scanAllStats();
      scans.push(performance.now() - t0);
    }
    const walks: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      const t0 = performance.now();
      walkDescendants(leash.pid as number);
      walks.push(performance.now() - t0);
    }
    results.full_scan_ms = median(scans);
    results.tree_walk_ms = median(walks);

    // 2. Runner exit to empty tree (descendants honour SIGTERM), and the floor: a plain killpg
    // of as many sleeping processes, timed by the same detector, alternating in the same run.
    const exitToEmpty: number[] = [];
    const exitToLeashExit: number[] = [];
    const runnerSeen: number[] = [];
    const firstDeath: number[] = [];
    const floor: number[] = [];
    const subreaperExit: number[] = [];
    const subreaperFloorMs: number[] = [];
    const wokenSubreaperFloorMs: number[] = [];
    const idleSubreaper = compileIdleSubreaper();
    let current: ChildProcess = leash;
    for (let round = 0; round < ROUNDS; round += 1) {
      if (round > 0) {
        current = spawn(process.execPath, [CLI, 'run', '--', 'sh', '-c', TREE], { stdio: 'ignore', env });
        started.push(current);
        await treeBelow(current.pid as number, TREE_SIZE);
      }
      // An established tree, as a server's is when it is closed: leash's last walk has seen it all.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const runner = runnerOf(current.pid as number);
      // The runner is timed apart: its death is the cause, the rest of the tree the effect.
      const tree = identitiesOf(withoutGuard(current.pid as number, [...walkDescendants(current.pid as number).keys()]).filter((pid) => pid !== runner));
      const gone = new Promise<number>((resolve) => current.once('exit', () => resolve(performance.now())));
      const t0 = performance.now();
      process.kill(runner, 'SIGKILL');
      const times = await allDead(tree, 20_000, t0, runner);
      if (!times) throw new Error('tree survived its runner');
      exitToEmpty.push(times.last ?? 0);
      runnerSeen.push(times.runnerSeen ?? NaN);
      firstDeath.push(times.first ?? NaN);
      exitToLeashExit.push((await gone) - t0);

      // The floor: the same number of sleepers in one group, one killpg.
      // detached-spawn: ok — the floor's group is ended by this bench, by its pid, right below.
      const group = spawn('sh', ['-c', TREE], { stdio: 'ignore', detached: true });
      started.push(group);
      floorGroups.push(group.pid as number);
      const members = identitiesOf([group.pid as number, ...(await treeBelow(group.pid as number, TREE_SIZE - 1))]);
      const t1 = performance.now();
      signalGroup(group.pid as number, 'SIGTERM');
      const floorTimes = await allDead(members, 20_000, t1);
      if (!floorTimes) throw new Error('killpg left processes');
      floor.push(floorTimes.last ?? 0);

      // The same killpg after the sleepers were handed to an idle subreaper: the kernel's part.
      if (idleSubreaper) {
        const sub = await subreaperFloor(idleSubreaper, false, started, floorGroups);
        subreaperExit.push(sub.exitMs);
        subreaperFloorMs.push(sub.killpgMs);
        wokenSubreaperFloorMs.push((await subreaperFloor(idleSubreaper, true, started, floorGroups)).killpgMs);
      }
    }
    results.subreaper_parent_kill_to_exit_ms = subreaperExit;
    results.subreaper_killpg_floor_ms = subreaperFloorMs;
    results.woken_subreaper_killpg_floor_ms = wokenSubreaperFloorMs;
    results.runner_exit_to_empty_ms = exitToEmpty;
    results.runner_exit_seen_by_leash_ms = runnerSeen;
    results.runner_exit_to_first_death_ms = firstDeath;
    results.runner_exit_to_leash_exit_ms = exitToLeashExit;
    results.killpg_floor_ms = floor;

    // 3. Parent SIGKILL to empty tree with --die-with-parent.
    const parentDeath: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const parent = spawn('sh', ['-c', `"${process.execPath}" "${CLI}" run --die-with-parent -- sh -c '${TREE}'; :`], { stdio: 'ignore', env });
      started.push(parent);
      const leashPid = await (async () => {
        await waitUntil(() => (readChildren(parent.pid as number)?.length ?? 0) > 0, 10_000);
        return readChildren(parent.pid as number)?.[0] as number;
      })();
      const tree = withoutGuard(leashPid, await treeBelow(leashPid, TREE_SIZE));
      const identities = [leashPid, ...tree].map((pid) => ({ pid, start: readProcStat(pid)?.startTime }));
      const t0 = performance.now();
      parent.kill('SIGKILL');
      const ok = await waitUntil(() => identities.every(({ pid, start }) => !isProcessAlive(pid, start)), 20_000);
      if (!ok) throw new Error('tree survived the parent');
      parentDeath.push(performance.now() - t0);
    }
    results.parent_kill_to_empty_ms = parentDeath;

    const rows: Array<[string, string]> = [
      ['processes on the machine', String(onMachine)],
      [`leash CPU over ${IDLE_MS / 1000} s idle`, `${idle.leash.toFixed(0)} ms`],
      [`leash CPU over ${IDLE_MS / 1000} s idle, 3-process tree`, `${idle.small_tree.toFixed(0)} ms`],
      ['reference (100 ms /proc poll) CPU, same 10 s', `${idle.reference.toFixed(0)} ms`],
      ['full /proc scan (one poll tick)', `${median(scans).toFixed(2)} ms`],
      ['leash tree walk (200 processes)', `${median(walks).toFixed(2)} ms`],
      ['runner SIGKILL -> leash has reaped it (median)', `${median(runnerSeen).toFixed(1)} ms`],
      ['runner SIGKILL -> first process of the tree dead', `${median(firstDeath).toFixed(1)} ms`],
      ['runner SIGKILL -> empty tree (median)', `${median(exitToEmpty).toFixed(1)} ms`],
      ['runner exit -> leash exits (median)', `${median(exitToLeashExit).toFixed(1)} ms`],
      ['reference: killpg of 200 sleepers -> all dead', `${median(floor).toFixed(1)} ms`],
      ...(subreaperFloorMs.length === 0 ? [] : [
        ['reference: same, sleepers first handed to an idle subreaper', `${median(subreaperFloorMs).toFixed(1)} ms`],
        ['reference: same, the subreaper woken by each death', `${median(wokenSubreaperFloorMs).toFixed(1)} ms`],
        ['reference: SIGKILL of their parent -> its exit done', `${median(subreaperExit).toFixed(1)} ms`],
        ['leash teardown less its wake-up / subreaper floor', `${(median(exitToEmpty.map((ms, i) => ms - (runnerSeen[i] as number))) / median(subreaperFloorMs)).toFixed(2)}x`],
      ] as Array<[string, string]>),
      ['leash teardown less its wake-up / floor (medians)', `${(median(exitToEmpty.map((ms, i) => ms - (runnerSeen[i] as number))) / median(floor)).toFixed(2)}x`],
      ['leash teardown / killpg floor (medians)', `${(median(exitToEmpty) / median(floor)).toFixed(2)}x`],
      ['same, median of the paired rounds', `${median(exitToEmpty.map((ms, i) => ms / (floor[i] as number))).toFixed(2)}x`],
      ['reference detection delay alone (mean)', `${(50 + median(scans)).toFixed(1)} ms + signalling`],
      ['parent SIGKILL -> empty tree (median)', `${median(parentDeath).toFixed(1)} ms`],
    ];
    const kb = (value: number | undefined) => (value === undefined ? '?' : `${(value / 1024).toFixed(1)} MB`);
    rows.push(
      ['memory: leash run private / PSS', `${kb(memory.leash_private_kb)} / ${kb(memory.leash_pss_kb)}`],
      ['memory: its guard private / PSS', `${kb(memory.guard_private_kb)} / ${kb(memory.guard_pss_kb)}`],
      ['memory: one wrapped server, private total', kb(memory.total_private_kb)],
      ['reference: an idle bare node process, private', kb(memory.bare_node_private_kb)],
      // The design docs/run.md sketches: one guard per client, shared by its N leash runs.
      ...[5, 20].map((n): [string, string] => [
        `memory: one server with a guard shared by ${n}`,
        kb((memory.leash_private_kb ?? NaN) + (memory.guard_private_kb ?? NaN) / n),
      ]),
    );
    console.log(`load average ${loadavg().map((value) => value.toFixed(2)).join(' ')} (at the end)`);
    for (const [label, value] of rows) console.log(`${label.padEnd(60)} ${value}`);
    results.loadavg_at_end = loadavg();
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(`${RESULTS}run.json`, JSON.stringify(results, null, 2) + '\n');
  } finally {
    await endStarted(started, floorGroups);
  }
}

await main();
