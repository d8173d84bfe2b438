// Benchmark: servers in containers (issue 32). For each topology (the real docker CLI against
// `podman system service`; the podman CLI), a client that started `leash run --die-with-parent --
// <cli> run --rm -i IMAGE ...` is SIGKILLed while the container is busy, and the time until the
// container is gone (`ps -a` empty of it) is taken, for a container whose PID 1 ignores SIGTERM
// (target <= grace + 2 s) and one that honours it (target <= 1 s); each trial counts what is left
// (containers, processes). Then the start: spawn to the server's first line, `docker run` plain,
// wrapped as leash wraps any command (`leash run -- env docker run`: no container plan, leash's
// usual overhead) and wrapped as a container run (label and guard): what the container part adds
// (target <= 60 ms). Prints a table and writes bench/results/containers.json.
// Run: npm run build && node dist/bench/containers.js [--trials N]   (default 5; the 20)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signalProcess } from '../src/sys/processes.js';
import { waitUntil } from '../src/sys/wait.js';
import { CLI_ENTRY, JsonLines, killMarked, markedPids, newMark, startFixture } from '../test/helpers/processes.js';
import { processesMentioning, startRuntime, TEST_LABEL, type Runtime } from '../test/containers/runtime.js';
import { planContainerRun, runIdentity } from '../src/run/containers.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const trialsArg = process.argv.indexOf('--trials');
const TRIALS = trialsArg > 0 ? Number(process.argv[trialsArg + 1]) : 5;
const GRACE_S = 1;
const IGNORES_TERM = 'echo ready; while :; do :; done';
const HONOURS_TERM = `trap 'exit 0' TERM; echo ready; while :; do sleep 0.1; done`;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
};

async function startServer(rt: Runtime, mark: string, command: string[]): Promise<{ client: ReturnType<typeof startFixture>; readyMs: number }> {
  const t0 = performance.now();
  const client = startFixture('containers/client.mjs', command, mark, {
    stdio: ['ignore', 'pipe', 'pipe'],
    extraEnv: { ...rt.env, LEASH_GRACE_SECONDS: '', LEASH_STATE_PATH: '' },
  });
  const lines = new JsonLines(client);
  for (;;) {
    const line = await lines.next<{ line?: string; exit?: number }>(60_000);
    if (line.line === 'ready') return { client, readyMs: performance.now() - t0 };
    if (line.exit !== undefined) throw new Error(`server exited: ${lines.stderr}`);
  }
}

function run(cli: 'docker' | 'podman', rt: Runtime, mark: string, script: string): string[] {
  return [cli, 'run', '--rm', '-i', '--network', 'none', '--label', `${TEST_LABEL}=${mark}`, rt.image, 'sh', '-c', `: ${mark}; ${script}`];
}

interface Trial { goneMs: number | null; containersLeft: number; processesLeft: number }

async function killTrial(rt: Runtime, cli: 'docker' | 'podman', script: string): Promise<Trial> {
  const mark = newMark();
  try {
    const command = [process.execPath, CLI_ENTRY, 'run', '--die-with-parent', '--grace', String(GRACE_S), '--', ...run(cli, rt, mark, script)];
    const { client } = await startServer(rt, mark, command);
    const t0 = performance.now();
    signalProcess(client.pid as number, 'SIGKILL');
    const gone = await waitUntil(() => rt.containers(cli, `${TEST_LABEL}=${mark}`).length === 0, 30_000);
    const goneMs = gone ? performance.now() - t0 : null;
    await waitUntil(() => markedPids(mark).length === 0 && processesMentioning(mark).length === 0, 10_000);
    return { goneMs, containersLeft: rt.containers(cli, `${TEST_LABEL}=${mark}`).length, processesLeft: markedPids(mark).length + processesMentioning(mark).length };
  } finally {
    const left = rt.containers(cli, `${TEST_LABEL}=${mark}`);
    if (left.length > 0) rt.cli(cli, ['rm', '-f', ...left]);
    await killMarked(mark);
  }
}

async function startTrial(rt: Runtime, how: 'plain' | 'leash-usual' | 'leash-container'): Promise<number> {
  const mark = newMark();
  const docker = run('docker', rt, mark, 'echo ready; exec cat');
  const command = how === 'plain' ? docker
    : how === 'leash-usual' ? [process.execPath, CLI_ENTRY, 'run', '--', 'env', ...docker]
    : [process.execPath, CLI_ENTRY, 'run', '--', ...docker];
  try {
    const { client, readyMs } = await startServer(rt, mark, command);
    signalProcess(client.pid as number, 'SIGKILL');
    return readyMs;
  } finally {
    await waitUntil(() => rt.containers('docker', `${TEST_LABEL}=${mark}`).length === 0, 5_000);
    const left = rt.containers('docker', `${TEST_LABEL}=${mark}`);
    if (left.length > 0) rt.cli('docker', ['rm', '-f', ...left]);
    await killMarked(mark);
  }
}

