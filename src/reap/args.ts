// `leash reap` command line: flags, durations ("90s", "2h") and sizes ("100M", "1.5GiB").

import { describeRange, parseGrace, REAP_GRACE } from '../config/grace.js';
export const REAP_USAGE =
  'usage: leash reap [--json] [--match REGEX] [--older-than DURATION] [--min-memory SIZE] [--include-unknown] [--include-own-session] [--kill [--grace DURATION]]';

/** What `leash reap --help` (and `leash help reap`) prints. */
export const REAP_HELP = `${REAP_USAGE}

Lists process trees other clients leaked (Linux): an orphaned top process (parent init or a
subreaper) whose stdin has no writer left (pipe) or no peer (unix socket), whose stdout or stderr
has no reader, or which carries a leash owner token whose supervisor is gone. Largest first, with a
total. Never listed or signalled: pid 1, the caller's ancestors and session (unless
--include-own-session; trees there are counted and the count is printed), other users' processes
unless root, anything whose stdin is a terminal or still has a writer. A tree whose pipe ends may
be held by a process reap cannot look at (another user's, hidden by hidepid, outside a container)
is unknown, not leaked: shown apart, never ended unless --include-unknown says so.

options:
  --json                 one JSON document instead of the table
  --match REGEX          only trees whose top process's command line matches
  --older-than DURATION  only trees whose top has run at least that long (90s, 5m, 2h, 1d)
  --min-memory SIZE      only trees with at least that much resident memory (512K, 100M, 1.5G)
  --include-unknown      count unknown trees as leaked: list them with the rest and, with
                         --kill, end them (a process reap cannot see may still feed them)
  --include-own-session  also list (and with --kill, end) trees in this terminal's own session,
                         as a CLI agent that crashed in it leaves them; never this process or
                         its ancestors
  --kill                 end the listed trees: SIGTERM, the grace, SIGKILL, each target's
                         identity (pidfd, start time) proven right before each signal
  --grace TIME           between SIGTERM and SIGKILL: 5, 5s, 500ms, 1.5s, 2m (default 5s, at most 10m)
  -h, --help             this text

Containers too: every container carrying a leash run label (proc-leash.run, added by
\`leash run -- docker run ...\`) whose run is gone (this host's label only), as the docker, podman
and nerdctl CLIs on PATH see them with this environment (LEASH_CONTAINER_CLIS narrows the list).
--match reads their name and image; --kill stops them (\`stop -t\` with the grace).

List first, then --kill with the same filters: a daemon that never redirected its stdio
looks like a leak.

exit codes: 0 nothing found, 1 leaked trees found (with --kill: all ended), 2 --kill left
something running, 64 bad flags, 69 not supported here (needs Linux /proc).
`;

export const DEFAULT_GRACE_MS = REAP_GRACE.fallback * 1000;

export interface ReapArguments {
  json: boolean;
  kill: boolean;
  includeUnknown: boolean;
  includeOwnSession: boolean;
  graceMs: number;
  match?: RegExp;
  olderThanSeconds?: number;
  minMemoryKb?: number;
  help: boolean;
}

const DURATION_UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** Seconds from "500ms", "90s", "5m", "2h", "1d" or a bare number of seconds. */
export function parseDuration(text: string): number | undefined {
  const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * DURATION_UNITS[match[2] ?? 's']!;
}

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** kB from "512K", "100M", "1.5G", "2GiB", "300MB" (binary multiples) or a bare number of bytes. */
export function parseSizeKb(text: string): number | undefined {
  const match = /^([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(text.trim());
  if (!match) return undefined;
  return (Number(match[1]) * SIZE_UNITS[match[2]!.toLowerCase()]!) / 1024;
}

/** Parses the flags; a string is the usage error to print. */
export function parseReapArgs(argv: readonly string[]): ReapArguments | string {
  const parsed: ReapArguments = { json: false, kill: false, includeUnknown: false, includeOwnSession: false, graceMs: DEFAULT_GRACE_MS, help: false };
  // A value flag given twice is refused: the second --match replacing the first would widen --kill.
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    // A flag that takes no value must not quietly drop one: `--kill=no` would kill.
    const bare = (): string | undefined => (inline === undefined ? undefined : `${flag} takes no value, not '${arg}'`);
    const value = (): string | undefined => {
      if (inline !== undefined) return inline;
      i += 1;
      return argv[i];
    };
    if (flag === '--match' || flag === '--older-than' || flag === '--min-memory' || flag === '--grace') {
      if (given.has(flag)) return `${flag} given twice (give one; a regex can say a|b)`;
      given.add(flag);
      if (flag !== '--match' && inline === undefined && i + 1 >= argv.length) return `${flag} needs a value`;
    }
    switch (flag) {
      case '--json':
      case '--kill':
      case '--include-unknown':
      case '--include-own-session':
      case '--help':
      case '-h': {
        const refused = bare();
        if (refused) return refused;
        if (flag === '--json') parsed.json = true;
        else if (flag === '--kill') parsed.kill = true;
        else if (flag === '--include-unknown') parsed.includeUnknown = true;
        else if (flag === '--include-own-session') parsed.includeOwnSession = true;
        else parsed.help = true;
        break;
      }
      case '--match': {
        const text = value();
        if (text === undefined || text === '') return '--match needs a regular expression';
        try {
          parsed.match = new RegExp(text);
        } catch (error) {
          return `--match: ${(error as Error).message}`;
        }
        break;
      }
      case '--grace': {
        // The one grace syntax (src/config/grace.ts), shared with leash run and the variables.
        const text = value() ?? '';
        const seconds = parseGrace(text, REAP_GRACE);
        if (seconds === undefined) return `--grace takes ${describeRange(REAP_GRACE)}, not '${text}'`;
        parsed.graceMs = Math.round(seconds * 1000);
        break;
      }
      case '--older-than': {
        const text = value();
        const seconds = text === undefined ? undefined : parseDuration(text);
        if (seconds === undefined) return `${flag} takes a duration such as 90s, 5m, 2h or 1d, not '${text ?? ''}'`;
        parsed.olderThanSeconds = seconds;
        break;
      }
      case '--min-memory': {
        const text = value();
        const kb = text === undefined ? undefined : parseSizeKb(text);
        if (kb === undefined) return `--min-memory takes a size such as 512K, 100M or 1.5G, not '${text ?? ''}'`;
        parsed.minMemoryKb = kb;
        break;
      }
      default:
        return `unknown argument '${arg}'`;
    }
  }
  // Accepted alone, it would read as if a kill were coming.
  if (given.has('--grace') && !parsed.kill) return '--grace applies only with --kill (it is the time between SIGTERM and SIGKILL)';
  return parsed;
}
