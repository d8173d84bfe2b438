// What a stop says it ended: each process sent a signal named once per signal, on stderr (a few)
// and in the record beside the state document (RECORD_LIMIT), whichever containment reached it.
import { isDeadState, type ProcStat } from '../sys/procfs.js';
import { CommandCache, commandOf, EndedRecord, LINE_LIMIT, nameProcesses, RECORD_LIMIT } from './ended.js';

/** Members a signal is about to reach, the first few read (pid, command line), the rest counted. */
export interface PreparedNames {
  signal: NodeJS.Signals;
  read: Array<{ pid: number; command: string }>;
  unlisted: number;
}

export class StopNames {
  readonly commands = new CommandCache();
  private readonly ended: EndedRecord;
  /** signal:pid:start of the processes already named as sent that signal. */
  private readonly named = new Set<string>();
  /**
   * Per signal, the pids already named or counted as sent it, for members known by pid alone
   * (a cgroup's list): most are never read; a pid reused inside the cgroup during the stop goes unnamed.
   */
  private readonly namedPids = new Map<NodeJS.Signals, Set<number>>();

  constructor(
    private readonly statePath: string | undefined,
    private readonly log: (line: string) => void,
    /** Whether `pid` is the runner that exited by itself: leash did not end it. */
    private readonly endedByItself: (pid: number, signal: NodeJS.Signals) => boolean,
  ) {
    this.ended = new EndedRecord(statePath, (message) => log(`warning: ${message}`));
  }

  /** Names the live ones of `stats` (read by a walk, their command lines cached) just sent `signal`. */
  nameStats(stats: Iterable<ProcStat>, signal: NodeJS.Signals, where = ''): void {
    const live = [...stats].filter((stat) => !isDeadState(stat.state) &&
      !this.endedByItself(stat.pid, signal) &&
      !this.named.has(`${signal}:${stat.pid}:${stat.startTime}`));
    if (live.length === 0) return;
    for (const stat of live) this.named.add(`${signal}:${stat.pid}:${stat.startTime}`);
    const { named, total } = this.ended.add(live, signal, (stat) => this.commands.commandFor(stat));
    this.say(signal, named, total, where);
  }

  /**
   * Before a signal to members known by pid: those not yet named for it, the first few read now
   * (a process has no command line once it dies), the others only counted. Only what is shown is
   * read: the stderr line's names, or with a state document the record's. Reading all of a
   * 200-process tree (stat and command line) before the signal delayed it by 20-45 ms at load 13.
   */
  prepare(signal: NodeJS.Signals, pids: readonly number[]): PreparedNames {
    let done = this.namedPids.get(signal);
    if (!done) this.namedPids.set(signal, (done = new Set()));
    const limit = this.statePath === undefined ? LINE_LIMIT : RECORD_LIMIT;
    const read: PreparedNames['read'] = [];
    let unlisted = 0;
    for (const pid of pids) {
      if (done.has(pid)) continue;
      done.add(pid);
      if (this.endedByItself(pid, signal)) continue;
      if (read.length >= limit) {
        unlisted += 1;
        continue;
      }
      // The command line alone (one read, not two, before the signal): a zombie has none.
      const command = commandOf(pid);
      if (command !== undefined) read.push({ pid, command });
    }
    return { signal, read, unlisted };
  }

  /** After the signal: says what prepare() found. */
  logPrepared({ signal, read, unlisted }: PreparedNames): void {
    if (read.length === 0 && unlisted === 0) return;
    const { named, total } = this.ended.add(read, signal, (entry) => entry.command, unlisted);
    this.say(signal, named, total, '');
  }

  private say(signal: NodeJS.Signals, named: Parameters<typeof nameProcesses>[0], total: number, where: string): void {
    this.log(`${signal === 'SIGKILL' ? 'killed' : 'ending'} ${total} process${total === 1 ? '' : 'es'}${where} with ${signal}: ${nameProcesses(named, total)}`);
  }
}
