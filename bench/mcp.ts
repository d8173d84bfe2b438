// What leash costs and buys per MCP server, in both modes:
//   owned  the client uses leash/mcp's OwnedStdioClientTransport (one death supervisor per client);
//   run    the client is unchanged (the SDK's StdioClientTransport) and the server command is
//          prefixed with `leash run --die-with-parent --` (one leash process per server);
//   plain  the SDK alone, the baseline.
//   floor  owned, but with the least a supervisor that waits for EOF can do in place of leash's
//          (bench/lib/floor-supervisor.ts: read until EOF, killpg): same client, same tree.
// Measured: time to a connected Client, memory of the processes leash adds, and time from the
// client's SIGKILL to an empty server tree (the server kept busy, so stdin's end does not stop it).
// Run: npm run build && node dist/bench/mcp.js [--trials N]   (not part of npm test)
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { supervisorPid } from '../src/index.js';
import { floorSupervisorEnv } from './lib/floor-supervisor.js';
import { OwnedStdioClientTransport } from '../src/mcp/index.js';
import { readProcessMemory, type ProcessMemory } from '../src/sys/process-memory.js';
import { isProcessAlive } from '../src/sys/processes.js';
import { CLI_ENTRY, JsonLines, REPO_ROOT, exited, killMarked, markedPids, newMark, startFixture } from '../test/helpers/processes.js';
import { CLIENT_FIXTURE, SERVER_ENTRY, wrappedServer } from '../test/mcp/chain.js';

type Mode = 'plain' | 'owned' | 'run';
/** Only the kill is measured with the floor supervisor. */
type KillMode = Mode | 'floor';

