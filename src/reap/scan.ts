// Finding leaked process trees. A stdio server whose client is gone is cut off: its stdin is a
// pipe nobody can write to any more, its stdout or stderr a pipe nobody reads, or it carries a
// leash owner token whose supervisor is gone; and it has been orphaned (its parent is init or a
// subreaper). The top of each such tree, with everything below it, is one leaked tree.
import { liveRunHolding } from '../sys/cgroup.js';
import { OWNER_TOKEN_VARIABLE } from '../supervisor/protocol.js';
import { isTerminalTarget, pipeInode, readFdTarget, scanPipeHolders, socketInode, type PipeHolderScan, type PipeHolders } from '../sys/fds.js';
import { readResidentKb } from '../sys/process-memory.js';
import { probePipeReaders, probePipeWriters, type FarEnd } from '../sys/pipe-probe.js';
import { partialProcessView } from '../sys/process-visibility.js';
import type { UnixSocketInfo } from '../sys/unix-sockets.js';
import {
  CLOCK_TICKS_PER_SECOND,
  inNestedPidNamespace,
  isDeadState,
  listPids,
  processUid,
  readCommandLine,
  readEnvironVariable,
  readUptimeSeconds,
  scanAllStats,
  type ProcStat,
} from '../sys/procfs.js';
import { childrenByParent } from '../sys/tree.js';

export type LeakReason = 'stdin-no-writer' | 'stdout-no-reader' | 'stderr-no-reader' | 'owner-gone';

export const REASON_TEXT: Record<LeakReason, string> = {
  'stdin-no-writer': 'stdin has no writer',
  'stdout-no-reader': 'stdout has no reader',
  'stderr-no-reader': 'stderr has no reader',
  'owner-gone': 'leash owner and supervisor gone',
};

/** The same signs when they could not be proven (a process reap cannot look at may hold the far end). */
export const UNPROVEN_TEXT: Record<LeakReason, string> = {
  'stdin-no-writer': 'stdin: no writer seen, not proven',
  'stdout-no-reader': 'stdout: no reader seen, not proven',
  'stderr-no-reader': 'stderr: no reader seen, not proven',
  'owner-gone': 'leash owner: not proven gone',
};

/** One process of a tree, with what it takes to signal it later only if it is still itself. */
export interface TreeMember {
  pid: number;
  startTime: number;
  command: string;
  rssKb: number;
}

export interface LeakedTree {
  pid: number;
  startTime: number;
  command: string;
  ageSeconds: number;
  parent: { pid: number; command: string };
  /** Signs the scan proved. */
  reasons: LeakReason[];
  /**
   * Signs it saw but could not prove: no holder of the far end was seen, but some process that
   * may hold it could not be looked at, and the kernel could not be asked. What makes an unknown
   * tree unknown; beside the proven signs of a leaked one, output streams it could not settle.
   */
  unproven: LeakReason[];
  /** The top first, then its descendants. */
  members: TreeMember[];
  rssKb: number;
}

export interface ScanResult {
  /** Proven leaked. */
  trees: LeakedTree[];
  /**
   * Unknown: cut off as far as the scan could see, but a pipe end may be held where it cannot
   * look (see `blindSpot`). A stdin whose writer is not proven gone makes a tree unknown, whatever
   * else it shows: it may still be fed.
   */
  unknown: LeakedTree[];
  /** Why some pipe holders may be unseen (processes not ours to read, hidden, outside the namespace), or undefined. */
  blindSpot: string | undefined;
  /** Processes whose descriptors could not be read (not ours): pipe ends they hold are invisible. */
  uninspected: number;
  processes: number;
  fdsSeen: number;
  /** In a container: processes outside it (and the pipe ends they hold) are invisible. */
  nestedPidNamespace: boolean;
  /**
   * Trees left out because a process of theirs is in the caller's own session (judged all the
   * same, so the user can be told they exist); zero when the caller asked for them.
   */
  ownSession: { leaked: LeakedTree[]; unknown: LeakedTree[] };
}

/** Who is calling: processes this scan must never judge, whatever they look like. */
export interface Caller {
  pid: number;
  /** undefined where the platform has no uids; 0 is root, which may judge anyone's processes. */
  uid: number | undefined;
  sid: number;
  ancestors: ReadonlySet<number>;
  /**
   * The caller's own session is never judged unless this is false (--include-own-session): a
   * CLI agent that crashed in the user's own terminal leaves its trees there.
   */
  sparesOwnSession?: boolean;
}

