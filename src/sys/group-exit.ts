// Waiting, without blocking the event loop, for process groups to empty. Many waits share one
// timer; each check costs O(1) per group (a killpg probe and one stat read of the leader), and the
// rare group that outlives its leader is settled by one shared /proc scan done in small slices.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { hasProcfs, isDeadState, listPids, readProcStat } from './procfs.js';
import { signalGroup } from './processes.js';

/** Processes read per slice of a scan before the event loop gets a turn. */
const SCAN_SLICE = 64;
/** Checks of one group back off from FIRST_PAUSE_MS to MAX_PAUSE_MS. */
const FIRST_PAUSE_MS = 2;
const MAX_PAUSE_MS = 50;
/** A scan starts at most this often (it only settles groups whose leader is gone). */
const MIN_SCAN_INTERVAL_MS = 50;
/**
 * Groups checked per turn of the event loop: each check costs a probe and a stat read, which
 * take far longer than usual while hundreds of processes are exiting at once.
 */
const CHECKS_PER_TICK = 16;

interface Waiter {
  deadline: number;
  resolve: (empty: boolean) => void;
}

/** One watched group: checked on its own back-off, shared by every wait on it. */
interface Watch {
  dueAt: number;
  pause: number;
  waiters: Waiter[];
}

const watches = new Map<number, Watch>();
let timer: NodeJS.Timeout | undefined;
let timerAt = Infinity;
/** Groups answering a probe with no live leader: only a scan can tell if live members remain. */
const needScan = new Set<number>();
let scanning = false;
let lastScanAt = -Infinity;

type Quick = 'empty' | 'live' | 'unsure';

/** What a probe and the leader's stat say about a group, without a scan. */
function quickCheck(pgid: number): Quick {
  const probe = signalGroup(pgid, 0);
  if (probe === 'gone') return 'empty';
  if (!hasProcfs()) {
    // macOS answers EPERM for a group of zombies only: nothing there can be signalled.
    return probe === 'sent' ? 'live' : 'empty';
  }
  const leader = readProcStat(pgid);
  if (leader && leader.pgid === pgid && !isDeadState(leader.state)) return 'live';
  return 'unsure';
}

/**
 * Resolves true once no member of group `pgid` runs code (zombies count as gone), or false when
 * `budgetMs` passes first. The first check is made at once.
 */
export function waitForGroupEmpty(pgid: number, budgetMs: number): Promise<boolean> {
  const budget = Number.isFinite(budgetMs) ? Math.max(0, budgetMs) : 0;
  return new Promise<boolean>((resolve) => {
    const now = performance.now();
    let watch = watches.get(pgid);
    if (!watch) {
      // Checked on the next tick, with the others: many waits begun together cost one turn each.
      watch = { dueAt: now, pause: FIRST_PAUSE_MS, waiters: [] };
      watches.set(pgid, watch);
    }
    watch.waiters.push({ deadline: now + budget, resolve });
    armAt(now);
  });
}

/** Makes sure the timer fires by `at`. */
function armAt(at: number): void {
  if (timer && timerAt <= at) return;
  if (timer) clearTimeout(timer);
  timerAt = at;
  timer = setTimeout(tick, Math.max(0, at - performance.now()));
}

/** Arms the timer for the earliest due check or deadline (O(waiters): once per tick). */
function arm(): void {
  let next = Infinity;
  for (const watch of watches.values()) {
    next = Math.min(next, watch.dueAt);
    for (const waiter of watch.waiters) next = Math.min(next, waiter.deadline);
  }
  if (next === Infinity) {
    if (timer) clearTimeout(timer);
    timer = undefined;
    timerAt = Infinity;
    return;
  }
  armAt(next);
}

function settle(pgid: number): void {
  const watch = watches.get(pgid);
  watches.delete(pgid);
  needScan.delete(pgid);
  for (const waiter of watch?.waiters ?? []) waiter.resolve(true);
}

function tick(): void {
  timer = undefined;
  timerAt = Infinity;
  const now = performance.now();
  let checks = 0;
  for (const [pgid, watch] of [...watches]) {
    if (watch.dueAt <= now && checks < CHECKS_PER_TICK) {
      checks += 1;
      // To the back of the line: the next tick starts with the groups this one did not reach.
      watches.delete(pgid);
      watches.set(pgid, watch);
      const quick = quickCheck(pgid);
      if (quick === 'empty') {
        settle(pgid);
        continue;
      }
      if (quick === 'unsure') needScan.add(pgid);
      else needScan.delete(pgid);
      watch.pause = Math.min(watch.pause * 2, MAX_PAUSE_MS);
      watch.dueAt = now + watch.pause;
    }
    const expired = watch.waiters.filter((waiter) => waiter.deadline <= now);
    if (expired.length === 0) continue;
    watch.waiters = watch.waiters.filter((waiter) => waiter.deadline > now);
    if (watch.waiters.length === 0) {
      watches.delete(pgid);
      needScan.delete(pgid);
    }
    for (const waiter of expired) waiter.resolve(false);
  }
  if (needScan.size > 0 && !scanning && now - lastScanAt >= MIN_SCAN_INTERVAL_MS) void scanForMembers();
  arm();
}

async function scanForMembers(): Promise<void> {
  scanning = true;
  lastScanAt = performance.now();
  try {
    const counts = await liveMemberCountsInSlices(new Set(needScan));
    for (const [pgid, live] of counts) if (live === 0 && watches.has(pgid)) settle(pgid);
  } finally {
    scanning = false;
    arm();
  }
}

/**
 * How many members of each group run code, from one scan of /proc read in slices that each hold
 * the event loop well under a millisecond or two. Linux only (elsewhere: an empty map).
 */
export async function liveMemberCountsInSlices(pgids: ReadonlySet<number>): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  if (!hasProcfs() || pgids.size === 0) return counts;
  for (const pgid of pgids) counts.set(pgid, 0);
  const pids = listPids();
  for (let start = 0; start < pids.length; start += SCAN_SLICE) {
    if (start > 0) await yieldToLoop();
    const end = Math.min(pids.length, start + SCAN_SLICE);
    for (let i = start; i < end; i += 1) {
      const stat = readProcStat(pids[i]!);
      if (stat && pgids.has(stat.pgid) && !isDeadState(stat.state)) counts.set(stat.pgid, counts.get(stat.pgid)! + 1);
    }
  }
  return counts;
}

/** Groups whose emptiness a quick check could not settle, waiting for the next shared scan. */
let pendingLook: { pgids: Set<number>; counts: Promise<Map<number, number>> } | undefined;

/**
 * Whether no member of group `pgid` runs code now (zombies count as gone), without holding the
 * event loop: a probe and the leader's stat settle a group whose leader is gone or alive; one
 * that outlived its leader waits for a sliced scan of /proc, shared by every call of the turn.
 */
export function isGroupEmptyInSlices(pgid: number): Promise<boolean> {
  const quick = quickCheck(pgid);
  if (quick !== 'unsure') return Promise.resolve(quick === 'empty');
  if (!pendingLook) {
    const pgids = new Set<number>();
    const counts = yieldToLoop().then(() => {
      // Later calls start a new batch: this scan may already have passed their members.
      if (pendingLook?.pgids === pgids) pendingLook = undefined;
      return liveMemberCountsInSlices(pgids);
    });
    pendingLook = { pgids, counts };
  }
  pendingLook.pgids.add(pgid);
  return pendingLook.counts.then((counts) => (counts.get(pgid) ?? 0) === 0);
}
