// Literal shell command text that starts a process in the background, where it outlives whoever
// ran the shell. Used by both language analysers on string literals handed to a spawn or shell call.
import { StringScan } from './string-scan.js';
import type { Language } from './types.js';

/**
 * What a value that is not a literal reads as in command text built around it (`"nohup %s &" %
 * cmd`, `'nohup ' + bin + ' &'`, a template's substitution): a character of its own, which ends a
 * program's name like a blank does but is no blank to a `&` (`base + "?" + a + "&" + b` is a URL,
 * not a background job). From Unicode's private use area, so no source text means it.
 */
export const VALUE_MARK = '\uE000';
/**
 * Whether an expression in an argument list that is not a literal may hold options (`opts`,
 * `extra_args`, `self.mount_flags`, `cmd`) rather than one positional value (`remote`,
 * `self.mountpoint`, `args.target`, `str(port)`): in a program's list (`["sshfs", remote, mnt]`)
 * the others read as values (VALUE_MARK), so a program that leaves unless told to stay is read
 * with them, while a name that may hold its foreground flag keeps the list unknown from there on.
 * Read by whole words of the name's last part (`target` is no `arg`, `model` no `mode`).
 */
const OPTION_WORDS = /^(?:opts?|options?|args?|argv|arguments?|flags?|params?|parameters?|extras?|switch(?:es)?|modes?|fg|foreground|daemon\w*|detach\w*|cmds?|commands?|rest|more|kw|kwargs)$/i;
/** Whether an expression's name (split at `_` and case changes) may hold options; a splat always may. */
export function mayHoldOptions(text: string): boolean {
  if (text.includes('*') || text.startsWith('...')) return true;
  // A member's last part (`args.target` is a value); every part of what a call is made on
  // (`self.options.get(k)` may be options).
  const parts = text.replace(/\([^()]*\)|\[[^\[\]]*\]/g, '').split('.');
  const read = text.includes('(') ? parts : parts.slice(-1);
  return read.some((part) => part.split(/_+|(?<=[a-z0-9])(?=[A-Z])/).some((word) => OPTION_WORDS.test(word)));
}
/**
 * A project's own command runner, by its name (ganeti's `utils.RunCmd`, a `run_command` or
 * `spawnLog` helper): what it is handed is a command, in both analysers. Not `exec_command`
 * (paramiko's runs its text on another host).
 */
export const PROJECT_RUNNER_NAMES = String.raw`RunCmd|runCmd|run_cmd|run_command|runCommand|execCmd|exec_cmd|spawnLog|spawn_log`;
/** What may come right before a program's name: the start, a blank, an operator, a quote, a value. */
const BEFORE = String.raw`(?:^|[\s;&|(\`'"\uE000])`;
/** A program named by its path in a directory of programs: `/usr/bin/setsid`, `/sbin/start-stop-daemon`. */
const BIN = String.raw`(?:(?:/opt/homebrew|/usr/local|/usr)?/s?bin/)?`;
const command = (name: string, rest: string, flags = '') => new RegExp(`${BEFORE}${BIN}${name}${rest}`, flags);

/** Start-Process's -Wait and -NoNewWindow, either order, on the same command, with no RunAs verb. */
const WAITED_IN_CONSOLE = String.raw`(?![^;&|\n]{0,500}?\bRunAs\b)(?=[^;&|\n]{0,500}?\s-Wait(?=[\s;&|"']|$))(?=[^;&|\n]{0,500}?\s-NoNewWindow(?=[\s;&|"']|$))`;
/**
 * Whether an argument list's words run Start-Process waited for in the caller's console (`['-NoProfile',
 * 'Start-Process', exe, '-Wait', '-NoNewWindow']`): its `Start-Process` element is then no finding.
 */
export function startProcessWaitedInConsole(words: ReadonlyArray<string | undefined>): boolean {
  const lower = words.map((word) => word?.toLowerCase());
  return lower.some((word) => word !== undefined && /^start-process\b/.test(word)) && lower.includes('-wait') && lower.includes('-nonewwindow') && !lower.some((word) => word !== undefined && /\brunas\b/.test(word));
}