export function currentCaller(stats: ReadonlyMap<number, ProcStat>, sparesOwnSession = true): Caller {
  const ancestors = new Set<number>();
  let at = stats.get(process.pid)?.ppid;
  while (at !== undefined && at > 0 && !ancestors.has(at)) {
    ancestors.add(at);
    at = stats.get(at)?.ppid;
  }
  return { pid: process.pid, uid: process.getuid?.(), sid: stats.get(process.pid)?.sid ?? -1, ancestors, sparesOwnSession };
}

/** A process's argument vector (undefined when gone or a kernel thread), as one scan reads it. */
type CommandLines = (pid: number) => string[] | undefined;

/**
 * Command lines read at most once per scan: one process is asked about up to four times (as a
 * parent, as a candidate, as a possible supervisor, as a tree member), each a procfs open and read.
 */
function commandLinesOnce(): CommandLines {
  const cache = new Map<number, string[] | undefined>();
  return (pid) => {
    if (cache.has(pid)) return cache.get(pid);
    const argv = readCommandLine(pid);
    cache.set(pid, argv);
    return argv;
  };
}

function commandText(pid: number, stat: ProcStat | undefined, argvOf: CommandLines): string {
  const argv = argvOf(pid);
  if (argv) return argv.join(' ');
  return stat ? `[${pid}]` : '?';
}

/**
 * Whether a process is a per-user service manager (`systemd --user`): the subreaper that adopts
 * a desktop session's orphans.
 */
function isUserManager(pid: number, argvOf: CommandLines): boolean {
  const argv = argvOf(pid);
  return argv !== undefined && /(^|\/)systemd$/.test(argv[0]!) && argv.includes('--user');
}

/**
 * Orphaned: the parent is init, or a subreaper it was handed to. A process that is not a
 * session leader was forked inside its session (fork keeps the session, setsid makes the
 * caller its leader), so a parent in another session did not fork it: it adopted it. A session
 * leader carries no such evidence; it counts as orphaned only under init or `systemd --user`.
 */
function isOrphaned(stat: ProcStat, stats: ReadonlyMap<number, ProcStat>, argvOf: CommandLines): boolean {
  if (stat.ppid === 1) return true;
  const parent = stats.get(stat.ppid);
  if (parent === undefined) return false;
  if (stat.pid !== stat.sid) return parent.sid !== stat.sid;
  return isUserManager(parent.pid, argvOf);
}

/** Never judged, never signalled: pid 1, the caller, its ancestors and (unless asked) session, other users'. */
export function isProtected(stat: ProcStat, caller: Caller): boolean {
  if (stat.pid <= 1 || stat.pid === caller.pid || caller.ancestors.has(stat.pid)) return true;
  if (stat.sid === caller.sid && caller.sparesOwnSession !== false) return true;
  if (caller.uid !== undefined && caller.uid !== 0 && processUid(stat.pid) !== caller.uid) return true;
  return false;
}

/** A stdio descriptor that links the process to someone: an anonymous pipe or a unix socket. */
type Channel = { kind: 'pipe'; inode: number } | { kind: 'socket'; inode: number };

interface Candidate {
  stat: ProcStat;
  stdin?: Channel;
  stdout?: Channel;
  stderr?: Channel;
  token?: string;
}

function channelOf(target: string | undefined, sockets: Map<number, UnixSocketInfo> | undefined): Channel | undefined {
  const pipe = pipeInode(target);
  if (pipe !== undefined) return { kind: 'pipe', inode: pipe };
  const socket = socketInode(target);
  // Only connected stream sockets have a far end to lose; without sock_diag we cannot tell.
  if (socket !== undefined && sockets?.get(socket)?.connected) return { kind: 'socket', inode: socket };
  return undefined;
}

/**
 * The token a death supervisor guards, when `pid` is one: its argv holds `--owner-token T` (or
 * `--owner-token=T`), whatever runs it (`node --v8-pool-size=0 .../supervisor.cjs`, Electron,
 * Bun, `deno run`, a LEASH_SUPERVISOR_FILE copy, `leash supervise`). A process that itself carries
 * LEASH_OWNER_TOKEN=T is one of the owned (supervisors start with a scrubbed environment), so its
 * argv is no evidence.
 */
