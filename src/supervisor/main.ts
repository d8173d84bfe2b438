// The death supervisor: one small process per owner. It learns which process groups to guard
// from control lines on stdin, and takes them down when stdin reaches EOF, which happens
// exactly when the owner (the only writer) is gone, however it died.
// Imports nothing beyond Node's standard library and leash's own standard-library-only files.
import { readUntilEof } from './control-input.js';
import { Notices } from './notices.js';
import { DEFAULT_GRACE_MS, LineFramer, PARENT_DEATH_SIGNAL, parseControlLine } from './protocol.js';
import { GroupRegistry } from './registry.js';
import { tearDown, warmUpHandles, warmUpTeardown, type TeardownPlan } from './teardown.js';
import { Watchdog } from './watchdog.js';
import { closeDeferredDescriptors, closeDescriptor, isPidfdDescriptor, kernelMayHaveGroupHandles } from '../sys/group-handle.js';
import { loadNativeSync } from '../sys/native.js';
import { hasProcfs, processIsEnding, readProcStat, threadSleepsInRead } from '../sys/procfs.js';
import { groupLeaderIdentity, ownProcessGroupId } from '../sys/processes.js';
import { openStderrWriter } from '../sys/safe-output.js';
import { holdCatchableSignals } from '../sys/stray-signals.js';

export const SUPERVISOR_USAGE =
  'usage: leash supervise --parent-pgid PGID [--grace-ms MS] [--owner-token TOKEN] [--max-groups N]';

/** How often the witnesses of groups held without a pidfd are refreshed: every 250 ms for 3 s after a registration, then every 2 s. */
const WITNESS_REFRESH_MS = 250;
const WITNESS_FAST_REFRESH_FOR_MS = 3000;
const WITNESS_SLOW_REFRESH_TICKS = 8;
/** How many disowned groups the sweep remembers to spare (oldest forgotten first). */
const MAX_DISOWNED = 4096;
/** Restarts of a watchdog shell that died while it guarded, and the pause before each. */
const MAX_WATCHDOG_RESTARTS = 10;
const WATCHDOG_RESTART_DELAY_MS = 1000;

/** Exit codes of `leash supervise`. */
export const SupervisorExit = {
  ok: 0,
  /** Started inside the parent's process group: a killpg of the parent would take us too. */
  refused: 2,
  usage: 64,
} as const;

export interface SupervisorOptions {
  parentPgid: number;
  graceMs: number;
  ownerToken?: string;
  /** Live groups remembered at most (MAX_REGISTERED by default). */
  maxGroups?: number;
}

/** Parses the supervisor's flags; a string is the usage error to print. */
export function parseSupervisorArgs(argv: readonly string[]): SupervisorOptions | string {
  let parentPgid: number | undefined;
  let graceMs = DEFAULT_GRACE_MS;
  let ownerToken: string | undefined;
  let maxGroups: number | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--parent-pgid' || flag === '--grace-ms' || flag === '--owner-token' || flag === '--max-groups') {
      if (value === undefined) return `${flag} needs a value`;
      i += 1;
      if (flag === '--owner-token') {
        if (!/^[A-Za-z0-9_-]{8,128}$/.test(value)) return '--owner-token takes 8 to 128 letters, digits, _ or -';
        ownerToken = value;
        continue;
      }
      if (!/^[0-9]{1,10}$/.test(value)) return `${flag} takes a whole number, not '${value}'`;
      const number = Number(value);
      if (flag === '--parent-pgid') parentPgid = number;
      else if (flag === '--max-groups') {
        if (number < 1 || number > 1_000_000) return '--max-groups takes 1 to 1000000';
        maxGroups = number;
      }
      else if (number > 600_000) return '--grace-ms is at most 600000';
      else graceMs = number;
    } else {
      return `unknown argument '${flag}'`;
    }
  }
  // 0 is what a process sees when its group leader lives outside its pid namespace
  // (unshare --pid without setsid, some sandboxes): then there is no parent group to spare.
  if (parentPgid === undefined) return '--parent-pgid PGID is required';
  return { parentPgid, graceMs, ownerToken, maxGroups };
}

