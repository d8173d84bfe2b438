// `npm run demo`: an owner starts a realistic process tree and is SIGKILLed, first with plain
// child_process.spawn (the tree leaks; the demo cleans it up itself), then through leash.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { readCommandLine, readProcStat } from '../src/sys/procfs.js';
import { findEnvironmentCarriers, isProcessAlive, signalProcess } from '../src/sys/processes.js';
import { waitUntil } from '../src/sys/wait.js';

const OWNER = fileURLToPath(new URL('./owner.js', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXPECTED_PROCESSES = 6; // owner, sh wrapper, server, three helpers
const GRACE_MS = 1000;

/** Every live process that carries this run's marker, in pid order. */
function tree(marker: string): number[] {
  return findEnvironmentCarriers(marker).map((mark) => mark.pid).sort((a, b) => a - b);
}

function describe(pids: number[], owner: number): string {
  const rows = pids.map((pid) => {
    const stat = readProcStat(pid);
    const argv = (readCommandLine(pid) ?? ['?']).map((word) => word.replaceAll(REPO, '').replaceAll(process.execPath, 'node'));
    const role = pid === owner ? 'owner' : '';
    return `  ${String(pid).padStart(7)} ${String(stat?.ppid ?? '?').padStart(7)} ${String(stat?.pgid ?? '?').padStart(7)} ${String(stat?.sid ?? '?').padStart(7)}  ${role.padEnd(6)}${argv.join(' ').slice(0, 70)}`;
  });
  return [`      PID    PPID    PGID     SID  command`, ...rows].join('\n');
}

async function scenario(mode: 'plain' | 'leash'): Promise<void> {
  const marker = `LEASH_DEMO_MARK=${randomBytes(6).toString('hex')}`;
  const [name, value] = marker.split('=') as [string, string];
  const owner = spawn(process.execPath, [OWNER, mode], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, [name]: value, LEASH_GRACE_MS: String(GRACE_MS) },
  });
  const ownerPid = owner.pid!;
  if (!(await waitUntil(() => tree(marker).length >= EXPECTED_PROCESSES, 10_000))) {
    throw new Error(`the demo tree did not start: ${tree(marker).join(' ')}`);
  }
  const before = tree(marker);
  console.log(`\n== ${mode === 'leash' ? 'with leash (spawnOwned)' : 'plain child_process.spawn'} ==`);
  console.log(`The owner (pid ${ownerPid}) started this tree:\n${describe(before, ownerPid)}`);

  const killedAt = performance.now();
  owner.kill('SIGKILL');
  const children = before.filter((pid) => pid !== ownerPid);
  const goneAfter = new Map<number, number>();
  // Watch every millisecond (not waitUntil's back-off) so the times below are accurate.
  const deadline = killedAt + (mode === 'leash' ? GRACE_MS + 5000 : 1500);
  while (goneAfter.size < children.length && performance.now() < deadline) {
    for (const pid of children) {
      if (!goneAfter.has(pid) && !isProcessAlive(pid)) goneAfter.set(pid, performance.now() - killedAt);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }

  const survivors = children.filter((pid) => !goneAfter.has(pid));
  console.log(`\nSIGKILL sent to the owner. ${survivors.length} of ${children.length} processes outlived it.`);
  if (survivors.length > 0) {
    console.log(`Still running 1.5 s later, reparented away from the owner:\n${describe(survivors, ownerPid)}`);
  }
  if (goneAfter.size > 0) {
    const times = [...goneAfter.values()].sort((a, b) => a - b);
    const fast = times.filter((ms) => ms < GRACE_MS);
    console.log(
      `Cleaned up: ${fast.length} processes within ${Math.max(...fast, 0).toFixed(1)} ms (SIGTERM), ` +
        `${times.length - fast.length} after the ${GRACE_MS} ms grace (SIGKILL); last one gone at ${times[times.length - 1]!.toFixed(1)} ms.`,
    );
  }
  if (survivors.length > 0) {
    // The demo started them, so it ends them itself, by pid.
    for (const pid of survivors) signalProcess(pid, 'SIGKILL');
    await waitUntil(() => survivors.every((pid) => !isProcessAlive(pid)), 5000);
    console.log(`(The demo has now killed those ${survivors.length} leftovers by pid.)`);
  }
}

if (process.platform !== 'linux') {
  console.error('The demo reads /proc to show the process tree, so it runs on Linux only.');
  process.exit(2);
}
await scenario('plain');
await scenario('leash');