// The spans between a command's words are bounded ({0,500}): with `*`, each occurrence of a name
// scanned to the end of its line, and a long string of them took quadratic time.
const BACKGROUNDING: Array<[RegExp, string]> = [
  [command('nohup', String.raw`(?:\s|$)`), 'nohup'],
  [command('setsid', String.raw`(?:\s|$)`), 'setsid'],
  [/(?:^|[\s;&|(\uE000])disown(?:\s|$|;)/, 'disown'],
  // Not with both -Wait and -NoNewWindow on its command: the program runs in the caller's console
  // and is waited for, a plain child (as cmd's `start /b /wait`); `-Verb RunAs` elevates whatever follows.
  [new RegExp(String.raw`(?:^|[\s;&|("'\uE000])Start-Process(?:\s|$)(?!${WAITED_IN_CONSOLE})`, 'i'), 'Start-Process'],
];
/**
 * The shell's "runas" verb (PowerShell's or VBScript's Shell.Application, `.ShellExecute(file,
 * args, dir, "runas")`): the program starts elevated, from the Application Information service,
 * outside the caller's tree and job. Read on the text as written: the verb is a quoted word.
 */
// VBScript's ` _` at a line's end continues the statement on the next line.
const ELEVATING_VERB = /ShellExecute(?:Ex)?\b(?:[^\n]|[ \t]_\r?\n){0,500}?["']runas["']/i;

/**
 * The same as a call's argument, after a comma (`objShell.ShellExecute "wscript.exe", args, "",
 * "runas", 1`, `ShellExecute(0, "runas", …)`): prose naming the verb (`ShellExecute with the
 * "runas" verb`) has none before it.
 */
const ELEVATING_CALL = /ShellExecute(?:Ex)?\b(?:[^\n]|[ \t]_\r?\n){0,500}?[,(][ \t]*(?:_\r?\n[ \t]*)?["']runas["']/i;

/**
 * Whether script text (VBScript, PowerShell, JScript), wherever it is written, calls the shell's
 * ShellExecute with the "runas" verb: a script written out to a file and run later (react-native's
 * elevation) elevates as surely as one handed to a shell.
 */
export function elevatingScriptIn(text: string): boolean {
  return ELEVATING_CALL.test(text);
}

/**
 * cmd's `start` (PowerShell's `Start`, an alias of Start-Process, too): it starts its program in
 * a new console (or, with `/b`, in the caller's, unwaited), and returns without waiting unless
 * told `/wait`. Read where `start` is a command: the start of the text, after `&`/`&&`/`|`/`||`,
 * or first in an inner shell's script (`cmd /c start "" x`, `cmd.exe /C "start x"`, `-Command
 * "Start x"`), with something after it. Elsewhere (`npm start`, `yarn start`, `cmd /c "npm
 * start"`, `./start`, `start.sh`, `Start-Sleep`) it is an argument or another name, except `start
 * /b` (its switch first, after a title), read anywhere as before. `start /b /wait` runs the
 * program in the caller's console and waits for it: a plain child, not reported.
 */
const START_WORD = /(?<![\w.\/\\:$-])start(?=[\s"']|$)/gi;
/** The text before a `start` that makes it a command, once the blanks, a quote or an `@` right before it are set aside. */
/**
 * PowerShell run with only its own switches before the words, which it then runs as its command
 * (`Powershell Start x.bat -Verb Runas`, `powershell -NoProfile -ExecutionPolicy Bypass Start x`):
 * as after `-Command`. The switches that take a value are followed by one.
 */
const POWERSHELL_HEAD = String.raw`(?:^|[\s;&|("'])(?:[Pp]ower[Ss]hell|pwsh)(?:\.exe)?(?:\s+-(?:(?:ExecutionPolicy|WindowStyle|Version|InputFormat|OutputFormat|ep|w)\s+[\w.]+|[A-Za-z]+))*`;
/**
 * Wine's loader running its own `start` where a command starts (`WINEPREFIX=p wine start /unix
 * game.exe`): Wine's start.exe launches the program and returns at once unless told `/wait` (then
 * it waits, and the game is no one's but the caller's), as cmd's does, so the game runs on past the wine
 * process its caller waits for (Wine's start.exe manual).
 */
const WINE_HEAD = String.raw`(?:^|[;&|(])\s*(?:exec\s+)?(?:\w+=[^\s;&|]*\s+){0,10}["']?(?:[^\s"';&|]{0,200}\/)?wine(?:64)?(?:\.exe)?["']?`;
const WINE_BEFORE = new RegExp(`${WINE_HEAD}$`);
const START_COMMAND_BEFORE = new RegExp(String.raw`(?:^|[&|]|(?:^|[\s;&|(])(?:\/[cCkK]|-[A-Za-z]*c|-[Cc]ommand)|${POWERSHELL_HEAD}|${WINE_HEAD})$`);
/** An inner shell's flag right before it: the script may be `start` alone (`cmd /c start`); or Wine's loader. */
const INNER_FLAG_BEFORE = new RegExp(String.raw`(?:(?:^|[\s;&|(])(?:\/[cCkK]|-[A-Za-z]*c|-[Cc]ommand)|${POWERSHELL_HEAD}|${WINE_HEAD})$`);
/**
 * What must come first after a `start` that begins the text or follows `&`/`|` (after an inner
 * shell's flag any word does): a title or quoted program, a switch, a value, or a file name, URL or
 * path (`start "" url`, `start /min x`, `'start ' + url`, `start app.exe`). Prose begins the same
 * way with a bare word (`"Start the server"`, `'start watch on: %s'`), and so does `start notepad`.
 */
const START_ARGUMENT = /^(?:["'\/\uE000]|[^\s"']*[.:\\\/][^\s"'])/;
/** How far after a `start` its switches and program are looked for. */
const START_WINDOW = 500;
/** start's switches that take a value as the next word. */
const START_VALUED = new Set(['/d', '/node', '/affinity', '/machine']);

/**
 * Whether `start` with these words after it (its switches, then the program) starts its program
 * away from the caller: anything but `/b` with `/wait`. `/b` and `/wait` count among the switches
 * before the program; a first word in quotes (or an empty one) is the window's title.
 */
function startSwitches(words: ReadonlyArray<string | undefined>): { b: boolean; wait: boolean; firstIsB: boolean } {
  let b = false;
  let wait = false;
  let firstIsB = false;
  for (let k = 0; k < words.length; k++) {
    const word = words[k];
    if (word === undefined) break;
    if (k === 0 && (word === '' || /^["']/.test(word))) continue; // the title
    const lower = word.toLowerCase();
    if (!lower.startsWith('/')) break;
    if (lower === '/b') {
      b = true;
      if (k === 0 || (k === 1 && (words[0] === '' || /^["']/.test(words[0] ?? '')))) firstIsB = true;
    } else if (lower === '/wait') wait = true;
    else if (START_VALUED.has(lower)) k++;
  }
  return { b, wait, firstIsB };
}

/** The `start` construct in command text (quoting already read), or undefined. */
function startIn(command: string): string | undefined {
  for (const match of command.matchAll(START_WORD)) {
    const at = match.index;
    const head = command.slice(Math.max(0, at - HEAD_WINDOW), at).replace(/[ \t]*(?:["'][ \t]*)?@?$/, '');
    const rest = command.slice(at + 5, at + 5 + START_WINDOW); // bounded: a line of many `start`s stays linear
    const end = rest.search(/[&|\n]/);
    const words = (end < 0 ? rest : rest.slice(0, end)).split(/[ \t]+/).filter(Boolean);
    const { b, wait, firstIsB } = startSwitches(words);
    if (b && wait) continue;
    if (wait && WINE_BEFORE.test(head)) continue; // Wine's start /wait waits for its program
    const inner = INNER_FLAG_BEFORE.test(head);
    const atCommand = START_COMMAND_BEFORE.test(head) && (inner || (words.length > 0 && START_ARGUMENT.test(words[0] as string)));
    if (atCommand || (firstIsB && /(?:^|[\s;&|("'\uE000])$/.test(command.slice(0, at)))) return b ? 'start /b' : 'start';
  }
  return undefined;
}

/**
 * cmd's `start` in an argument list, after cmd's `/c` or `/k` (`spawn('cmd', ['/c', 'start', '""',
 * url])`): the words are read in order, a word that is not a literal undefined. Only after the
 * flag: a lone `start` among other arguments is a script's name (`['run', 'start']`).
 */
export function startInArgv(words: ReadonlyArray<string | undefined>): string | undefined {
  for (let k = 0; k + 1 < words.length; k++) {
    // After cmd's flag, or as Wine's loader's program (`["wine", "start", "/unix", exe]`).
    const wine = k === 0 && /^(?:.*[\/\\])?wine(?:64)?(?:\.exe)?$/i.test(words[k] ?? '');
    if (!(wine || /^\/[ck]$/i.test(words[k] ?? '')) || !/^start$/i.test(words[k + 1] ?? '')) continue;
    const { b, wait } = startSwitches(words.slice(k + 2).map((word) => (word === '""' ? '' : word)));
    if (!(b && wait) && !(wine && wait)) return b ? 'start /b' : 'start';
  }
  return undefined;
}

/**
 * cmd's `start` as the first word of a list, with the empty title cmd's idiom puts first
 * (`['start', '', cmd]`, run later through a shell): that title means nothing else. The title may
 * be written quoted for a later `shlex.split` (`["start", "''"]`, xpra's open command).
 */
export function titledStartInArgv(words: ReadonlyArray<string | undefined>): string | undefined {
  if (!/^start$/i.test(words[0] ?? '') || !EMPTY_TITLES.has(words[1] ?? 'x')) return undefined;
  const { b, wait } = startSwitches(words.slice(2));
  return b && wait ? undefined : b ? 'start /b' : 'start';
}

const EMPTY_TITLES = new Set(['', '""', "''"]);

/** ssh's flags that take no value, and those that take one (`-L 80:h:80`, `-p22`). */
const SSH_PLAIN = '[46AaCGgKkMNnqsTtVvXxYy]';
const SSH_VALUED = '[BbcDEeFIiJLlmOoPpQRSWw]';

/**
 * The patterns that report a program for a flag it lacks (`twistd` without `--nodaemon`, `sshfs`
 * without `-f`, `ssh-agent` with no command), marked where each is written (`lacking`): where a
 * list's words are not all known, an unknown one may be that flag, so detachingFlagIn leaves them out.
 */
const READ_FOR_A_MISSING_FLAG = new Set<string>();
const lacking = (name: string): string => {
  READ_FOR_A_MISSING_FLAG.add(name);
  return name;
};
const CUPSD = lacking('cupsd without -f');
// Commands whose whole job is to leave their caller behind, run by name (a word at a command's
// start in shell text, or a program and its argument list joined). Each starts the program under
// another parent (systemd, a tmux or screen server) or forks it off and exits at once.
// `systemd-run --scope` too: the command stays systemd-run's own process, but in a cgroup of its
// own, which the caller's (a service's stop, `leash run`'s cgroup containment) no longer holds.
const DETACHING_COMMANDS: Array<[RegExp, string]> = [
  [command('daemonize', String.raw`(?:\s|$)`), 'daemonize'],
  // Its words decide, so it needs some: a lone 'systemd-run' in an argument list is read with the rest.
  [command('systemd-run', String.raw`\s+(?!(?:--help|-h|--version)(?:[\s;&|]|$))\S`), 'systemd-run'],
  [command('start-stop-daemon', String.raw`\s[^;&|\n]{0,500}?(?:\s-[A-Za-z]*b[A-Za-z]*|\s--background)(?=\s|$)`), 'start-stop-daemon --background'],
  [command('tmux', String.raw`(?:\s+-\S+){0,20}\s+new(?:-session)?\s(?:[^;&|\n]{0,500}\s)?-[A-Za-z]*d`), 'tmux new -d'],
  [command('screen', String.raw`\s(?:[^;&|\n]{0,500}\s)?-[A-Za-z]*(?:dm|md)`), 'screen -dm'],
  // Twisted's launcher daemonizes (fork, setsid) unless told `-n`/`--nodaemon` (alone or in a
  // cluster of short flags, `-no`): words first, then none of them anywhere in its arguments.
  [command('twistd', String.raw`(?=\s+\S)(?![^;&|\n]{0,500}?\s(?:--nodaemon|-[A-Za-z]*n[A-Za-z]*)(?=[\s;&|]|$))`), lacking('twistd without --nodaemon')],
  // Servers started with their own daemonizing option, or by a verb that leaves them running in
  // the background: each forks, leaves the caller's session and exits at once, so the caller's
  // end does not reach the server.
  [command('gunicorn', String.raw`\s[^;&|\n]{0,500}?\s(?:-D|--daemon)(?=[\s;&|]|$)`), 'gunicorn --daemon'],
  [command('celery', String.raw`\s[^;&|\n]{0,500}?\s--detach(?=[\s;&|=]|$)`), 'celery --detach'],
  [command('uwsgi', String.raw`\s[^;&|\n]{0,500}?\s--daemonize2?(?=[\s;&|=]|$)`), 'uwsgi --daemonize'],
  [command('redis-server', String.raw`\s[^;&|\n]{0,500}?\s--daemonize\s+yes(?=[\s;&|]|$)`), 'redis-server --daemonize yes'],
  [command('mongod', String.raw`\s[^;&|\n]{0,500}?\s--fork(?=[\s;&|]|$)`), 'mongod --fork'],
  [command('memcached', String.raw`\s(?:[^;&|\n]{0,500}\s)?-[A-Za-z]*d[A-Za-z]*(?=[\s;&|]|$)`), 'memcached -d'],
  [command('git', String.raw`\s+daemon\s[^;&|\n]{0,500}?--detach(?=[\s;&|]|$)`), 'git daemon --detach'],
  // pg_ctl start: postgres runs on in the background (its own session) after pg_ctl returns.
  [command('pg_ctl', String.raw`\s(?:[^;&|\n]{0,500}\s)?(?:start|restart)(?=[\s;&|]|$)`), 'pg_ctl start'],
  // Apache's control verbs: httpd daemonizes itself.
  [command('(?:apachectl|apache2ctl)', String.raw`\s(?:[^;&|\n]{0,500}\s)?(?:-k\s+)?(?:start|restart|graceful)(?=[\s;&|]|$)`), 'apachectl start'],
  [command('(?:httpd|apache2?)', String.raw`\s(?:[^;&|\n]{0,500}\s)?-k\s+(?:start|restart|graceful)(?=[\s;&|]|$)`), 'httpd -k start'],
  // CUPS's scheduler daemonizes unless told -f/-F (foreground), -l (started on demand), -t (test
  // the configuration) or -h. Only where a command starts (after an operator, sudo or exec; first,
  // with words after it, since a list's lone element `"cupsd"` is no command), not as a service's
  // name (`service cupsd restart`). An argument vector of it alone is read in detachingCommandIn.
  [new RegExp(String.raw`(?:^\s*(?=${BIN}cupsd\s+\S)|[;&|(]\s*|(?:^|\s)(?:sudo|exec)\s+)${BIN}cupsd(?=[\s;&|]|$)(?![^;&|\n]{0,500}?\s-[A-Za-z]*[fFlth][A-Za-z]*(?=[\s;&|]|$))`), CUPSD],
  // Deluge's daemon forks away unless told -d/--do-not-daemonize (as twistd without --nodaemon;
  // words first, so that the program's name alone, read as shell text, is not one).
  [command('deluged', String.raw`(?=\s+\S)(?![^;&|\n]{0,500}?\s(?:--do-not-daemonize|-[A-Za-z]*d[A-Za-z]*)(?=[\s;&|]|$))`), lacking('deluged without --do-not-daemonize')],
  // Mininet's mnexec -d calls setsid before it execs the command (its -d, alone or in a cluster of
  // its short flags, `-cdn`, `-da PID`): the command leads a session of its own.
  [command('mnexec', String.raw`\s(?:[^;&|\n]{0,500}\s)?-[A-Za-z]*d[A-Za-z]*(?=[\s;&|]|$)`), 'mnexec -d'],
  // D-Bus's daemon with --fork: it forks away at once, the caller's child exiting.
  [command('dbus-daemon', String.raw`\s[^;&|\n]{0,500}?--fork(?=[\s;&|]|$)`), 'dbus-daemon --fork'],
  // ssh -f: the client forks itself into the background once it has authenticated (a tunnel that
  // outlives the caller). Among ssh's options, before the host (after it, `-f` is the remote
  // command's: `ssh host rm -f x`), in a cluster whose letters before the f take no value
  // (`-fN`, `-NfL 80:h:80`; in `-lfred` the f is the login's).
  [command('ssh', String.raw`(?:\s+-${SSH_PLAIN}*(?:${SSH_VALUED}(?:[^\s;&|]+|\s+[^\s;&|]+))?){0,20}?\s+-${SSH_PLAIN}*f[^\s;&|]*(?=[\s;&|]|$)`), 'ssh -f'],
  // Windows' runas.exe starts its program through the secondary logon service, as another user:
  // a process of that service, outside the caller's tree, job and console. Its `/user:` marks it.
  [command('[Rr][Uu][Nn][Aa][Ss](?:\\.[Ee][Xx][Ee])?', String.raw`\s[^;&|\n]{0,500}?\/[Uu][Ss][Ee][Rr]:`), 'runas /user:'],
  // Sysinternals' PsExec and its open twin PAExec run the program from a service they install
  // (PSEXESVC, on this machine or another), not as their own child: ending them leaves it running.
  // Its words decide, as systemd-run's: a lone name in an argument list is read with the rest.
  [command('(?:[Pp][Ss]|[Pp][Aa])[Ee][Xx][Ee][Cc](?:64)?(?:\\.[Ee][Xx][Ee])?', String.raw`\s+\S`), 'PsExec'],
];

/**
 * Where a command starts: the text's start (with words after the program, so that a list's lone
 * element is no command), after an operator or `$(`/a backquote, or after sudo, exec or eval; the
 * program's name may be quoted (`"/usr/sbin/sshd" -p 22`).
 * Not as an argument (`systemctl restart sshd`, `service nginx reload`).
 */
const AT_COMMAND_START = (name: string) => String.raw`(?:^\s*(?=["']?${BIN}${name}["']?\s+\S)|[;&|(\x60]\s*|(?:^|\s)(?:sudo|exec|eval)\s+)["']?${BIN}${name}(?=[\s;&|)'"\x60]|$)`;
/** None of these options (a short-flag cluster holding one of the letters, or a long option) on the rest of the command. */
/**
 * A short-flag cluster holding one of the letters (`-drx` for d), its letters scanned once: written
 * as letters, a letter and letters, a long word split every way (quadratic in its length).
 */
const CLUSTER_WITH = (letters: string) => String.raw`-(?!-)(?=[A-Za-z]*[${letters}])[A-Za-z]+`;
const WITHOUT = (letters: string, long: string[] = []) => {
  const words = [...(letters ? [CLUSTER_WITH(letters)] : []), ...long];
  return String.raw`(?![^;&|\n]{0,500}?\s(?:${words.join('|')})(?=[\s;&|=)'"\x60]|$))`;
};
/** One of these options on the rest of the command (a short cluster holding the letter, or a word). */
const WITH = (words: string) => String.raw`(?=[^;&|\n]{0,500}?\s(?:${words})(?=[\s;&|)'"\x60]|$))`;
/** A program's options before its verb, each an option word of its own (bounded: a quote is no option's). */
const OPTIONS = String.raw`(?:\s+-[^\s;&|'"\x60]+){0,20}`;
/** sudo's flags that take no value, and those that take one (`-u user`), before its command. */
const SUDO_PLAIN = '[ABEHKPSVeiklnsv]';
const SUDO_VALUED = '[CDghprtTUu]';

// Programs whose manuals say they leave their caller, read from their documentation rather than
// from any one project: a daemon that forks into the background unless told to stay (by default),
// one told to (by its own flag or verb), a launcher whose job is to hand the command to a server
// (pm2's, adb's), and Windows' elevation helpers (the command starts from the elevation service,
// as with the "runas" verb). Each is read where a command starts or with its words, as above.
const DAEMONIZING_PROGRAMS: Array<[RegExp, string]> = [
  // Daemons that detach unless told to stay in the foreground (or only test, print or signal).
  [new RegExp(AT_COMMAND_START('sshd') + WITHOUT('DditTVG')), lacking('sshd without -D')],
  // These three read their daemon mode from a configuration file too (`nodaemon=true`, `daemon
  // off;`, `keep-in-foreground`): only where the command names none (ArchiveBox's foreground
  // supervisord is told so by the file it writes).
  [new RegExp(AT_COMMAND_START('dnsmasq') + WITHOUT('dkvwC', ['--no-daemon', '--keep-in-foreground', '--test', '--version', '--help', '--conf-file', '--conf-dir'])), lacking('dnsmasq without --no-daemon')],
  [new RegExp(AT_COMMAND_START('supervisord') + WITHOUT('nvhc', ['--nodaemon', '--version', '--help', '--configuration'])), lacking('supervisord without --nodaemon')],
  // nginx's -g directives may say `daemon off;` (quoted text is blanked before it is read): any -g counts.
  [new RegExp(AT_COMMAND_START('nginx') + WITHOUT('stTvVh?cg')), lacking('nginx (daemon on by default)')],
  [new RegExp(AT_COMMAND_START('transmission-daemon') + WITHOUT('fhVd', ['--foreground', '--help', '--version', '--dump-settings'])), lacking('transmission-daemon without --foreground')],
  [new RegExp(AT_COMMAND_START('vncserver') + WITHOUT('', ['-fg', '-kill', '-list', '-help', '--help', '-version', '--version'])), lacking('vncserver without -fg')],
  // FUSE file systems mount and then fork into the background unless told -f (or -d, debugging).
  [new RegExp(AT_COMMAND_START('(?:sshfs|s3fs|bindfs|encfs|borgfs)') + WITHOUT('fdhV', ['--foreground', '--help', '--version', String.raw`-o\s+[^\s;&|]*\bdebug\b[^\s;&|]*`])), lacking('a FUSE mount without -f')],
  // fail2ban's server starts in the background unless told -f, whether run itself or by the
  // client's `start` (with no jail after it: `start sshd` starts a jail in a running server).
  [new RegExp(AT_COMMAND_START('fail2ban-server') + WITHOUT('fdtihV', ['--dp', '--dump-pretty', '--test', '--help', '--version', '--str2sec'])), lacking('fail2ban-server without -f')],
  [command('fail2ban-client', WITHOUT('fdtihV', ['--dp', '--dump-pretty', '--test', '--help', '--version']) + String.raw`\s(?:[^;&|\n]{0,500}\s)?(?:re)?start(?=\s*(?:[;&|)'"\x60]|$))`), lacking('fail2ban-client start without -f')],
  // LXC runs a container as a daemon unless told -F (lxc-start(1): daemon mode is the default).
  [command('lxc-start', String.raw`(?=\s+\S)` + WITHOUT('Fh', ['--foreground', '--help', '--usage', '--version'])), lacking('lxc-start without -F')],
  [new RegExp(AT_COMMAND_START('gocryptfs') + WITHOUT('', ['-f', '-fg', '-d', '-debug', '-init', '-passwd', '-info', '-help', '-version', '--help', '--version'])), lacking('gocryptfs without -fg')],
  [command('borg', String.raw`${OPTIONS}\s+mount(?=\s)` + WITHOUT('f', ['--foreground', '--help'])), lacking('borg mount without --foreground')],
  // ssh-agent forks into the background unless given a command to run, -D or -d (or -k, which kills one).
  [new RegExp(AT_COMMAND_START('ssh-agent').replace(String.raw`(?=[\s;&|)'"\x60]|$)`, '') + String.raw`(?:\s+(?:-[cs]{1,2}|-[aEtPO]\s*[^\s;&|()'"\x60]+)){0,20}\s*(?=[;&|)'"\x60]|$)`), lacking('ssh-agent')],
  // ssh's master connection with ControlPersist (not `no`): once its session ends, or at once with
  // -N, the master forks into the background and holds the connection open (ssh_config(5)); not a
  // control command to a running master (`-O exit`).
  [command('ssh', String.raw`(?=\s)(?=[^;&|\n]{0,500}?ControlPersist[=\s]\s*(?!no\b)\w)(?=[^;&|\n]{0,500}?(?:\s-[46AaCGgKkNnqsTtVvXxYy]*M|ControlMaster[=\s]\s*(?:yes|auto|ask|autoask)\b))(?![^;&|\n]{0,500}?\s-[46AaCGgKkMNnqsTtVvXxYy]*O)`), 'ssh ControlPersist'],
  // Told to by a flag of their own.
  // Where a command starts (not `echo run: sudo -b x`).
  [new RegExp(String.raw`(?:^\s*|[;&|(\x60]\s*|(?:^|\s)(?:exec|eval)\s+)${BIN}sudo(?:\s+-${SUDO_PLAIN}*(?:${SUDO_VALUED}(?:[^\s;&|]+|\s+[^\s;&|]+))?|\s+--(?!background)[\w-]+(?:=\S*)?){0,20}?\s+(?:-${SUDO_PLAIN}*b[^\s;&|]*|--background)(?=[\s;&|]|$)`), 'sudo -b'],
  [command('(?:wpa_supplicant|hostapd)', WITH(CLUSTER_WITH('B'))), 'wpa_supplicant -B'],
  [command('ibus-daemon', WITH(CLUSTER_WITH('d'))), 'ibus-daemon -d'],
  [command('pulseaudio', WITH(`${CLUSTER_WITH('D')}|--start`)), 'pulseaudio -D or --start'],
  [command('x11vnc', WITH('--?bg')), 'x11vnc -bg'],
  [command('(?:haproxy|php-fpm[\\d.]*|airflow)', WITH('-D')), 'a server\'s own -D'],
  [command('mosquitto', WITH('-d')), 'mosquitto -d'],
  [command('tor', String.raw`\s[^;&|\n]{0,500}?--RunAsDaemon\s+1(?=[\s;&|]|$)`), 'tor --RunAsDaemon 1'],
  [command('(?:kafka|zookeeper)-server-start(?:\\.sh)?', WITH('-daemon')), 'kafka-server-start -daemon'],
  // Told to by a verb: the program hands the command to a server it starts in the background.
  [command('pm2', String.raw`${OPTIONS}\s+(?:start|restart|startOrRestart|startOrReload|resurrect)(?=[\s;&|]|$)` + WITHOUT('', ['--no-daemon'])), 'pm2 start'],
  [command('forever', String.raw`${OPTIONS}\s+(?:start|restart)(?=[\s;&|]|$)`), 'forever start'],
  [command('celery', String.raw`(?:\s+\S+){0,6}?\s+multi\s+(?:start|restart)(?=[\s;&|]|$)`), 'celery multi start'],
  [command('caddy', String.raw`\s+start(?=[\s;&|]|$)`), 'caddy start'],
  [command('adb', String.raw`\s[^;&|\n]{0,200}?(?:start|fork)-server(?=[\s;&|]|$)`), 'adb start-server'],
  [command('gpgconf', String.raw`\s[^;&|\n]{0,200}?--launch(?=[\s;&|=]|$)`), 'gpgconf --launch'],
  [command(String.raw`(?:[^\s;&|'"(]{0,200}\/)?(?:[\w.-]{0,100}-daemons?\.sh|zkServer\.sh)`, String.raw`[^;&|\n]{0,200}?\sstart(?=[\s;&|]|$)`), 'a *-daemon.sh start'],
  // dtach's master forks into the background with a session of its own whether or not the caller
  // then attaches (`-c`, `-A`; not `-N`, which keeps it in the foreground); abduco's `-n` so.
  [command('dtach', String.raw`\s+-[nAc](?=[\s;&|]|$)`), 'dtach -n, -c or -A'],
  [command('abduco', String.raw`\s+-n(?=[\s;&|]|$)`), 'abduco -n'],
  // Handed to systemd: uwsm's `app` runs the command as a unit (a scope by default, as systemd-run --scope).
  [command('uwsm', String.raw`\s+app(?=[\s;&|]|$)`), 'uwsm app'],
  [command('uwsm-app', String.raw`\s+\S`), 'uwsm-app'],
  // Windows' elevation helpers: the command starts elevated, from the elevation service, outside
  // the caller's tree and job (as ShellExecute's "runas" verb, which they use).
  [new RegExp(AT_COMMAND_START(String.raw`["']?(?:[^\s"';&|(\x60]{0,200}[\\\/])?(?:[Ee]levate(?:\.(?:exe|cmd|bat))?|gsudo(?:\.exe)?)["']?`) + String.raw`(?!\s+(?:status|config|cache|-k|--help|-h|--version|-v)(?=[\s;&|]|$))`), 'an elevation helper'],
  [command(String.raw`nircmdc?(?:\.exe)?`, String.raw`\s+elevate(?:cmd)?(?=\s)`), 'nircmd elevate'],
];
/** The names the documented programs' entries report (their examples are tested against both word scans). */
export const DOCUMENTED_PROGRAM_ENTRIES: readonly string[] = DAEMONIZING_PROGRAMS.map(([, name]) => name);
/** The documented programs' patterns, read only in a text that holds one of their words (PROGRAM_WORDS): most commands hold none. */
function daemonizingProgramEntry(text: string): [RegExp, string] | undefined {
  if (!PROGRAM_WORDS.test(text)) return undefined;
  return DAEMONIZING_PROGRAMS.find(([pattern]) => pattern.test(text));
}
function daemonizingProgramIn(text: string): string | undefined {
  return daemonizingProgramEntry(text)?.[1];
}
/**
 * A runner's whole command that is a documented program alone (`os.system("sshd")`,
 * `Popen(["nginx"])`, `spawn('supervisord')`): read as a command's start, where a lone word
 * elsewhere (a list's element, a service's name) is none.
 */
export function loneProgramIn(command: string): string | undefined {
  return LONE_DAEMONS.test(command) ? daemonizingProgramIn(`; ${command}`) : undefined;
}
/** The documented daemons that run with no words at all (a mount needs its two; sshfs alone prints its usage). */
const LONE_DAEMONS = new RegExp(String.raw`^${BIN}(?:sshd|dnsmasq|supervisord|nginx|transmission-daemon|vncserver|ssh-agent|fail2ban-server)$`);
/**
 * Python code, given to an interpreter's `-c` (or as shell text), that puts the process in a
 * session or group of its own: `python -c "import os; os.setsid(); ..."`. Called with a dot or a
 * blank before it, so that `getsid()` or `my_setsid()` is not one.
 */
const DETACHING_CODE = /(?:^|[\s;.(\uE000])(?:set(?:sid|pgrp)\(\s*\)|setpgid\(\s*0\s*,\s*0\s*\))/;
/**
 * A program's own daemonizing option, whatever the program (synapse's and uwsgi's `--daemonize`,
 * Limnoria's, emacs' and gpg-agent's `--daemon`, QEMU's single-dash `-daemonize`): it forks into the background and the caller's
 * child exits at once. An option word of its own, not turned off by its value (`--daemonize no`,
 * `--daemon=false`), nor rsync's daemon kept in the foreground (`--no-detach`).
 */
const DAEMON_OPTION = /[^\s;&|(]\s+-(?:-(?:bg-)?daemon(?:ize)?|daemonize)(?=[\s;&|"'=]|$)(?![=\s]+(?:no|false|0|off)(?![\w-]))(?![^;&|\n]{0,500}?--no-detach\b)/;
/** The daemonizing option as a word of its own (a list's element; in text a program comes before it). */
const DAEMON_WORD = /^-(?:-(?:bg-)?daemon(?:ize)?|daemonize)(?:=(?!(?:no|false|0|off)$).*)?$/;
const DAEMON_OPTION_NAME = "a program's own --daemon option";

/**
 * DAEMON_OPTION in an argument list, one word to an element, whatever the program (a value or
 * unknown): `[sys.executable, "-m", "server", "--daemonize"]`; not with a value that turns it off
 * after it (`["--daemonize", "no"]`), nor beside `--no-detach`.
 */
export function daemonOptionIn(words: ReadonlyArray<string | undefined>): string | undefined {
  const at = words.findIndex((word) => word !== undefined && DAEMON_WORD.test(word));
  if (at < 1 || /^(?:no|false|0|off)$/.test(words[at + 1] ?? '') || words.includes('--no-detach')) return undefined;
  return DAEMON_OPTION_NAME;
}

/** Whether a word added to an argument list held in a name (`args.append("--daemonize")`) is the daemonizing option. */
export function isDaemonOptionWord(word: string): boolean {
  return DAEMON_WORD.test(word);
}
BACKGROUNDING.push(...DETACHING_COMMANDS, [DETACHING_CODE, 'Python code calling os.setsid()'], [DAEMON_OPTION, DAEMON_OPTION_NAME]);

/** Python code that runs twistd in the process it is given to (bin/twistd's own code). */
const TWISTD_CODE = /\btwistd\.run\(|\bfrom\s+twisted\.scripts\.twistd\s+import\s+run\b/;

/**
 * The detaching command a program run with its arguments is (`spawn('systemd-run', ['--user',
 * 'x'])`): the words are joined only for these names, since shell text in one argument is read on
 * its own (`['-e', '&']` is no background job). A word that is not a literal is undefined: the
 * words are read up to the first one. `python -c "from twisted.scripts import twistd;
 * twistd.run()" --python=x.tac` (the interpreter named by a value or not) is twistd with the words
 * after the code.
 */
export function detachingCommandIn(argv: ReadonlyArray<string | undefined>): string | undefined {
  if (argv[1] === '-c' && argv[2] !== undefined && DETACHING_CODE.test(argv[2])) return 'python -c code calling os.setsid()';
  const words = argv[1] === '-c' && argv[2] !== undefined && TWISTD_CODE.test(argv[2]) ? ['twistd', ...argv.slice(3)] : argv;
  const literal: string[] = [];
  for (const word of words) {
    if (word === undefined) break;
    literal.push(word);
  }
  if (argv.length === 1 && literal.length === 1 && DAEMONIZING_ALONE.test(literal[0] as string)) return CUPSD;
  if (literal.length < 2) return undefined;
  const line = literal.join(' ');
  // The words after the first unknown one still count against a match: a foreground flag written
  // later (`['sshfs', remote, mnt, '-f']`, `['twistd', '-y', tac, '--nodaemon']`) keeps the
  // program in front; an unknown word reads as a value.
  const whole = literal.length < words.length ? words.map((word) => word ?? VALUE_MARK).join(' ') : line;
  for (const [pattern, name] of DETACHING_COMMANDS) if (pattern.test(line) && (whole === line || pattern.test(whole))) return name;
  const entry = daemonizingProgramEntry(line);
  if (entry && (whole === line || entry[0].test(whole))) return entry[1];
  return undefined;
}

/**
 * detachingCommandIn for a runner's argument vector whose values held in names are marked
 * (VALUE_MARK): a word still unknown may hold options (`opts`), so a program that leaves for want
 * of a flag is not read past it.
 */
export function detachingCommandWithValues(argv: ReadonlyArray<string | undefined>, missingOnly = false): string | undefined {
  const name = detachingCommandIn(argv);
  if (name === undefined) return undefined;
  const missing = READ_FOR_A_MISSING_FLAG.has(name);
  // `missingOnly`: words merged from branches, which need not all be there at once, can only show
  // a flag is absent from every branch, never that one is written.
  return (missing && argv.includes(undefined)) || (missingOnly && !missing) ? undefined : name;
}

/**
 * The detaching command an argument list built over several statements is (`args = ["ssh"] +
 * base_args()`, then `args += ["-MN", "-o", "ControlPersist=300", host]`), its program a literal and
 * some later words unknown (undefined, read as values): only for a flag or verb that is written,
 * never for one that is missing (READ_FOR_A_MISSING_FLAG), since an unknown word may be it.
 */
export function detachingFlagIn(words: ReadonlyArray<string | undefined>): string | undefined {
  if (words[0] === undefined || words.length < 2) return undefined;
  const line = words.map((word) => word ?? VALUE_MARK).join(' ');
  for (const [pattern, name] of DETACHING_COMMANDS) if (!READ_FOR_A_MISSING_FLAG.has(name) && pattern.test(line)) return name;
  if (!PROGRAM_WORDS.test(line)) return undefined;
  return DAEMONIZING_PROGRAMS.find(([pattern, name]) => !READ_FOR_A_MISSING_FLAG.has(name) && pattern.test(line))?.[1];
}

/**
 * A function's name that says it finds a program (`which`, `shutil.which`, `find_executable`, a
 * project's `resolve_exe`): a name bound to its call on a detaching program's literal name holds
 * that program (both analysers' held words).
 */
const LOOKUP_ANYWHERE = 'which|exe|program|binary|executable|locate';
const LOOKUP_FIRST = 'find|resolve';
export const PROGRAM_LOOKUP = new RegExp(`${LOOKUP_ANYWHERE}|^(?:${LOOKUP_FIRST})`, 'i');
/**
 * PROGRAM_LOOKUP as a callee written in source (a dotted name, its last part read so), for a pattern
 * with the `i` flag. Bounded, so that a line of one long name is read in linear time.
 */
export const PROGRAM_LOOKUP_CALLEE = String.raw`(?:\w{1,64}\.){0,8}(?:\w{0,64}(?:${LOOKUP_ANYWHERE})|(?:${LOOKUP_FIRST}))\w{0,64}`;

/** Programs that daemonize run with no words at all (`[cupsd]`, the only one): read alone as an argument vector. */
const DAEMONIZING_ALONE = /^(?:[\w.\/-]*\/)?cupsd$/;

/** Whether the words of a list can be an argument vector of a detaching program (its first word, or twistd's code). */
export function mayBeDetachingArgv(first: string | undefined, third: string | undefined): boolean {
  return (first !== undefined && DETACHING_PROGRAM.test(first)) || (third !== undefined && (TWISTD_CODE.test(third) || DETACHING_CODE.test(third)));
}
/**
 * The detaching programs' names (DETACHING_COMMANDS' programs that read as argument vectors), as a
 * pattern: the one list behind DETACHING_PROGRAM, the Python analyser's program strings and the JS
 * spawn gate's program vectors.
 */
export const DETACHING_PROGRAM_NAMES = String.raw`twistd|systemd-run|start-stop-daemon|daemonize|tmux|screen|ssh|dbus-daemon|mnexec|cupsd|[Rr][Uu][Nn][Aa][Ss](?:\.[Ee][Xx][Ee])?|(?:[Pp][Ss]|[Pp][Aa])[Ee][Xx][Ee][Cc](?:64)?(?:\.[Ee][Xx][Ee])?`;
const DETACHING_PROGRAM = new RegExp(String.raw`^(?:[\w.\/-]*\/)?(?:${DETACHING_PROGRAM_NAMES})$`);

// A lone `&` (not `&&`, `&>`, `>&`, `2>&1`) with a blank or the end of a command after it, so
// `a=1&b=2` in a URL does not count but `server &` and `server & echo started` do. Something other
// than a separator must come before it: a `&` that starts a command is PowerShell's call operator
// (`& 'C:\tool.exe' x`), not backgrounding.
// After it, the end of a line or of the text, a separator, a quote, or a word on the same line
// (`server & echo started`), as the prefilter reads it (backgroundMayMatter): `x & ::y` in an
// hg revset handed as an argument is no job.
// A quote may close it: `sh -c 'server &'` backgrounds inside the inner shell. A quote right
// before it counts when it closes a word (`xterm -e 'top' &`, a character other than a blank or
// an operator before the quote), not when it opens an inner script (`-Command "& 'C:\tool.exe'"`).
// The `&` first, its lookbehinds after it: led by a lookbehind, the pattern was tried at every
// position, each scanning back over the blanks before it (quadratic in a long run of blanks).
const BACKGROUND_AMPERSAND = /&(?<=(?:[^\s;&|({'"]|[^\s;&|({]['"])\s*&)(?<![&>|<\\]&)(?![&>])(?=[ \t]*(?:[\r\n;)'"\x60]|$)|[ \t]+[\w\uE000])/g;
/**
 * Commands only cmd.exe runs (`timeout 5` with no command after it, as GNU timeout needs one,
 * `timeout /t 5 /nobreak`, `taskkill /f …`, `sc start …`, `@echo off`, `del /f …`, `rd /s …`; not
 * `ping -n`, which Linux's ping takes too): text holding
 * one is cmd's, where `&` runs the commands in turn, as `;` does in sh (sabnzbd's `timeout 5 & sc
 * start SABnzbd`), not in the background.
 */
const CMD_ONLY = /(?:^|[\s&|(])(?:timeout\s+(?:\/t\s+)?\d+(?:\s+\/nobreak)?(?=\s*(?:>\s*nul\s*)?(?:&|$))|taskkill(?:\.exe)?\s+\/|sc(?:\.exe)?\s+(?:start|stop|query|config|delete)\s|@echo\s+off\b|del\s+\/[fqs]|(?:rd|rmdir)\s+\/s|chcp(?:\.com)?\s+\d+|[12]?>\s*nul(?=[\s&|)]|$))|(?:^|[;&|(])\s*["']?cmd(?:\.exe)?["']?\s+\/[ck](?=[\s"']|$)/i;
/** A `wait` command: the shell waits for its background jobs before it exits. */
const WAIT = /(?:^|[\s;&|(])wait(?=\s|$|[;)"'])/;

/**
 * What a quoted word is, by what stands before it in its command: the script of an inner shell
 * (`sh -c '…'`, `bash -lc "…"`, `cmd /c "…"`, `powershell -Command "…"`, `eval '…'`, a command
 * run over `ssh`), read as shell text in its turn; or data (`echo "Tom & Jerry"`, `sed 's/a/& b/'`,
 * `git commit -m "about nohup"`), whose words and `&`s no shell runs.
 */
const INNER_SHELL_BEFORE = /(?:^|[\s;&|(])(?:-[A-Za-z]*c|\/[cCkK]|-(?:[Cc]ommand|[Ee]ncoded[Cc]ommand)|eval|exec)\s+$|(?:^|[\s;&|(])ssh\s[^;&|]*$/;
const MAX_INNER_SHELLS = 4;
/** Longest quoted stretch looked back over for INNER_SHELL_BEFORE: a command's head is short. */
const HEAD_WINDOW = 200;

/**
 * `command` with the text of its quoted data words blanked (to `x`s, the quotes kept, so that
 * `start "" /b` and the columns stay), and inner shells' scripts kept in their quotes (a quote
 * still bounds a command: `-Command "& 'C:\tool.exe'"` is PowerShell's call operator), their own
 * quoting read the same way. Single quotes hold no escapes; in double quotes a backslash
 * escapes the next character. An unclosed quote leaves the rest as it is, and so does an inner
 * script nested deeper than MAX_INNER_SHELLS (each level is read once more: nesting stays linear).
 */
export function withShellQuoting(command: string, depth = 0): string {
  if (depth > MAX_INNER_SHELLS || !/["']/.test(command)) return command;
  // The output in parts, runs of plain text whole: the head before a quote is read from the last
  // parts, never by slicing the output so far (a string built by `+=` is flattened by each slice,
  // which made a line of 40,000 quoted words take 0.8 s and of 80,000, 6 s).
  const parts: string[] = [];
  const firstWord = command.search(/\S/);
  let i = 0;
  while (i < command.length) {
    const next = nextQuoteOrEscape(command, i);
    if (next > i) {
      parts.push(command.slice(i, next));
      i = next;
      continue;
    }
    const c = command[i] as string;
    if (c === '\\') {
      parts.push(command.slice(i, i + 2));
      i += 2;
      continue;
    }
    const tail = tailOf(parts);
    if (INNER_SHELL_BEFORE.test(tail)) {
      // An inner shell's script: the whole shell word, its quoted parts and what is spliced between
      // them (`bash -c "(X="$v" make >>log 2>&1)&"`) read as one script, in the quotes it opened with.
      const word = shellWord(command, i);
      if (word === undefined) return parts.join('') + command.slice(i); // unclosed: as it is
      parts.push(`${c}${withShellQuoting(word.script, depth + 1)}${c}`);
      i = word.end;
      continue;
    }
    let end = i + 1;
    while (end < command.length && command[end] !== c) end += c === '"' && command[end] === '\\' ? 2 : 1;
    if (end >= command.length) return parts.join('') + command.slice(i); // unclosed: as it is
    const inner = command.slice(i + 1, end);
    // A quoted word where a command starts is its program (`"C:\Program Files\x\elevate.exe" setup`):
    // kept, as one word. Elsewhere quoted text is an argument, blanked.
    const program = (i === firstWord || /[;&|(]\s*$/.test(tail)) && !/[\n;&|]/.test(inner);
    // A quoted option word is kept as well, its quotes as blanks (`"sshd" "-D"`): blanked, the flag
    // would read as absent.
    const option = /^--?[A-Za-z][\w-]*$/.test(inner);
    parts.push(program ? `${c}${inner.replace(/\s/g, '_')}${c}` : option ? ` ${inner} ` : `${c}${inner.replace(/[^\n]/g, 'x')}${c}`);
    i = end + 1;
  }
  return parts.join('');
}

/**
 * The shell word starting with the quote at `from`: its text as the shell hands it on (quoted
 * parts without their quotes, unquoted parts as they are, up to a blank or an operator outside
 * quotes) and where it ends; undefined if a quote is left open.
 */
function shellWord(command: string, from: number): { script: string; end: number } | undefined {
  const pieces: string[] = [];
  let i = from;
  while (i < command.length) {
    const c = command[i] as string;
    if (c === '"' || c === "'") {
      let end = i + 1;
      while (end < command.length && command[end] !== c) end += c === '"' && command[end] === '\\' ? 2 : 1;
      if (end >= command.length) return undefined;
      pieces.push(command.slice(i + 1, end));
      i = end + 1;
    } else if (/[\s;&|()<>]/.test(c)) {
      break;
    } else {
      let end = i + 1;
      while (end < command.length && !/[\s;&|()<>"']/.test(command[end] as string)) end++;
      pieces.push(command.slice(i, end));
      i = end;
    }
  }
  return { script: pieces.join(''), end: i };
}

/** The index of the next quote or backslash at or after `from`, or the end. */
function nextQuoteOrEscape(text: string, from: number): number {
  for (let k = from; k < text.length; k++) {
    const code = text.charCodeAt(k);
    if (code === 34 || code === 39 || code === 92) return k;
  }
  return text.length;
}

/** The last HEAD_WINDOW characters of the parts so far, read from the end: a bounded cost a quote. */
function tailOf(parts: readonly string[]): string {
  let tail = '';
  for (let k = parts.length - 1; k >= 0 && tail.length < HEAD_WINDOW; k--) tail = (parts[k] as string).slice(-HEAD_WINDOW) + tail;
  return tail.length > HEAD_WINDOW ? tail.slice(tail.length - HEAD_WINDOW) : tail;
}

/** The backgrounding construct in `command`, or undefined. */
export function backgroundingIn(text: string): string | undefined {
  if (ELEVATING_VERB.test(text)) return 'ShellExecute "runas"';
  const command = withShellQuoting(text);
  for (const [pattern, name] of BACKGROUNDING) {
    if (pattern.test(command)) return name;
  }
  const program = daemonizingProgramIn(command);
  if (program) return program;
  const start = startIn(command);
  if (start) return start;
  // `a & b & wait`: jobs the same command line waits for end before it does.
  let last = -1;
  for (const match of command.matchAll(BACKGROUND_AMPERSAND)) last = match.index;
  if (last >= 0 && !WAIT.test(command.slice(last + 1)) && !CMD_ONLY.test(command)) return 'a background `&`';
  return undefined;
}

/**
 * Words every BACKGROUNDING and DETACHING_COMMANDS pattern holds, as they stand in source text
 * (or `runas`, read with cmd's `start` in startOrRunasIn; or Python code's `setpgrp(`, the JS
 * prefilter's): the prefilters (checker.ts, and the JS chunker's triggers) look for these before
 * anything is parsed, so a pattern added above needs its word here.
 */
export const SHELL_WORD_LIST = [
  // Grouped by first letter: irregexp's scan of a long alternation slows once its alternatives
  // grow past a size, and a group counts as one (bench_check's 62 MB of Python: 225 ms ungrouped,
  // 211 grouped, before ssh and the Python words of 2026-12-07 were added).
  'nohup', 'd(?:isown|aemonize|eluged|bus-daemon)', 't(?:wistd|mux)',
  // `screen` where no name or member goes on from it (`screen -md`, `'screen'`, not
  // `screen.getByText` or `screenshot`); `ssh` with a `-f` cluster later on its line (`ssh -fN`,
  // `"ssh", "-f"`), not every `ssh` of a deployment tool.
  String.raw`s(?:etsid|ystemd-run|tart-stop-daemon|creen(?![\w.])|sh\b[^\n]{0,200}?[\s'"\x60]-[46AaCGgKkMNnqsTtVvXxYy]*f)`,
  // `-dm`, which a `screen` written in parts (`"scr" "een -dm"`) or with an escape still shows, and
  // the daemonizing servers' flags, factored on their `-` (written out, with the `start` forms in
  // the same alternation, these took the shell words from 86 to 190 ms on bench_check's 31 MB;
  // factored, 110; the `start` forms are now a scan of their own, startOrRunasIn below).
  String.raw`-(?:dm|-(?:daemon|detach|fork)|k\s+(?:re)?start|k\s+graceful)`,
  // The servers by name: a word each pattern holds that prose and names rarely do (not `apache`,
  // in every licence header; not `git`).
  'gunicorn', 'm(?:emcached|nexec)', 'cupsd', 'pg_ctl', 'apache2?ctl', '[Pp][SsAa][Ee][Xx][Ee][Cc]',
];
/**
 * The words of DAEMONIZING_PROGRAMS, each name (or its verb where the name alone is a common word:
 * `forever`, `borg`, `celery`'s `multi`, `caddy`, adb's `start-server`), grouped by first letter.
 * Kept out of SHELL_WORD_LIST: joined to the words every file is scanned for, they slowed that
 * scan by half (more first letters defeat irregexp's quick check), so the prefilter reads them only
 * in a file that names a command runner (checker.ts), through shellMayMatter.
 */
const QUOTED_NEXT = String.raw`['"\x60]?[\s,]+['"\x60]?`;
export const PROGRAM_WORD_LIST = [
  // sudo with a `-b` cluster or `--background` later on its line, as ssh's `-f`.
  // cmd's `start` alone bound to a name (`command = "start"`), spliced into a command later: its
  // match starts at the word, inside the string (the JS chunker keeps strings holding a trigger),
  // and the name is checked behind it once the word is read (a lookbehind first cost every position).
  String.raw`s(?:tart(?:-server|(?<==\s*['"\x60]start)(?=['"\x60]))|sh(?:d\b|fs|-agent)|3fs|upervisord|udo\b[^\n]{0,200}?[\s'"\x60]-(?:${SUDO_PLAIN}*b|-background))`,
  String.raw`-(?:-bg-daemon|server-start|daemons?\.sh)`, 'n(?:ginx|ircmd)', 'd(?:nsmasq|tach)', 'transmission-daemon',
  'g(?:ocryptfs|pgconf|sudo)', String.raw`m(?:osquitto|ulti${QUOTED_NEXT}(?:re)?start)`, String.raw`caddy${QUOTED_NEXT}start`,
  String.raw`p(?:ulseaudio|hp-fpm|m2\b)`, 'a(?:irflow|bduco)', String.raw`f(?:orever\b[^\n]{0,200}?(?:re)?start|ork-server|ail2ban-(?:client|server))`, 'uwsm',
  String.raw`[Ee](?:levate(?:\.(?:exe|cmd|bat)|['"\x60\s]|$)|ncfs)`, 'vncserver', 'x11vnc', String.raw`b(?:indfs|org(?:fs|\b[^\n]{0,200}?mount))`,
  'wpa_supplicant', 'h(?:ostapd|aproxy)', 'lxc-start', 'ibus-daemon', 'RunAsDaemon', 'zkServer', 'ControlPersist',
];
export const PROGRAM_WORDS = new RegExp(PROGRAM_WORD_LIST.join('|'));
/**
 * The same programs where a string starts with one (`"sshfs"`, `'/usr/sbin/sshd -p 22'`, `` `pm2
 * start ${app}` ``), or their options that come after another word: the prefilter's test of a file
 * that names a command runner and no other word. Opening on a quote, irregexp skips to the quotes:
 * a fifth of PROGRAM_WORDS' time on bench_check's tree, where every file names subprocess. A name
 * later in a command's text (`"eval $(ssh-agent -s)"`) is read by PROGRAM_WORDS once a file passes
 * for another word.
 */
export const PROGRAM_NAMES = String.raw`ss(?:hd|hfs|h-agent)|s3fs|s(?:upervisord|udo)|n(?:ginx|ircmd)|d(?:nsmasq|tach)|transmission-daemon|g(?:ocryptfs|pgconf|sudo)|mosquitto|c(?:elery|addy)|p(?:ulseaudio|hp-fpm|m2)|a(?:irflow|bduco|db)|f(?:orever|ail2ban-(?:client|server))|uwsm(?:-app)?|[Ee]levate|encfs|vncserver|x11vnc|b(?:indfs|org)|wpa_supplicant|h(?:ostapd|aproxy)|lxc-start|ibus-daemon|tor|(?:kafka|zookeeper)-server-start|zkServer`;
// A name right after its quote (or a quote and a slash, `bin + '/elevate.exe'`), a backslash (a
// Windows path), a template's value and a slash (`${bin}/elevate.exe`), a `$(` (`eval "$(ssh-agent -s)"`),
// npx or a `bin/` (not any path: a path of any length tried at every
// quote cost a half more), and the words no program name leads.
export const QUOTED_PROGRAMS = new RegExp(String.raw`(?:["'\x60\\]\/?|\}[\/\\]|\$\(|npx\s+)(?:${PROGRAM_NAMES})(?=[\s"'\x60.)])|\/s?bin\/(?:${PROGRAM_NAMES})(?=[\s"'\x60.])|ControlPersist|-(?:-bg-daemon|daemons?\.sh)|RunAsDaemon|=\s*['"\x60]start['"\x60]`);
/**
 * `start /b` and Start-Process, matched without case, spelled out in both cases so that it joins
 * other sources. In source text the title and blanks between `start` and `/b` may be written with
 * escapes (`start \"\" /b`, `start\t/b`), so anything on the same line may come between (a bounded
 * stretch, so that a long line of many `start`s stays linear).
 */
const START_ANY_CASE = String.raw`[Ss][Tt][Aa][Rr][Tt](?:[^\n]{0,200}?\/[Bb](?!\w)|-[Pp][Rr][Oo][Cc][Ee][Ss][Ss])`;
/**
 * cmd's `start` as a command, as source text shows it: first in a string (`'start "" ' + url`),
 * after `&` or `|` (`"cd x && start y"`), after an inner shell's flag (`cmd /c start`, `/C \"start`,
 * `-Command "Start x`), as the word after a `/c` or `/k` element of a list (`'/c', 'start'`), or as
 * a program named `start` with an argument list after it.
 */
const START = '[Ss][Tt][Aa][Rr][Tt]';
const INNER_FLAG = String.raw`(?:\/[CcKk]|-[A-Za-z]*[Cc]|-[Cc]ommand)`;
/** START_ARGUMENT in source text: a quote, a switch, a value's `{`, `${`, `%` or `+`, an escape, or a word with `.`, `:` or a slash in it (or any escape right after `start`: `start\t`). */
const START_ARGUMENT_SOURCE = String.raw`(?:[ \t]+(?:["'\x60\/\\{$%+]|[^\s"'\x60]*[.:\\\/][^\s"'\x60])|\\)`;
const START_COMMAND = [
  // …or the program `start` with its arguments after it, for a shell that joins them
  // (`spawn('start', [x], { shell: true })`, `["start", x]` with shell=True).
  String.raw`['"\x60][ \t]*@?${START}(?:${START_ARGUMENT_SOURCE}|['"\x60][ \t]*,)`,
  String.raw`[&|][ \t]*@?${START}${START_ARGUMENT_SOURCE}`,
  String.raw`${INNER_FLAG}[ \t]+(?:\\?["'][ \t]*)?@?${START}(?![\w.\/\\:$-])`,
  String.raw`\/[CcKk]['"][ \t]*,\s*[rRuUbB]?['"]${START}['"]`,
  // Wine's loader and its start, in text or as a list's words (WINE_HEAD).
  String.raw`wine(?:64)?(?:\.exe)?['"\x60]?[ \t,]{1,20}['"\x60]?${START}(?![\w.\/\\:$-])`,
  // PowerShell with only its switches before `Start` (POWERSHELL_HEAD).
  String.raw`(?:[Pp]ower[Ss]hell|pwsh)(?:\.exe)?(?:[ \t]+-\w+(?:[ \t]+[\w.]+)?){0,8}[ \t]+${START}[ \t]`,
].join('|');
/**
 * Whether a source text may hold a shell word: every pattern above needs one of these, or one of
 * cmd's `start` forms and `runas` (startOrRunasIn). Two scans, not one alternation: joined, the words and the
 * `start` forms (which open on a quote, `&`, `|`, `/` or `-`, characters in every file) made
 * irregexp try the whole alternation almost everywhere: 224 ms on bench_check's 31 MB of Python
 * with the Python words, against 115 for the words and 19 for a `start` anywhere, the forms read
 * only in the files that hold one.
 */
export const SHELL_WORDS = new RegExp(SHELL_WORD_LIST.join('|'));
const START_FORMS = new RegExp([START_ANY_CASE, START_COMMAND].join('|'));
/**
 * `start` or `runas` in any case, in one scan: runas (as a program, `runas /user:`, or the shell's
 * verb, `ShellExecute(…, "runas", …)`, `lpVerb="runas"`) joined to the word alternation cost it
 * 25 ms per 62 MB of Python, here 12: its first letter is a common one, which the alternation's
 * quick scan can no longer skip.
 */
const START_OR_RUNAS = /[Ss][Tt][Aa][Rr][Tt]|[Rr][Uu][Nn][Aa][Ss]/;
const RUNAS = /[Rr][Uu][Nn][Aa][Ss]/;
/** Whether a source text may hold cmd's `start` (or Start-Process) in one of the forms above, or `runas`. */
export function startOrRunasIn(text: string): boolean {
  return START_OR_RUNAS.test(text) && (START_FORMS.test(text) || RUNAS.test(text));
}
/** After a lone `&`: the end of its line or of a string (or an escaped quote closing an inner one). Sticky, so nothing is sliced. */
const ENDS_AFTER = /[ \t]*(?:\r?\n|\r?$|["'`;)\\])/y;
/** After a lone `&`: a word on the same line (`server & echo`). */
const WORD_AFTER = /[^\S\n]+\w/y;
/** Cheap test of raw source text: can any string in it background a process (a word, or a lone `&`)? */
export function shellMayMatter(text: string, language: Language): boolean {
  return SHELL_WORDS.test(text) || PROGRAM_WORDS.test(text) || startOrRunasIn(text) || backgroundMayMatter(text, language);
}

/**
 * The lone `&` half of shellMayMatter. A lone `&` counts when it ends a line or a string (`server &`
 * in a multi-line template), or when a word follows it and it is likely inside a string: a quote
 * opens earlier on its line, or a string crosses the line break before it (`server & echo` on a
 * line of a multi-line template or triple-quoted string). A bitwise `a & b`, a TypeScript `A & B`
 * or "this & that" in prose is none of these, and such files were most of those parsed for nothing.
 *
 * Linear in the text, however long its lines: the line's start, the next quote of each kind and the
 * string scan (string-scan.ts, run only for an `&` that needs it) all move forward only.
 */
export function backgroundMayMatter(text: string, language: Language): boolean {
  let lineStart = 0;
  let lineEnd = -1; // the line break ending the line of lineStart, or text.length
  const nextQuote = [-1, -1, -1]; // the next ', " and ` at or after some earlier line start
  let strings: StringScan | undefined;
  let opener = -2; // where the first multi-line string could open: found once, when needed
  // A scan by indexOf, not a regular expression: a pattern that starts with a lookbehind is tried
  // at every position of the text, and `&&` is in nearly every file.
  for (let at = text.indexOf('&'); at >= 0; at = text.indexOf('&', at + 1)) {
    const next = text.charCodeAt(at + 1);
    if (next === AMPERSAND || next === GREATER) {
      at++; // `&&`, `&>`: the pair is skipped whole
      continue;
    }
    let before = at - 1;
    while (before >= 0 && (text.charCodeAt(before) === SPACE || text.charCodeAt(before) === TAB)) before--;
    if (before < 0 || NOT_BEFORE.includes(text.charAt(before))) continue; // starts a command, or `>&`, `|&`
    // Ends the line or a string.
    ENDS_AFTER.lastIndex = at + 1;
    if (ENDS_AFTER.test(text)) return true;
    WORD_AFTER.lastIndex = at + 1;
    if (!WORD_AFTER.test(text)) continue;
    // Goes on with a word: inside a string opened before it on its line?
    if (at > lineEnd) {
      lineStart = text.lastIndexOf('\n', at) + 1;
      lineEnd = text.indexOf('\n', at);
      if (lineEnd < 0) lineEnd = text.length;
    }
    let quoted = false;
    for (let q = 0; q < 3 && !quoted; q++) {
      if ((nextQuote[q] as number) < lineStart && nextQuote[q] !== Infinity) {
        const found = text.indexOf(QUOTES[q] as string, lineStart);
        nextQuote[q] = found < 0 ? Infinity : found;
      }
      quoted = (nextQuote[q] as number) < at;
    }
    if (quoted) return true;
    // Or inside a string that crosses the line break before it? Only a template or triple-quoted
    // string opened before it, or a string continued by a backslash at the end of the line before,
    // can: most files with an `A & B` type have neither, and are not scanned.
    if (opener === -2) opener = firstOpener(text, language);
    const continued = lineStart >= 2 && (text.charCodeAt(lineStart - 2) === BACKSLASH || (text.charCodeAt(lineStart - 2) === 13 && text.charCodeAt(lineStart - 3) === BACKSLASH));
    if ((opener < 0 || opener > at) && !continued) continue;
    strings ??= new StringScan(text, language);
    if (strings.inString(at)) return true;
  }
  return false;
}

/** The first backtick (JS) or triple quote (Python) of the text, or -1. */
function firstOpener(text: string, language: Language): number {
  if (language === 'js') return text.indexOf('`');
  const single = text.indexOf("'''");
  const double = text.indexOf('"""');
  return single < 0 ? double : double < 0 ? single : Math.min(single, double);
}

const QUOTES = ['\'', '"', '`'];
const BACKSLASH = 0x5c;
const AMPERSAND = 0x26;
const GREATER = 0x3e;
const SPACE = 0x20;
const TAB = 0x09;
/** Characters that cannot come right before a background `&`: another operator, or a line break. */
const NOT_BEFORE = '&>|<\n\r';