/** Runs the supervisor until EOF on stdin; resolves with the exit code. */
export async function runSupervisor(options: SupervisorOptions): Promise<number> {
  const notices = new Notices();
  const ownPgid = ownProcessGroupId();
  if (ownPgid === options.parentPgid) {
    notices.say(
      `refusing to run inside the parent's process group ${options.parentPgid}: ` +
        'a signal to that group would end the supervisor before it could clean up ' +
        '(start it with detached: true)',
    );
    return SupervisorExit.refused;
  }

  // Covers the teardown's freeze (Linux): see watchdog.ts. Its group is never a target. One that
  // dies while it guards (killed by someone, a shell that fails) is started again a second later,
  // a bounded number of times: a shell that cannot live is not retried forever.
  let watchdogRestarts = 0;
  const watchdogLost = () => {
    if (teardown) return;
    if (watchdogRestarts >= MAX_WATCHDOG_RESTARTS) {
      notices.say(`the watchdog shell died ${watchdogRestarts + 1} times; the teardown's freeze is no longer covered (docs/supervisor.md)`);
      return;
    }
    watchdogRestarts += 1;
    setTimeout(() => {
      watchdogScheduled = false;
      if (registry.size > 0) startWatchdogSoon();
    }, WATCHDOG_RESTART_DELAY_MS).unref();
  };
  const watchdog = hasProcfs() ? new Watchdog(watchdogLost) : undefined;
  const isSafeTarget = (pgid: number) =>
    pgid > 1 && pgid !== ownPgid && pgid !== options.parentPgid && pgid !== watchdog?.pid;
  // Started once there is something to guard, after the warm-up and off any line's path.
  let warmUpDone = () => {};
  const warmedUp = new Promise<void>((resolve) => (warmUpDone = resolve));
  let watchdogScheduled = false;
  const startWatchdogSoon = () => {
    if (!watchdog || watchdogScheduled) return;
    watchdogScheduled = true;
    void warmedUp.then(() =>
      setImmediate(() => {
        if (!teardown && watchdog.start()) watchdog.warmUp();
      }),
    );
  };
  const registry = new GroupRegistry(options.maxGroups);
  /** Inherited handle descriptors (the replay's `handles` line) no `handle` line has attached yet. */
  const unclaimedHandleFds = new Set<number>();
  let firstLine = true;
  // Groups let go on purpose keep the owner token in their environment: the sweep must spare
  // them, by identity, not by number (numbers are recycled).
  const disowned = new Map<number, number | undefined>();
  let released = false;

  // Witnesses of the groups held without a working pidfd, kept fresh off every line's path: a
  // few reads per group per tick (group-handle.ts), stopped at the teardown. Every tick for a few
  // seconds after a registration (when a wrapper forks its server and exits), then every 8th: each
  // refresh leaves garbage, and the young generation it fills is private memory.
  let refreshTimer: NodeJS.Timeout | undefined;
  let fastRefreshUntil = 0;
  let ticks = 0;
  const refreshWitnessesSoon = () => {
    fastRefreshUntil = performance.now() + WITNESS_FAST_REFRESH_FOR_MS;
    if (refreshTimer || !hasProcfs()) return;
    refreshTimer = setInterval(() => {
      if (teardown || !registry.needsRefresh()) {
        clearInterval(refreshTimer);
        refreshTimer = undefined;
        return;
      }
      ticks += 1;
      if (performance.now() < fastRefreshUntil || ticks % WITNESS_SLOW_REFRESH_TICKS === 0) registry.refreshSome();
    }, WITNESS_REFRESH_MS);
    refreshTimer.unref();
  };

  const framer = new LineFramer((line) => {
    const first = firstLine;
    firstLine = false;
    const command = parseControlLine(line);
    if (!command) {
      notices.say(`ignoring a malformed control line (${JSON.stringify(line.slice(0, 40))})`);
      return;
    }
    switch (command.verb) {
      case 'register':
      case 'recall':
        if (!isSafeTarget(command.pgid)) {
          notices.say(`ignoring unsafe process group ${command.pgid}`);
          return;
        }
        if (registry.register(command.pgid, command.startTime, command.verb === 'recall' ? 'recalled' : 'now') === 'full') {
          notices.say(`refusing to register process group ${command.pgid}: already guarding ${registry.size} live groups`);
          return;
        }
        disowned.delete(command.pgid);
        released = false;
        startWatchdogSoon();
        refreshWitnessesSoon();
        return;
      case 'witness': {
        const outcome = registry.witness(command.pgid, { pid: command.pid, startTime: command.startTime });
        if (outcome === 'unknown') notices.say(`ignoring a witness of process group ${command.pgid}, which is not registered`);
        return;
      }
      case 'handles':
        // Believed only as the first line (the replay's, written before anything else): the
        // descriptors are then the inherited ones, and only pidfds among them are ever closed.
        if (!first) {
          notices.say('ignoring a `handles` line that is not the first line');
          return;
        }
        for (let fd = 3; fd < 3 + command.count; fd += 1) if (isPidfdDescriptor(fd)) unclaimedHandleFds.add(fd);
        return;
      case 'handle': {
        const outcome = registry.adoptHandle(command.pgid, command.fd);
        if (outcome === 'kept') {
          unclaimedHandleFds.delete(command.fd);
          return;
        }
        if (outcome === 'unknown') notices.say(`ignoring the handle of process group ${command.pgid}, which is not registered`);
        else notices.say(`ignoring descriptor ${command.fd}: it is no pidfd of process group ${command.pgid}'s leader`);
        // An inherited handle nobody will use (its group was unregistered before the line came,
        // say) is closed, unless a group holds it: otherwise every replay would leak it.
        if (unclaimedHandleFds.delete(command.fd) && !registry.holdsDescriptor(command.fd)) closeDescriptor(command.fd);
        return;
      }
      case 'unregister':
        registry.unregister(command.pgid);
        return;
      case 'disown':
        registry.unregister(command.pgid);
        disowned.delete(command.pgid);
        disowned.set(command.pgid, command.startTime ?? groupLeaderIdentity(command.pgid));
        if (disowned.size > MAX_DISOWNED) disowned.delete(disowned.keys().next().value as number);
        return;
      case 'release':
        registry.clear();
        released = true;
        return;
    }
  });

  // The teardown starts inside the callback that learns of the owner's death: its first SIGTERMs
  // go out before anything else. That is EOF, or sooner the parent-death signal (started through
  // setpriv: sys/parent-death.ts) once the owner's main thread is a zombie that ended by a signal
  // or a failing exit, while the rest of the owner is still being torn down. Lines still unread
  // then (a last `register`) are read on to EOF, and what they added is ended at EOF.
  let teardown: Promise<unknown> | undefined;
  const teardowns: Promise<unknown>[] = [];
  const handedOver = new Set<number>();
  /** The plan for the groups no teardown has yet. No side effect: the warm-up runs it, so that its code is compiled before EOF. */
  const planTeardown = (first: boolean): TeardownPlan => ({
    groups: new Map([...registry.groups].filter(([pgid]) => !handedOver.has(pgid))),
    handles: registry.handles,
    members: registry.members,
    graceMs: options.graceMs,
    ownerToken: options.ownerToken,
    disowned,
    // The first teardown retires the watchdog when it ends: a later one goes without it.
    watchdog: first ? watchdog : undefined,
    notify: (message) => notices.say(message),
  });
  const beginTeardown = () => {
    const first = teardown === undefined;
    const plan = planTeardown(first);
    if (!first && plan.groups.size === 0) return;
    for (const pgid of plan.groups.keys()) handedOver.add(pgid);
    const run = tearDown(plan);
    teardown ??= run;
    teardowns.push(run);
  };
  const owner = ownerAtStart();
  if (owner) {
    // Anyone may send this signal: only the recorded owner, provably on its way out (its main
    // thread a zombie that ended by a signal or a failing exit), counts. An owner already reaped
    // proves nothing here (it may have written `release` and left with 0): EOF decides then, as
    // for a main thread that exited with 0 (pthread_exit leaves the owner running). The signal goes
    // out a moment before the kernel marks the thread a zombie: a check that finds it running
    // looks again a few times (1, 2, 4 ... 32 ms); none proving it leaves the decision to EOF.
    // Once the owner is proven ending, its last lines (a `disown` written just before it died) are
    // taken first: read on the thread pool, all are taken once the reading thread sleeps in
    // read(0) again (threadSleepsInRead); read by the event loop, once the loop has turned (the
    // lines were readable before the signal came). Until then it looks on, every 50 ms at most,
    // up to EOF: where a second writer holds the pipe, no EOF ever comes.
    let rechecks: ReturnType<typeof setTimeout> | undefined;
    let ownerEnding = false;
    const check = (attempt: number) => {
      rechecks = undefined;
      if (teardown || (released && registry.size === 0)) return;
      // One read of its stat: identity (start time) and state alike. Not the owner any more (reaped,
      // the pid reused) reads as not ending. Proven once, it stays proven (its parent may reap it).
      ownerEnding ||= processIsEnding(owner.pid, owner.startTime);
      const mode = input.mode();
      if (ownerEnding && mode === 'thread' && threadSleepsInRead(0)) return beginTeardown();
      if (ownerEnding && mode === 'socket') {
        setImmediate(() => {
          if (!teardown && !(released && registry.size === 0)) beginTeardown();
        });
        return;
      }
      if (ownerEnding ? mode !== 'thread' : attempt >= 6) return;
      rechecks = setTimeout(() => check(attempt + 1), Math.min(2 ** attempt, 50));
    };
    try {
      process.on(PARENT_DEATH_SIGNAL, () => {
        if (rechecks === undefined) check(0);
      });
    } catch {
      // A runtime that cannot listen for it: EOF alone, as without setpriv.
    }
  }
  const input = readUntilEof(
    (chunk) => framer.push(chunk),
    () => {
      if (!teardown && released && registry.size === 0) return;
      beginTeardown();
    },
    heldChunkMs(),
  );
  // Once the read is armed, off the path from EOF to the first SIGTERM.
  // The native calls (pidfds: group handles) load after that, off the start-up path, with
  // require() on this thread (the one thread-pool thread may sit in the stdin read); groups
  // registered meanwhile get their handles then, while their leaders are still the recorded ones.
  setImmediate(() =>
    void warmUpTeardown(ownPgid)
      .catch(() => {})
      // Finds the thread that sleeps in read(0), so that the check at the parent-death signal
      // looks at that one thread only (procfs.ts caches it); runs the plan's code once.
      .then(() => {
        if (owner && input.mode() === 'thread') threadSleepsInRead(0);
        planTeardown(false);
      })
      .then(warmUpDone)
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        // Loaded only where group handles can work (Linux 6.9+, not switched off): elsewhere the
        // witnesses do without native calls, and the supervisor keeps its memory.
        if (teardown || !hasProcfs() || !kernelMayHaveGroupHandles() || !loadNativeSync()) return;
        warmUpHandles(ownPgid);
        registry.openHandles();
        closeDeferredDescriptors();
      })
      .catch(() => {}),
  );
  await input.done;
  if (framer.overlongLines > 0) notices.say(`ignored ${framer.overlongLines} overlong control line(s)`);
  notices.flush();
  await Promise.all(teardowns);
  return SupervisorExit.ok;
}