const trialsArg = process.argv.indexOf('--trials');
const TRIALS = trialsArg > 0 ? Math.max(1, Number(process.argv[trialsArg + 1]) || 7) : 7;
const KILL_BUDGET_MS = 15_000;
/** The baseline leaves its trees behind (5 busy minutes); a few seconds of waiting shows it. */
const PLAIN_KILL_BUDGET_MS = 3000;
const killTrials = (mode: KillMode) => (mode === 'plain' ? 2 : Math.min(TRIALS, 5));
const RUN_PREFIX = [CLI_ENTRY, 'run', '--die-with-parent', '--grace', '3', '--'];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Whether this build has a working `leash run` (it is built on another branch). */
function leashRunAvailable(): boolean {
  const probe = spawnSync(process.execPath, [CLI_ENTRY, 'run', '--die-with-parent', '--', process.execPath, '-e', ''], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return probe.status === 0;
}

function serverCommand(mode: Mode, chain: { command: string; args: string[] }) {
  return mode === 'run'
    ? { command: process.execPath, args: [...RUN_PREFIX, chain.command, ...chain.args] }
    : chain;
}

interface StartSample {
  /** transport.start(): spawn until the child runs (where leash does its per-server work). */
  spawnMs: number;
  connectMs: number;
  /** Memory of the processes leash added for this server (supervisor or leash run). */
  added: ProcessMemory | undefined;
}

/** One in-process client: spawn, connect (initialize round trip), sample memory, close. */
async function startOnce(mode: Mode, mark: string, sweep = true): Promise<StartSample> {
  // The server itself, no wrappers: start-up differences stay visible above the noise.
  const params = {
    ...serverCommand(mode, { command: process.execPath, args: [SERVER_ENTRY, 'stdio'] }),
    env: { LEASH_TEST_MARK: mark },
    stderr: 'ignore' as const,
  };
  const transport = mode === 'owned' ? new OwnedStdioClientTransport(params) : new StdioClientTransport(params);
  const client = new Client({ name: 'leash-bench', version: '0.0.0' });
  const startTransport = transport.start.bind(transport);
  let spawnMs = Number.NaN;
  transport.start = async () => {
    await startTransport();
    spawnMs = performance.now() - started;
  };
  const started = performance.now();
  await client.connect(transport);
  const connectMs = performance.now() - started;
  let added: ProcessMemory | undefined;
  if (mode === 'owned') {
    const supervisor = supervisorPid();
    added = supervisor ? readProcessMemory(supervisor) : undefined;
  } else if (mode === 'run' && transport.pid) {
    added = readProcessMemory(transport.pid);
  }
  await client.close();
  if (sweep) await killMarked(mark);
  return { spawnMs, connectMs, added };
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Milliseconds from the client's SIGKILL until its server tree was empty, and until all it started was gone. */
interface KillSample {
  /** The server's processes (`leash run` included: it stands in the server's place). */
  serverMs: number | undefined;
  /** Everything the client started, its death supervisor included (which exits after the tree). */
  allMs: number | undefined;
}

/** A client process (the test fixture) is SIGKILLed; how long until its server tree is empty? */
async function killOnce(mode: KillMode, mark: string): Promise<KillSample> {
  const chain = serverCommand(mode === 'floor' ? 'owned' : mode, wrappedServer());
  const owned = mode === 'owned' || mode === 'floor';
  const extraEnv = mode === 'floor' && 'env' in floor ? floor.env : {};
  const client = startFixture(CLIENT_FIXTURE, [owned ? 'owned' : 'plain', chain.command, ...chain.args], mark, { extraEnv });
  try {
    const line = await new JsonLines(client).next<{ client: number; supervisor: number | null }>(20_000);
    if (mode === 'floor' && !(line.supervisor && commandLineOf(line.supervisor).includes('floor_supervisor.py'))) {
      throw new Error(`bench/mcp: the floor's client runs no floor supervisor (supervisor ${line.supervisor})`);
    }
    // The supervisor is started with an environment of its own (no mark): named by the client.
    const server = markedPids(mark).filter((pid) => pid !== line.client && pid !== line.supervisor);
    const tree = line.supervisor ? [...server, line.supervisor] : server;
    const killedAt = performance.now();
    client.kill('SIGKILL');
    // A tight poll: the interval bounds the resolution of the measurement.
    const budgetMs = mode === 'plain' ? PLAIN_KILL_BUDGET_MS : KILL_BUDGET_MS;
    const sample: KillSample = { serverMs: undefined, allMs: undefined };
    while (performance.now() - killedAt < budgetMs) {
      if (sample.serverMs === undefined && server.every((pid) => !isProcessAlive(pid))) sample.serverMs = performance.now() - killedAt;
      if (tree.every((pid) => !isProcessAlive(pid))) {
        sample.allMs = performance.now() - killedAt;
        return sample;
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return sample;
  } finally {
    client.kill('SIGKILL');
    await exited(client).catch(() => undefined);
    await killMarked(mark);
  }
}

interface ModeResult {
  mode: string;
  spawnMsMedian: number | null;
  connectMsMedian: number | null;
  addedProcessesPerServer: string;
  addedRssKb: number | null;
  addedPssKb: number | null;
  addedPrivateKb: number | null;
  /** Until the server tree is empty (`leash run` counted in it; the supervisor not). */
  killToServerEmptyMsMedian: number | null;
  /** Until everything the client started is gone, the supervisor included. */
  killToEmptyMsMedian: number | null;
  killToEmptyMsMax: number | null;
  serverTreesLeftBehind: number;
  kills: number;
  trials: number;
}

// Start-up and kill figures move with the machine's load: said beside them.
const loadAtStart = loadavg()[0]!;
const modes: Mode[] = ['plain', 'owned'];
const floor = floorSupervisorEnv();
if ('note' in floor) console.log(`bench/mcp: ${floor.note}; the kill row has no floor\n`);
const runAvailable = leashRunAvailable();
if (runAvailable) modes.push('run');
else console.log('bench/mcp: `leash run` is not available in this build; the run mode is skipped\n');

// Start-up, interleaved so that load on the machine hits every mode alike. "owned, warm" is a
// further server of a client whose supervisor already runs (an anchor server keeps it up).
const mark = newMark();
const samples = new Map<string, StartSample[]>();
const record = (name: string, sample: StartSample) => samples.set(name, [...(samples.get(name) ?? []), sample]);
try {
  await startOnce('plain', mark); // warm-up: disk cache, JIT of the SDK
  for (let i = 0; i < TRIALS; i += 1) {
    for (const mode of modes) record(mode === 'owned' ? 'owned, cold' : mode, await startOnce(mode, mark));
    // A further server of a client whose supervisor already runs: an untimed anchor keeps it up.
    const anchor = new OwnedStdioClientTransport({ command: process.execPath, args: [SERVER_ENTRY, 'stdio'], env: { LEASH_TEST_MARK: mark }, stderr: 'ignore' });
    const anchorClient = new Client({ name: 'leash-bench-anchor', version: '0.0.0' });
    await anchorClient.connect(anchor);
    record('owned, warm', await startOnce('owned', mark, false));
    await anchorClient.close();
  }
} finally {
  await killMarked(mark);
}

// Rounds alternate the modes (the floor beside the owned mode), so that load hits them alike.
const killModes: KillMode[] = [...modes, ...('env' in floor ? (['floor'] as const) : [])];
const kills = new Map<KillMode, KillSample[]>();
const killMark = newMark();
try {
  for (let i = 0; i < Math.max(...killModes.map(killTrials)); i += 1) {
    for (const mode of killModes) {
      if (i < killTrials(mode)) kills.set(mode, [...(kills.get(mode) ?? []), await killOnce(mode, killMark)]);
    }
  }
} finally {
  await killMarked(killMark);
}

const results: ModeResult[] = [];
for (const [name, starts] of samples) {
  const mode: Mode = name.startsWith('owned') ? 'owned' : (name as Mode);
  const killed = name === 'owned, warm' ? [] : (kills.get(mode) ?? []);
  const emptied = killed.map((k) => k.allMs).filter((ms): ms is number => ms !== undefined);
  const serverEmptied = killed.map((k) => k.serverMs).filter((ms): ms is number => ms !== undefined);
  // A warm server shares the supervisor that the cold row already accounts for.
  const memory = (name === 'owned, warm' ? [] : starts).map((sample) => sample.added).filter((m): m is ProcessMemory => m !== undefined);
  const mid = (pick: (m: ProcessMemory) => number | undefined) => {
    const values = memory.map(pick).filter((v): v is number => v !== undefined);
    return values.length ? median(values) : null;
  };
  results.push({
    mode: name,
    spawnMsMedian: median(starts.map((s) => s.spawnMs)),
    connectMsMedian: median(starts.map((s) => s.connectMs)),
    // The supervisor is shared by every server of one client; `leash run` is one per server.
    addedProcessesPerServer: mode === 'run' ? '1' : mode === 'owned' ? (name === 'owned, warm' ? '0' : '1 per client') : '0',
    addedRssKb: mid((m) => m.rssKb),
    addedPssKb: mid((m) => m.pssKb),
    addedPrivateKb: mid((m) => m.privateKb),
    killToServerEmptyMsMedian: serverEmptied.length ? median(serverEmptied) : null,
    killToEmptyMsMedian: emptied.length ? median(emptied) : null,
    killToEmptyMsMax: emptied.length ? Math.max(...emptied) : null,
    serverTreesLeftBehind: killed.length - emptied.length,
    kills: killed.length,
    trials: TRIALS,
  });
}

const floorKills = kills.get('floor') ?? [];
if (floorKills.length > 0) {
  const emptied = floorKills.map((k) => k.allMs).filter((ms): ms is number => ms !== undefined);
  const serverEmptied = floorKills.map((k) => k.serverMs).filter((ms): ms is number => ms !== undefined);
  results.push({
    mode: 'owned, EOF floor',
    spawnMsMedian: null,
    connectMsMedian: null,
    addedProcessesPerServer: '1 per client',
    addedRssKb: null,
    addedPssKb: null,
    addedPrivateKb: null,
    killToServerEmptyMsMedian: serverEmptied.length ? median(serverEmptied) : null,
    killToEmptyMsMedian: emptied.length ? median(emptied) : null,
    killToEmptyMsMax: emptied.length ? Math.max(...emptied) : null,
    serverTreesLeftBehind: floorKills.length - emptied.length,
    kills: floorKills.length,
    trials: 0,
  });
}

const plain = results.find((r) => r.mode === 'plain')!;
const fmt = (value: number | null, digits = 1) => (value === null ? '-' : value.toFixed(digits));
const rows = results.map((r) => [
  r.mode,
  fmt(r.spawnMsMedian, 2),
  fmt(r.connectMsMedian),
  r.mode === 'plain' || r.connectMsMedian === null ? '-' : fmt(r.connectMsMedian - plain.connectMsMedian!),
  r.addedProcessesPerServer,
  r.addedRssKb === null ? '-' : (r.addedRssKb / 1024).toFixed(1),
  r.addedPssKb === null ? '-' : (r.addedPssKb / 1024).toFixed(1),
  r.addedPrivateKb === null ? '-' : (r.addedPrivateKb / 1024).toFixed(1),
  r.kills === 0 ? '-' : r.killToServerEmptyMsMedian === null ? 'never' : fmt(r.killToServerEmptyMsMedian),
  r.kills === 0 ? '-' : r.killToEmptyMsMedian === null ? 'never' : fmt(r.killToEmptyMsMedian),
  r.kills === 0 ? '-' : `${r.serverTreesLeftBehind}/${r.kills}`,
]);
const header = ['mode', 'spawn ms', 'connect ms', '+ms vs plain', 'leash procs', 'RSS MB', 'PSS MB', 'private MB', 'kill->server gone ms', 'kill->all gone ms', 'left behind'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
const print = (cells: string[]) => console.log(cells.map((c, i) => c.padStart(widths[i]!)).join('  '));
print(header);
for (const row of rows) print(row);
console.log(
  `\n${TRIALS} connects per mode (server-everything, no wrapper); kills: client fixture SIGKILLed, server busy behind sh -c -> launcher -> node.` +
    `\nowned, EOF floor: the owned mode with bench/lib/floor-supervisor.ts (read until EOF, killpg) in place of leash's supervisor, which may act before EOF (the parent-death signal); the kills alternate with the other modes.` +
    `\nkill->server gone: the server's processes (leash run among them, in the server's place); kill->all gone: the death supervisor too, which stays to read its pipe to EOF (the client's teardown). The floor's supervisor polls killpg(0), which a zombie answers: it stays until init has reaped the tree. In the run mode the two are the same: leash run's guard carries no mark and is not counted.` +
    `\nMemory is that of the process leash adds: the death supervisor (owned; shared by all servers of one client) or the leash run process (run; one per server).` +
    `\nLoad average (1 min): ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end.`,
);

mkdirSync(`${REPO_ROOT}bench/results`, { recursive: true });
writeFileSync(
  `${REPO_ROOT}bench/results/mcp.json`,
  `${JSON.stringify({ node: process.version, at: new Date().toISOString(), loadAverage: { start: loadAtStart, end: loadavg()[0] }, leashRunAvailable: runAvailable, results }, null, 2)}\n`,
);