function supervisorToken(pid: number, argvOf: CommandLines): string | undefined {
  const argv = argvOf(pid);
  if (!argv) return undefined;
  let token: string | undefined;
  for (let at = 0; at < argv.length && token === undefined; at += 1) {
    if (argv[at] === '--owner-token') token = argv[at + 1] || undefined;
    else if (argv[at]!.startsWith('--owner-token=')) token = argv[at]!.slice('--owner-token='.length) || undefined;
  }
  if (token === undefined || readEnvironVariable(pid, OWNER_TOKEN_VARIABLE) === token) return undefined;
  return token;
}

/**
 * Tokens of every live death supervisor. The token in an environment is never taken as a sign of
 * a live owner: the library gives it only to children, and leaked processes carry it themselves.
 * Erring here only spares a tree; it never ends one.
 */
function liveSupervisorTokens(stats: Iterable<ProcStat>, argvOf: CommandLines): Set<string> {
  const tokens = new Set<string>();
  for (const stat of stats) {
    if (isDeadState(stat.state)) continue;
    const token = supervisorToken(stat.pid, argvOf);
    if (token !== undefined) tokens.add(token);
  }
  return tokens;
}

/**
 * Who is left at the far end of a channel: for a socket, a peer socket that still exists (the
 * kernel names it 0 once closed); for a pipe, a holder of the other end (`end`) the scan saw.
 * 'none' needs proof: every process that could hold the pipe was read (`accounted`), or else
 * the kernel itself, asked through the holder's descriptor (pipe-probe), says no one holds it.
 */
type FarEndOf = (pid: number, fd: number, channel: Channel, end: 'readers' | 'writers') => FarEnd;

function farEndJudge(
  holders: Map<number, PipeHolders>,
  sockets: Map<number, UnixSocketInfo> | undefined,
  accounted: (inode: number) => boolean,
): FarEndOf {
  return (pid, fd, channel, end) => {
    if (channel.kind === 'socket') return (sockets?.get(channel.inode)?.peer ?? 1) !== 0 ? 'some' : 'none';
    if ((holders.get(channel.inode)?.[end].length ?? 0) > 0) return 'some';
    if (accounted(channel.inode)) return 'none';
    return end === 'writers' ? probePipeWriters(pid, fd, channel.inode) : probePipeReaders(pid, fd, channel.inode);
  };
}

interface Verdict {
  leaked: boolean;
  reasons: LeakReason[];
  unproven: LeakReason[];
}

/**
 * Why `candidate` is cut off, or undefined when it is not (its stdin still has a writer, or its
 * owner lives). A far end that may be held where the scan cannot look makes its sign unproven.
 */
function judge(candidate: Candidate, farEnd: FarEndOf, supervisors: Set<string>): Verdict | undefined {
  // A token whose supervisor runs: its owner lives and answers for it (a helper inside a live
  // `leash run`, or under a live owner-library client), however cut off its own streams are.
  if (candidate.token !== undefined && supervisors.has(candidate.token)) return undefined;
  const pid = candidate.stat.pid;
  const reasons: LeakReason[] = [];
  const unproven: LeakReason[] = [];
  if (candidate.stdin !== undefined) {
    const writers = farEnd(pid, 0, candidate.stdin, 'writers');
    // A live writer means someone may still talk to it: never ours to judge.
    if (writers === 'some') return undefined;
    (writers === 'none' ? reasons : unproven).push('stdin-no-writer');
  }
  const output = (fd: number, channel: Channel, reason: LeakReason) => {
    const readers = farEnd(pid, fd, channel, 'readers');
    if (readers !== 'some') (readers === 'none' ? reasons : unproven).push(reason);
  };
  if (candidate.stdout !== undefined) output(1, candidate.stdout, 'stdout-no-reader');
  if (candidate.stderr !== undefined && candidate.stderr.inode !== candidate.stdout?.inode) output(2, candidate.stderr, 'stderr-no-reader');
  if (candidate.token !== undefined) reasons.push('owner-gone');
  // A stdin that may still be fed outweighs every other sign: the process may be in use.
  if (unproven.includes('stdin-no-writer')) return { leaked: false, reasons, unproven };
  if (reasons.length > 0) return { leaked: true, reasons, unproven };
  return unproven.length > 0 ? { leaked: false, reasons, unproven } : undefined;
}