/**
 * Test hook, inert when unset (the owner library scrubs the supervisor's environment):
 * LEASH_TEST_SUPERVISOR_HOLD_CHUNKS=MS hands each chunk read from stdin over MS ms late, which
 * holds open the moment between the owner's last write and its reading.
 */
function heldChunkMs(): number {
  const ms = /^[0-9]{1,5}$/.exec(process.env.LEASH_TEST_SUPERVISOR_HOLD_CHUNKS ?? '')?.[0];
  return ms === undefined ? 0 : Number(ms);
}

/** The process that started this one (its owner), by identity, where /proc shows it; read first thing. */
function ownerAtStart(): { pid: number; startTime: number } | undefined {
  const pid = process.ppid;
  if (pid <= 1 || !hasProcfs()) return undefined;
  const stat = readProcStat(pid);
  return stat ? { pid, startTime: stat.startTime } : undefined;
}

/** Entry point shared by `leash supervise` and direct execution of this file. */
export async function supervisorMain(argv: readonly string[]): Promise<number> {
  // First of all: from here on no signal Node can catch ends us, stops us or opens a debugger
  // (SIGUSR1). SIGKILL, faults and the real-time signals still end us: the owner replaces us.
  holdCatchableSignals();
  const options = parseSupervisorArgs(argv);
  if (typeof options === 'string') {
    openStderrWriter().write(`leash supervise: ${options}\n${SUPERVISOR_USAGE}\n`);
    return SupervisorExit.usage;
  }
  return runSupervisor(options);
}
