// leash/mcp benchmark: how long closing many transports at once holds the client's event loop.
// N OwnedStdioClientTransports are started, then all closed together: half of the servers leave
// on stdin's end (`cat`), half ignore it (`sleep`) and are TERMed after eofGraceMs, and a few are
// behind a wrapper that already exited (a leaderless group: only a look through /proc can tell
// when it is empty). Bystanders (children of another process) give /proc a realistic size.
// Measured: the longest event-loop stall (largest gap between runs of a 1 ms interval timer) and
// the time until every close() resolved, with an idle owner as the reference (the machine's noise).
// Usage: node dist/bench/mcp-close-stall.js [--transports N] [--others N] [--rounds N]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { OwnedStdioClientTransport } from '../src/mcp/index.js';
import { listPids } from '../src/sys/procfs.js';
import { signalGroup } from '../src/sys/processes.js';
import { waitUntil } from '../src/sys/wait.js';
import { worstStall } from './lib/event-loop-stall.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
const TRANSPORTS = option('--transports', 50);
const OTHERS = option('--others', 600);
const ROUNDS = option('--rounds', 3);
/** Every tenth server is behind a wrapper that exits at once, leaving its group leaderless. */
const LEADERLESS_EVERY = 10;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));


function serverOf(index: number): { command: string; args: string[] } {
  if (index % LEADERLESS_EVERY === LEADERLESS_EVERY - 1) {
    // The wrapper exits; the server it backgrounded stays in the group, ignoring stdin.
    return { command: 'sh', args: ['-c', 'sleep 1000 </dev/null >/dev/null 2>&1 & exit 0'] };
  }
  return index % 2 === 0 ? { command: 'cat', args: [] } : { command: 'sleep', args: ['1000'] };
}

let others: ChildProcess | undefined;
try {
  // detached-spawn: ok — the bench ends this group with killpg in the finally block.
  others = spawn('sh', ['-c', `i=0; while [ $i -lt ${OTHERS} ]; do sleep 1000 & i=$((i+1)); done; echo ready; wait`], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve) => others!.stdout!.once('data', () => resolve()));
  const idle: number[] = [];
  const stalls: number[] = [];
  const closeTimes: number[] = [];
  let processes = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const transports = Array.from({ length: TRANSPORTS }, (_, index) => new OwnedStdioClientTransport({ ...serverOf(index), stderr: 'ignore', eofGraceMs: 500, graceMs: 1000 }));
    await Promise.all(transports.map((transport) => transport.start()));
    await sleep(1000);
    processes = listPids().length;
    idle.push(await worstStall(() => sleep(1500)));
    let closeMs = 0;
    stalls.push(
      await worstStall(async () => {
        const began = performance.now();
        await Promise.all(transports.map((transport) => transport.close()));
        closeMs = performance.now() - began;
      }),
    );
    closeTimes.push(closeMs);
  }
  const rows: Array<[string, string]> = [
    [`longest stall: idle client, 1.5 s (reference: the machine's noise)`, `${median(idle).toFixed(1)} ms`],
    [`longest stall: ${TRANSPORTS} transports closed at once (${processes} processes)`, `${median(stalls).toFixed(1)} ms (max ${Math.max(...stalls).toFixed(1)})`],
    [`time until every close() resolved (eofGraceMs 500)`, `${median(closeTimes).toFixed(0)} ms`],
  ];
  const width = Math.max(...rows.map((row) => row[0].length));
  console.log(`load average ${loadavg().map((value) => value.toFixed(2)).join(' ')}; median of ${ROUNDS} rounds`);
  for (const [name, value] of rows) console.log(`${name.padEnd(width)}  ${value.padStart(22)}`);
  mkdirSync(RESULTS, { recursive: true });
  const out = `${RESULTS}mcp-close-stall.json`;
  writeFileSync(
    out,
    JSON.stringify({ when: new Date().toISOString(), node: process.version, loadavg: loadavg(), transports: TRANSPORTS, others: OTHERS, processes, stallMs: { idle, close: stalls }, closeMs: closeTimes }, null, 2) + '\n',
  );
  console.log(`wrote ${out}`);
} finally {
  if (others?.pid !== undefined) signalGroup(others.pid, 'SIGKILL');
  if (others) await waitUntil(() => others!.exitCode !== null || others!.signalCode !== null, 10_000);
}