const runtime = await startRuntime({ service: true });
if (typeof runtime === 'string') {
  console.log(`SKIP bench/containers: ${runtime}`);
  process.exit(0);
}
const rt = runtime;
const results: Record<string, unknown> = { trials: TRIALS, graceSeconds: GRACE_S };
const rows: string[][] = [];
try {
  for (const cli of ['docker', 'podman'] as const) {
    for (const [kind, script, targetMs] of [['ignores SIGTERM', IGNORES_TERM, (GRACE_S + 2) * 1000], ['honours SIGTERM', HONOURS_TERM, 1000]] as const) {
      const trials: Trial[] = [];
      for (let i = 0; i < TRIALS; i += 1) trials.push(await killTrial(rt, cli, script));
      const times = trials.map((t) => t.goneMs).filter((ms): ms is number => ms !== null);
      const entry = {
        medianMs: Math.round(median(times)),
        maxMs: Math.round(Math.max(...times)),
        targetMs,
        notGone: trials.length - times.length,
        containersLeft: trials.reduce((sum, t) => sum + t.containersLeft, 0),
        processesLeft: trials.reduce((sum, t) => sum + t.processesLeft, 0),
      };
      results[`${cli}: client SIGKILL, container ${kind}`] = entry;
      rows.push([`${cli} topology, PID 1 ${kind}`, `${entry.medianMs} ms`, `${entry.maxMs} ms`, `<= ${targetMs} ms`, `${entry.containersLeft} / ${entry.processesLeft}`, entry.maxMs <= targetMs && entry.notGone === 0 && entry.containersLeft + entry.processesLeft === 0 ? 'met' : 'MISSED']);
    }
  }
  const starts: Record<string, number[]> = { plain: [], 'leash-usual': [], 'leash-container': [] };
  // One warm-up each, then interleaved rounds.
  for (const how of Object.keys(starts) as Array<keyof typeof starts>) await startTrial(rt, how as 'plain');
  for (let i = 0; i < TRIALS; i += 1) for (const how of Object.keys(starts)) starts[how]?.push(await startTrial(rt, how as 'plain'));
  const plain = median(starts.plain as number[]);
  const usual = median(starts['leash-usual'] as number[]);
  const container = median(starts['leash-container'] as number[]);
  // The container part alone, in this process: the plan, the label, the guard's start (until its
  // launcher has exited), as leash does before the command starts.
  const guardStarts: number[] = [];
  for (let i = 0; i < TRIALS; i += 1) {
    const t0 = performance.now();
    const plan = planContainerRun('docker', ['run', '-i', '--rm', rt.image], runIdentity(), rt.env, GRACE_S * 1000);
    await plan?.startGuard();
    guardStarts.push(performance.now() - t0);
    await plan?.teardown(GRACE_S * 1000);
  }
  results.guardStartMs = { median: Number(median(guardStarts).toFixed(1)), max: Number(Math.max(...guardStarts).toFixed(1)) };
  rows.push(['container part alone (plan + guard start)', `${median(guardStarts).toFixed(1)} ms`, `${Math.max(...guardStarts).toFixed(1)} ms`, '<= 60 ms', '', median(guardStarts) <= 60 ? 'met' : 'MISSED']);
  results.start = { plainMs: Math.round(plain), leashUsualMs: Math.round(usual), leashContainerMs: Math.round(container), containerPartMs: Math.round(container - usual), targetMs: 60 };
  rows.push(['docker run start: plain / leash usual / leash container', `${Math.round(plain)} / ${Math.round(usual)} / ${Math.round(container)} ms`, '', '<= 60 ms added', `container part ${Math.round(container - usual)} ms`, container - usual <= 60 ? 'met' : 'MISSED']);
} finally {
  await rt.cleanUp();
}
const header = ['case', 'median', 'max', 'target', 'left (containers / processes)', ''];
const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i] as number)).join('  '));
mkdirSync(join(REPO, 'bench/results'), { recursive: true });
writeFileSync(join(REPO, 'bench/results/containers.json'), JSON.stringify(results, null, 2) + '\n');
console.log('wrote bench/results/containers.json');
