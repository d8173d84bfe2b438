// Help texts of the `leash` command, one per subcommand (`leash check` keeps its own, next to its
// options). They go to stdout with exit 0 when asked for; usage errors print the one-line usage.
import { readFileSync } from 'node:fs';

/** The installed package's manifest: its name and version. */
export function packageInfo(): { name: string; version: string } {
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
  return { name: String(manifest.name), version: String(manifest.version) };
}

export const MAIN_HELP = `usage: leash <command> [options]

commands:
  run [options] -- COMMAND [ARG...]   run COMMAND and own its whole process tree (Linux subreaper)
  status [--json] [--] [FILE]         show the state document of a \`leash run\`
  reap [options]                      list (or, with --kill, end) stdio servers other clients leaked
  check [options] [PATH...]           find detached spawns in Python and JS/TS code (proc-leash-check)
  mcp install|status [options]        wrap the stdio servers of MCP client configs in leash run
  supervise --parent-pgid PGID ...    the per-owner death supervisor (started by the library)
  help [COMMAND]                      this text, or a command's (also: leash COMMAND --help)

options:
  -h, --help                          this text
  -V, --version                       the version

exit: each command documents its own (leash COMMAND --help); 64 usage; 70 an internal error, a
bug to report (never a command's answer).

The owner library is the package's import: import { spawnOwned } from 'proc-leash'.
`;

export const RUN_HELP = `usage: leash run [OPTION...] [--] COMMAND [ARG...]

Runs COMMAND in a new session and owns its whole process tree (Linux: a child subreaper that adopts
and reaps every orphan). The tree is taken down — SIGTERM, the grace, SIGKILL — when leash gets
SIGTERM/SIGINT/SIGHUP/SIGQUIT (SIGABRT/SIGTRAP/SIGSYS/SIGXCPU too, the tree getting SIGTERM), when
COMMAND exits leaving descendants, or, with --die-with-parent, when leash's parent dies or its stdin
has no writer left. SIGTSTP suspends the tree with leash; every other catchable signal goes to
COMMAND (the table: docs/run.md). leash exits with COMMAND's status (128+n for signal n).
The first word that is not an option starts COMMAND; -- is needed only before a COMMAND that
starts with -.

options:
  --grace TIME         between SIGTERM and SIGKILL: 5, 5s, 500ms, 1.5s, 2m; 50ms to 10m (default 10s;
                       out of range is a usage error)
  --state FILE         keep a JSON state document there (see leash status)
  --die-with-parent    take the tree down when leash's parent dies, SIGKILL included, or when
                       stdin is a pipe or socket with no writer left (the client closed it or
                       died, even behind npx, npm exec, uvx or sh -c): COMMAND first has the
                       grace to exit on EOF by itself, then SIGTERM, the grace, SIGKILL
  --no-stdin-watch     with --die-with-parent: watch the parent only, not stdin
  --parent-death-signal SIG
                       with --die-with-parent: the tree gets SIG (TERM, INT, HUP, 9, ...) instead of
                       SIGTERM when the parent or client is gone; SIGKILL still follows the grace
  --ignore-hangup      SIGHUP neither stops leash nor reaches the tree (what nohup cannot do for a
                       Node program: see docs/run.md)
  --keep-terminal      COMMAND stays in leash's session and process group, keeping the terminal
                       (prompts on /dev/tty work; the terminal's Ctrl-C reaches it directly);
                       costs: its group is signalled member by member, not as a group (Linux only)
  -q, --quiet          no phase lines on stderr; warnings and errors are still written
  -h, --help           this text

environment:
  LEASH_GRACE_SECONDS  the grace when --grace is not given, same syntax (a bare number is seconds);
                       empty means unset; a bad or out-of-range value is ignored with a warning
  LEASH_STATE_PATH     the state document when --state is not given

Without --keep-terminal, COMMAND gets no controlling terminal (it leads a new session): programs
that prompt on /dev/tty cannot. Its stdin, stdout and stderr are leash's own either way; leash
never reads stdin.

exit: COMMAND's status; 64 usage, 126 not executable, 127 not found, 1 --die-with-parent and the
parent already gone (COMMAND not started), 128+n a stop signal n before COMMAND started.
`;

export const STATUS_HELP = `usage: leash status [--json] [--] [FILE]

Shows the state document a \`leash run --state FILE\` keeps, and whether the leash run that wrote it
still runs. FILE defaults to $LEASH_STATE_PATH; a FILE of - is read from stdin.

options:
  --json               the document itself, as JSON
  --                   what follows is FILE, even a name that starts with -
  -h, --help           this text

exit: 0 shown, 64 usage, 65 not a state document, 66 unreadable, 69 stale (the leash run that
wrote it died without finishing; still shown).
`;

export const SUPERVISE_HELP = `usage: leash supervise --parent-pgid PGID [--grace-ms MS] [--owner-token TOKEN] [--max-groups N]

The per-owner death supervisor. The owner library starts it; run it yourself only to build another
owner library. It reads control lines on stdin (register, unregister, disown, release) and at EOF
takes every registered group down: SIGTERM, the grace (default 3000 ms), SIGKILL.

exit: 0 EOF handled, 2 started inside the parent's process group, 64 usage.
`;

/** Help by command name; `check`, `reap` and `mcp` answer --help themselves. */
export const HELP: Record<string, string> = { run: RUN_HELP, status: STATUS_HELP, supervise: SUPERVISE_HELP };

/** Whether argv asks for help: -h/--help before any `--` (after it, the words are COMMAND's). */
export function asksForHelp(argv: readonly string[], commandFollows?: { valueOptions: readonly string[] }): boolean {
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--') return false;
    if (arg === '-h' || arg === '--help') return true;
    // `leash run`: the first word that is not an option starts the command, whose --help it is.
    if (commandFollows) {
      if (commandFollows.valueOptions.includes(arg)) i += 1;
      else if (!arg.startsWith('-') || arg === '-') return false;
    }
  }
  return false;
}