/** Passes over newcomers after the first full one: a writer that hops on every pass is not caught. */
const HOLDER_PASSES = 5;

/**
 * Every holder of `inodes`. The pids are listed afresh (a holder forked since the stat snapshot
 * counts), then again after each pass: a holder that hands its end to a child it forks and exits
 * (a daemonising writer) does so while its descriptors wait their turn, and the child is not in
 * the list the pass began with. Each later pass reads only the pids not read before.
 */
function scanHoldersWithNewcomers(inodes: ReadonlySet<number>): PipeHolderScan {
  const merged: PipeHolderScan = { holders: new Map(), denied: [], unsure: new Set(), fdsSeen: 0 };
  for (const inode of inodes) merged.holders.set(inode, { readers: [], writers: [] });
  const read = new Set<number>();
  for (let pass = 0; pass < HOLDER_PASSES; pass += 1) {
    const fresh = listPids().filter((pid) => !read.has(pid));
    if (fresh.length === 0) break;
    for (const pid of fresh) read.add(pid);
    const scan = scanPipeHolders(inodes, fresh);
    for (const [inode, found] of scan.holders) {
      const entry = merged.holders.get(inode)!;
      entry.readers.push(...found.readers);
      entry.writers.push(...found.writers);
    }
    merged.denied.push(...scan.denied);
    for (const inode of scan.unsure) merged.unsure.add(inode);
    merged.fdsSeen += scan.fdsSeen;
  }
  return merged;
}

/**
 * One scan of the machine. Cost: a stat read per process, three fd links per orphaned
 * process, then (only when some orphan has a stdio pipe) one readlink per descriptor on the
 * machine to find who holds those pipes. `sockets` is the sock_diag table (readUnixSockets);
 * without it, stdio sockets are not judged.
 */
export function scanLeakedTrees(sockets?: Map<number, UnixSocketInfo>, caller?: Caller, includeOwnSession = false): ScanResult {
  const all = scanAllStats();
  const stats = new Map(all.map((stat) => [stat.pid, stat]));
  const byParent = childrenByParent(all);
  const who = caller ?? currentCaller(stats, !includeOwnSession);
  // Trees in the caller's session are judged as any other, then set apart unless asked for.
  const judged: Caller = { ...who, sparesOwnSession: false };
  const spared = who.sparesOwnSession !== false;
  const inOwnSession = (tree: LeakedTree) => tree.members.some((member) => stats.get(member.pid)?.sid === who.sid);

  const candidates: Candidate[] = [];
  const inodes = new Set<number>();
  const argvOf = commandLinesOnce();
  for (const stat of all) {
    if (isDeadState(stat.state) || !isOrphaned(stat, stats, argvOf) || isProtected(stat, judged)) continue;
    // In the cgroup of a live `leash run` (contained: no owner token): its owner answers for it.
    if (liveRunHolding(stat.pid) !== undefined) continue;
    const stdinTarget = readFdTarget(stat.pid, 0);
    if (isTerminalTarget(stdinTarget)) continue;
    const candidate: Candidate = {
      stat,
      stdin: channelOf(stdinTarget, sockets),
      stdout: channelOf(readFdTarget(stat.pid, 1), sockets),
      stderr: channelOf(readFdTarget(stat.pid, 2), sockets),
      token: readEnvironVariable(stat.pid, OWNER_TOKEN_VARIABLE),
    };
    if (candidate.stdin === undefined && candidate.stdout === undefined && candidate.stderr === undefined && candidate.token === undefined) continue;
    // A death supervisor whose owner died is orphaned and cut off by design: it is at work (the
    // grace, then SIGKILL) and leaves by itself. Ending it would spare what it was about to kill.
    if (supervisorToken(stat.pid, argvOf) !== undefined) continue;
    for (const channel of [candidate.stdin, candidate.stdout, candidate.stderr]) {
      if (channel?.kind === 'pipe') inodes.add(channel.inode);
    }
    candidates.push(candidate);
  }

  const scan: PipeHolderScan =
    inodes.size > 0 ? scanHoldersWithNewcomers(inodes) : { holders: new Map(), denied: [], unsure: new Set(), fdsSeen: 0 };
  const supervisors = candidates.some((c) => c.token !== undefined) ? liveSupervisorTokens(all, argvOf) : new Set<string>();

  // "No holder seen" proves "no holder" only if every process that could hold a pipe was read.
  const hidden = inodes.size > 0 ? partialProcessView() : undefined;
  const blindSpot =
    scan.denied.length > 0
      ? `${scan.denied.length} process${scan.denied.length === 1 ? '' : 'es'} whose descriptors are not ours to read${hidden ? `, and ${hidden}` : ''}`
      : hidden;
  const farEnd = farEndJudge(scan.holders, sockets, (inode) => blindSpot === undefined && !scan.unsure.has(inode));

  const tops = new Map<number, Verdict>();
  for (const candidate of candidates) {
    const verdict = judge(candidate, farEnd, supervisors);
    if (verdict) tops.set(candidate.stat.pid, verdict);
  }

  const uptime = readUptimeSeconds() ?? 0;
  const trees: LeakedTree[] = [];
  const unknown: LeakedTree[] = [];
  for (const [pid, verdict] of tops) {
    const top = stats.get(pid)!;
    // A top below another top (adopted by a subreaper inside a leaked tree) is part of that tree.
    // A leaked top below an unknown one stands on its own: it is proven, the tree above is not.
    let above = stats.get(top.ppid);
    let nested = false;
    for (let hops = 0; above && hops < 4096; hops += 1) {
      // A top in the caller's session, when set apart, holds nothing that is listed.
      const over = spared && above.sid === who.sid ? undefined : tops.get(above.pid);
      if (over && (over.leaked || !verdict.leaked)) {
        nested = true;
        break;
      }
      above = stats.get(above.ppid);
    }
    if (nested) continue;
    // An unknown tree stops where a leaked tree that stands on its own begins: each process is
    // listed, counted and ended once.
    const standsAlone = verdict.leaked ? undefined : (stat: ProcStat) => stat.pid !== pid && tops.get(stat.pid)?.leaked === true;
    const members = collectMembers(top, byParent, judged, argvOf, standsAlone);
    if (!members) continue;
    (verdict.leaked ? trees : unknown).push({
      pid,
      startTime: top.startTime,
      command: members[0]!.command,
      ageSeconds: Math.max(0, Math.round(uptime - top.startTime / CLOCK_TICKS_PER_SECOND)),
      parent: { pid: top.ppid, command: commandText(top.ppid, stats.get(top.ppid), argvOf) },
      reasons: verdict.reasons,
      unproven: verdict.unproven,
      members,
      rssKb: members.reduce((sum, member) => sum + member.rssKb, 0),
    });
  }
  const bySize = (a: LeakedTree, b: LeakedTree) => b.rssKb - a.rssKb || a.pid - b.pid;
  trees.sort(bySize);
  unknown.sort(bySize);
  return {
    trees: spared ? trees.filter((tree) => !inOwnSession(tree)) : trees,
    unknown: spared ? unknown.filter((tree) => !inOwnSession(tree)) : unknown,
    ownSession: {
      leaked: spared ? trees.filter(inOwnSession) : [],
      unknown: spared ? unknown.filter(inOwnSession) : [],
    },
    blindSpot,
    uninspected: scan.denied.length,
    processes: all.length,
    fdsSeen: scan.fdsSeen,
    nestedPidNamespace: inNestedPidNamespace(),
  };
}

/**
 * The top and its descendants, but for the subtrees of those `skip` names; undefined when any of
 * them is protected or on a terminal.
 */
function collectMembers(top: ProcStat, byParent: Map<number, ProcStat[]>, caller: Caller, argvOf: CommandLines, skip?: (stat: ProcStat) => boolean): TreeMember[] | undefined {
  const members: TreeMember[] = [];
  const pending = [top];
  const seen = new Set<number>();
  while (pending.length > 0) {
    const stat = pending.shift()!;
    if (seen.has(stat.pid)) continue;
    seen.add(stat.pid);
    if (isDeadState(stat.state) || skip?.(stat)) continue;
    if (isProtected(stat, caller) && stat.pid !== top.pid) return undefined;
    if (stat.pid !== top.pid && isTerminalTarget(readFdTarget(stat.pid, 0))) return undefined;
    members.push({
      pid: stat.pid,
      startTime: stat.startTime,
      command: commandText(stat.pid, stat, argvOf),
      rssKb: readResidentKb(stat.pid) ?? 0,
    });
    pending.push(...(byParent.get(stat.pid) ?? []));
  }
  return members;
}
