// `leash mcp install|status`: finds the MCP client configs, and wraps (or, with --undo, unwraps)
// their stdio servers so each runs through `leash run --die-with-parent` by way of the launcher in
// the file owner's leash folder. User-level files by default; a project's files (shared, often
// committed) only with --project. Every file is parsed and its new text checked before it is
// written; a file that does not parse is reported and skipped, the others are done.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isContainerCommand } from '../run/containers.js';
import { writeData, writeDiagnostic } from '../sys/safe-output.js';
import { CLIENTS, clientNamed, type Client, type ConfigLocation, configLocations } from './clients.js';
import { unifiedDiff } from './diff.js';
import { backUp, ChangedMeanwhile, type ConfigFile, readConfigFile, replaceConfig } from './files.js';
import { brokenBecause, LAUNCHER_REL, type Launcher, launcherFor, launcherTarget, launcherText, transientInstall } from './launcher.js';
import { applyEdits, ConfigSyntaxError, type Edit, type ParsedConfig, type ServerSite } from './model.js';
import { type Action, planSite } from './plan.js';
import { type ConfigRecord, digest, readRecord, untouchedSince, writeRecord } from './record.js';
import { masked, shown } from './show.js';
import { NoStateFolder, type Owner, ownerOf, type PlatformEnvironment, writePrivate } from './state.js';
import { wrappingOf } from './wrap.js';

export const EXIT_USAGE = 64;
/** A config file does not parse (or repeats a key leash reads): that file was skipped, the others done. */
export const EXIT_SYNTAX = 2;
/** A file named with --file is missing or unreadable. */
export const EXIT_NO_INPUT = 66;
/** This leash is no lasting install (a git checkout, npx's cache): nothing written without --force. */
export const EXIT_UNAVAILABLE = 69;
/** A backup, record or replacement could not be written. */
export const EXIT_CANT_CREATE = 73;
/** The client changed a file while leash edited it: that file was left alone; run again. */
export const EXIT_TRY_AGAIN = 75;

export const MCP_HELP = `usage: leash mcp install [--client NAME]... [--file PATH] [--project] [--dry-run] [--undo] [--force]
       leash mcp status  [--client NAME]... [--file PATH] [--json]

install rewrites the stdio servers of MCP client configs so that each runs through
\`leash run --die-with-parent\`: command becomes leash's launcher (LEASH/bin/leash, a small sh
script in the file owner's leash folder that install points at the Node and leash running it),
args become [run, --die-with-parent, --, ORIGINAL COMMAND, ORIGINAL ARGS...]. After moving or
upgrading leash or Node, run install again: the launcher follows, the configs stay as they are.
Servers reached by URL (http, sse) are left alone; a server already wrapped (any form leash run
accepts, npx proc-leash run included) is pointed at the launcher, never wrapped twice. Each
changed file is backed up first into LEASH/mcp/backups (0600, in a 0700 folder of the file's
owner) and replaced atomically, its comments, key order and indentation kept; what each wrap
replaced is recorded in LEASH/mcp/records, so --undo puts back each server as it was written,
keeping edits made since. Restart the client after.
LEASH is $XDG_STATE_HOME/leash (~/.local/state/leash; Windows %LOCALAPPDATA%\\leash).

By default only user-level files; a project's files (.mcp.json, .cursor/mcp.json, ...: shared,
often committed) only with --project or --file. status lists them with the command that wraps them.

status lists every server of every config found: wrapped, wrapped elsewhere, broken (with the
fix), not wrapped, remote, not understood.

clients (NAME: files, user-level, then the working directory's):
  claude-desktop  claude_desktop_config.json (macOS ~/Library/Application Support/Claude,
                  Windows %APPDATA%\\Claude, Linux $XDG_CONFIG_HOME/Claude)
  claude-code     ~/.claude.json (mcpServers and projects.*.mcpServers; $CLAUDE_CONFIG_DIR),
                  .mcp.json
  cursor          ~/.cursor/mcp.json, .cursor/mcp.json
  vscode          Code/User/mcp.json and settings.json ("mcp"), in the same folder as Claude
                  Desktop's; .vscode/mcp.json
  windsurf        ~/.codeium/windsurf/mcp_config.json
  zed             $XDG_CONFIG_HOME/zed/settings.json (~/.config/zed; Windows %APPDATA%\\Zed),
                  .zed/settings.json
  codex           $CODEX_HOME/config.toml (~/.codex), .codex/config.toml

options:
  --client NAME        only this client (repeatable); default: every client above
  --file PATH          only this file, read as --client NAME's format (exactly one --client)
  --project            (install) the working directory's project files too
  --dry-run            print the changes as a unified diff (env and headers values masked)
  --undo               give every wrapped server its original command and args back
  --force              (install) write even when this leash runs from a git checkout or npx's cache
  --json               (status) the listing as JSON
  -h, --help           this text

exit: 0 done (also: nothing to change); 2 a file does not parse or repeats a key (its line:column
printed; that file skipped, the others done); 64 usage; 66 --file missing or unreadable; 69 this
leash runs from a git checkout or npx's cache (nothing written; install a copy, or --force);
73 a backup or a file could not be written; 75 a client changed a file meanwhile (run again).
`;

/** The Node and leash script running now: what launchers are pointed at. */
export function thisLeash(): { node: string; script: string } {
  return { node: process.execPath, script: fileURLToPath(new URL('../../../bin/leash.js', import.meta.url)) };
}

interface Options {
  verb: 'install' | 'status';
  clients: Client[];
  file?: string;
  project: boolean;
  dryRun: boolean;
  undo: boolean;
  force: boolean;
  json: boolean;
}

function usage(message: string): number {
  writeDiagnostic(`leash mcp: ${shown(message)}\n${MCP_HELP.split('\n\n')[0]}\n`);
  return EXIT_USAGE;
}

function parseOptions(argv: readonly string[]): Options | string {
  const [verb, ...rest] = argv;
  if (verb !== 'install' && verb !== 'status') return verb === undefined ? 'a command is needed: install or status' : `unknown command '${verb}'`;
  const options: Options = { verb, clients: [], project: false, dryRun: false, undo: false, force: false, json: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => inline ?? rest[++i];
    if (flag === '--client') {
      const name = value();
      const client = name === undefined ? undefined : clientNamed(name);
      if (!client) return `--client needs one of: ${CLIENTS.map((c) => c.name).join(', ')}${name === undefined ? '' : ` (got '${name}')`}`;
      if (!options.clients.includes(client)) options.clients.push(client);
    } else if (flag === '--file') {
      const path = value();
      if (path === undefined || path === '') return '--file needs a PATH';
      options.file = path;
    } else if (flag === '--dry-run' && verb === 'install' && inline === undefined) options.dryRun = true;
    else if (flag === '--undo' && verb === 'install' && inline === undefined) options.undo = true;
    else if (flag === '--project' && verb === 'install' && inline === undefined) options.project = true;
    else if (flag === '--force' && verb === 'install' && inline === undefined) options.force = true;
    else if (flag === '--json' && verb === 'status' && inline === undefined) options.json = true;
    else return `unknown option '${arg}' for ${verb}`;
  }
  if (options.file !== undefined && options.clients.length !== 1) return '--file needs exactly one --client NAME (the file\'s format)';
  return options;
}

interface Loaded {
  location: ConfigLocation;
  file?: ConfigFile;
  config?: ParsedConfig;
  syntax?: ConfigSyntaxError;
  unreadable?: string;
  /** A project file this run leaves alone (install without --project). */
  notAsked?: boolean;
}

async function parse(text: string, client: Client): Promise<ParsedConfig> {
  // The parsers load only here: `import 'proc-leash'` and every other command stay without them.
  if (client.format === 'toml') return (await import('./toml-config.js')).parseTomlConfig(text);
  return (await import('./json-config.js')).parseJsonConfig(text, client.serverMaps);
}

async function load(location: ConfigLocation): Promise<Loaded> {
  let file: ConfigFile | undefined;
  try {
    file = readConfigFile(location.path);
  } catch (error) {
    return { location, unreadable: (error as Error).message };
  }
  if (!file) return { location };
  try {
    return { location, file, config: await parse(file.text, location.client) };
  } catch (error) {
    if (error instanceof ConfigSyntaxError) return { location, file, syntax: error };
    throw error;
  }
}

type State = 'wrapped' | 'wrapped-elsewhere' | 'broken' | 'not-wrapped' | 'remote' | 'unsupported';

function stateOf(site: ServerSite, launcher: Launcher): { state: State; via?: string; fix?: string; container?: true } {
  if (site.kind !== 'stdio') return { state: site.kind };
  const args = (site.args?.items ?? []).map((item) => item.value);
  const wrapping = wrappingOf(site.command!.value, args, launcher);
  // A container run (docker/podman/nerdctl run), wrapped or not: `leash run` labels and stops its container.
  const [command, ...rest] = wrapping.wrapped ? args.slice(wrapping.inner) : [site.command!.value, ...args];
  const container = command !== undefined && isContainerCommand(command, rest) ? { container: true as const } : {};
  if (!wrapping.wrapped) return { state: 'not-wrapped', ...container };
  const broken = brokenBecause(site.command!.value, args);
  if (broken) return { state: 'broken', via: wrapping.via, fix: broken, ...container };
  return wrapping.current ? { state: 'wrapped', ...container } : { state: 'wrapped-elsewhere', via: wrapping.via, ...container };
}

const STATE_TEXT: Record<State, string> = {
  wrapped: 'wrapped',
  'wrapped-elsewhere': 'wrapped by another leash',
  broken: 'BROKEN',
  'not-wrapped': 'not wrapped',
  remote: 'remote, left alone',
  unsupported: 'not understood, left alone',
};

function stateLine(site: ServerSite, launcher: Launcher): string {
  const { state, via, fix, container } = stateOf(site, launcher);
  const kind = container ? ' [container]' : '';
  if (state === 'broken') return `${STATE_TEXT[state]}${kind}: ${shown(fix!)}`;
  return `${STATE_TEXT[state]}${kind}${via ? ` (${shown(via)}): install points it at the launcher` : ''}${site.reason ? ` (${shown(site.reason)})` : ''}`;
}

function header(loaded: Loaded): string {
  return `${loaded.location.client.name} (${loaded.location.scope}) ${shown(loaded.location.path)}`;
}

function syntaxLine(loaded: Loaded): string {
  const error = loaded.syntax!;
  return `${shown(loaded.location.path)}:${error.line}:${error.column}: ${shown(error.message)}`;
}

function nameWidth(sites: readonly ServerSite[]): number {
  return Math.max(0, ...sites.map((site) => site.where.length));
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The command that wraps one project file. */
function wrapCommand(loaded: Loaded): string {
  return `leash mcp install --client ${loaded.location.client.name} --file ${shellWord(loaded.location.path)}`;
}

interface Context {
  where: PlatformEnvironment;
  leash: { node: string; script: string };
}

/** The owner's leash folder and launcher for a file; with an error text when it has none. */
function ownerAndLauncher(loaded: Loaded, context: Context): { owner?: Owner; launcher: Launcher; error?: string } {
  let owner: Owner | undefined;
  let error: string | undefined;
  try {
    owner = ownerOf(loaded.file?.stats.uid, context.where);
  } catch (caught) {
    if (!(caught instanceof NoStateFolder)) throw caught;
    error = caught.message;
  }
  const fallback: Owner = owner ?? { root: '/nonexistent', other: false };
  return { owner, launcher: launcherFor(fallback, context.leash.node, context.leash.script, context.where.platform), error };
}

function status(all: Loaded[], options: Options, context: Context): number {
  const own = launcherFor(ownerOf(undefined, context.where), context.leash.node, context.leash.script, context.where.platform);
  const target = own.file ? launcherTarget(own.file) : undefined;
  if (options.json) {
    const files = all.map((loaded) => {
      const { launcher } = ownerAndLauncher(loaded, context);
      return {
        client: loaded.location.client.name,
        scope: loaded.location.scope,
        path: loaded.location.path,
        found: loaded.file !== undefined,
        ...(loaded.location.scope === 'project' && loaded.file ? { wrappedBy: wrapCommand(loaded) } : {}),
        ...(loaded.syntax ? { error: { line: loaded.syntax.line, column: loaded.syntax.column, message: loaded.syntax.message } } : {}),
        ...(loaded.unreadable ? { error: { message: loaded.unreadable } } : {}),
        servers: (loaded.config?.sites ?? []).map((site) => ({ name: site.name, where: site.where, ...stateOf(site, launcher), ...(site.reason ? { reason: site.reason } : {}) })),
      };
    });
    writeData(`${JSON.stringify({ leash: context.leash, launcher: { path: own.command, ...(target ? { points: target } : {}) }, files }, null, 2)}\n`);
  } else {
    let text = `leash: ${shown(context.leash.node)} ${shown(context.leash.script)}\n`;
    if (own.file) text += `launcher: ${shown(own.file)} ${target ? `-> ${shown(target.node)} ${shown(target.script)}` : '(not written yet: leash mcp install writes it)'}\n`;
    // Missing files are named when asked for by name, or when none was found (where it looked).
    const nameMissing = options.clients.length > 0 || options.file !== undefined || all.every((loaded) => !loaded.file);
    for (const loaded of all) {
      if (!loaded.file && !loaded.unreadable) {
        if (nameMissing) text += `${header(loaded)}: no such file\n`;
        continue;
      }
      text += `${header(loaded)}\n`;
      if (loaded.location.scope === 'project' && loaded.file) text += `  a project file, left alone by default; to wrap it: ${shown(wrapCommand(loaded))}\n`;
      if (loaded.unreadable) text += `  unreadable: ${shown(loaded.unreadable)}\n`;
      if (loaded.syntax) text += `  does not parse: ${syntaxLine(loaded)}\n`;
      const sites = loaded.config?.sites ?? [];
      if (loaded.config && sites.length === 0) text += '  no servers\n';
      const width = nameWidth(sites);
      const { launcher } = ownerAndLauncher(loaded, context);
      for (const site of sites) text += `  ${site.where.padEnd(width)}  ${stateLine(site, launcher)}\n`;
    }
    writeData(text);
  }
  if (options.file && all.some((loaded) => !loaded.file)) return EXIT_NO_INPUT;
  return all.some((loaded) => loaded.syntax) ? EXIT_SYNTAX : 0;
}

const ACTION_TEXT: Record<Action, string> = {
  wrap: 'wrapped',
  repoint: 'pointed at the launcher',
  unwrap: 'unwrapped (as recorded)',
  'unwrap-inferred': 'unwrapped (no record of it: the wrap taken off)',
  none: '',
};
/** The same for a dry run, which changes nothing. */
const DRY_ACTION_TEXT: Record<Action, string> = {
  wrap: 'would be wrapped',
  repoint: 'would be pointed at the launcher',
  unwrap: 'would be unwrapped (as recorded)',
  'unwrap-inferred': 'would be unwrapped (no record of it: the wrap taken off)',
  none: '',
};

interface Planned {
  loaded: Loaded;
  owner: Owner;
  launcher: Launcher;
  content: Buffer;
  record: ConfigRecord;
  report: string;
  secrets: { start: number; end: number }[];
}

/** The new content of one file, checked: parsed again, every server as planned. */
async function planFile(loaded: Loaded, owner: Owner, launcher: Launcher, options: Options): Promise<Planned> {
  const { file, config } = loaded;
  const record = readRecord(owner, file!.realPath);
  const undo = options.undo;
  // Undo of a file nobody wrote since leash did: its first backup, byte for byte.
  const whole = undo ? untouchedSince(record, digest(file!.bytes)) : undefined;
  let restored: Buffer | undefined;
  if (whole) {
    try {
      const bytes = readFileSync(whole.backup);
      if (digest(bytes) === whole.before) restored = bytes;
    } catch {
      // the backup is gone: server by server below
    }
  }
  const edits: Edit[] = [];
  let report = '';
  const width = nameWidth(config!.sites);
  const servers: ConfigRecord['servers'] = {};
  for (const site of config!.sites) {
    const line = `  ${site.where.padEnd(width)}  `;
    if (site.kind !== 'stdio') {
      report += `${line}${STATE_TEXT[site.kind]} (${shown(site.reason ?? '')})\n`;
      continue;
    }
    const plan = planSite(file!.text, site, config!, launcher, undo, record.servers[site.where]);
    edits.push(...plan.edits);
    if (plan.record === 'keep') {
      if (record.servers[site.where]) servers[site.where] = record.servers[site.where]!;
    } else if (plan.record) servers[site.where] = plan.record;
    report += `${line}${plan.action === 'none' ? (undo ? 'not wrapped' : 'already wrapped') : (options.dryRun ? DRY_ACTION_TEXT : ACTION_TEXT)[plan.action]}\n`;
  }
  const text = restored ? restored.toString('utf8') : applyEdits(file!.text, edits);
  const again = await parse(text, loaded.location.client);
  const before = config!.sites.map((site) => `${site.where}:${site.kind}`).join('\n');
  const after = again.sites.map((site) => `${site.where}:${site.kind}`).join('\n');
  const wrong = undo ? undefined : again.sites.find((site) => site.kind === 'stdio' && stateOf(site, launcher).state !== 'wrapped' && stateOf(site, launcher).state !== 'broken');
  if (before !== after || wrong) throw new Error(`the rewrite of ${shown(loaded.location.path)} did not come out as planned${wrong ? ` (${wrong.where})` : ''}; nothing written`);
  if (restored) report += '  the file as it was before leash first wrote it (nothing changed it since)\n';
  return { loaded, owner, launcher, content: restored ?? Buffer.from(text), record: { ...record, servers }, report, secrets: again.secrets };
}

/** Writes (or re-points) the owner's launcher; once per owner and run. */
function ensureLauncher(owner: Owner, launcher: Launcher, done: Set<string>): string | undefined {
  if (!launcher.file || done.has(launcher.file)) return undefined;
  done.add(launcher.file);
  const wanted = launcherText(launcher.node, launcher.script);
  let now: string | undefined;
  try {
    now = readFileSync(launcher.file, 'utf8');
  } catch {
    now = undefined;
  }
  if (now === wanted) return undefined;
  writePrivate(owner, [{ rel: LAUNCHER_REL, content: Buffer.from(wanted).toString('base64'), mode: 0o700, exclusive: false }]);
  return `launcher ${shown(launcher.file)} ${now === undefined ? 'written' : 're-pointed'}: ${shown(launcher.node)} ${shown(launcher.script)}\n`;
}

async function install(all: Loaded[], options: Options, context: Context): Promise<number> {
  let code = 0;
  const broken = all.filter((loaded) => loaded.syntax && !loaded.notAsked);
  for (const loaded of broken) writeDiagnostic(`leash mcp: ${syntaxLine(loaded)}: file skipped\n`);
  if (broken.length > 0) code = EXIT_SYNTAX;
  const unreadable = all.filter((loaded) => loaded.unreadable && !loaded.notAsked);
  for (const loaded of unreadable) writeDiagnostic(`leash mcp: ${shown(loaded.location.path)}: ${shown(loaded.unreadable!)}\n`);
  if (options.file && (unreadable.length > 0 || !all[0]?.file)) {
    if (!all[0]?.file && !all[0]?.unreadable) writeDiagnostic(`leash mcp: ${shown(options.file)}: no such file\n`);
    return EXIT_NO_INPUT;
  }
  if (unreadable.length > 0) code = Math.max(code, EXIT_NO_INPUT);
  const transient = options.undo ? undefined : transientInstall(context.leash.script);
  if (transient && !options.force) {
    writeDiagnostic(
      `leash mcp: this leash is no lasting install: ${shown(transient)}.\n` +
        'Every wrapped server would start it, and would break when it moves or goes. Install a copy\n' +
        '(npm install -g proc-leash; from a clone: npm pack, then npm install -g ./proc-leash-*.tgz)\n' +
        `and run leash mcp install from there, or add --force to use this one anyway.${options.dryRun ? '' : ' Nothing written.'}\n`,
    );
    if (!options.dryRun) return EXIT_UNAVAILABLE;
  }
  const planned: Planned[] = [];
  let out = '';
  for (const loaded of all) {
    if (!loaded.file || !loaded.config || loaded.notAsked) continue;
    const { owner, launcher, error } = ownerAndLauncher(loaded, context);
    if (!owner) {
      writeDiagnostic(`leash mcp: ${shown(loaded.location.path)}: skipped: ${shown(error!)}\n`);
      code = Math.max(code, EXIT_CANT_CREATE);
      continue;
    }
    planned.push(await planFile(loaded, owner, launcher, options));
  }
  for (const loaded of all) if (!loaded.file && !loaded.unreadable && !loaded.notAsked) out += `${header(loaded)}: no such file, skipped\n`;
  const notAsked = all.filter((loaded) => loaded.notAsked && loaded.file);
  const launchers = new Set<string>();
  for (const { loaded, owner, launcher, content, record, report, secrets } of planned) {
    out += `${header(loaded)}\n${report || '  no servers\n'}`;
    const file = loaded.file!;
    if (!options.undo && !options.dryRun) {
      // The launcher follows this leash even where no config needs an edit (an upgrade, a move).
      try {
        const said = ensureLauncher(owner, launcher, launchers);
        if (said) out = said + out;
      } catch (error) {
        out += `  launcher NOT written: ${shown((error as Error).message)}\n`;
        writeDiagnostic(`leash mcp: ${shown(loaded.location.path)} not written: the launcher: ${shown((error as Error).message)}\n`);
        code = Math.max(code, EXIT_CANT_CREATE);
        continue;
      }
    }
    if (content.equals(file.bytes)) continue;
    if (options.dryRun) {
      out += unifiedDiff(loaded.location.path, masked(file.text, loaded.config!.secrets), masked(content.toString('utf8'), secrets))
        .split('\n')
        .map(shown)
        .join('\n');
      continue;
    }
    try {
      const backup = backUp(file, owner);
      replaceConfig(file, content);
      const write = { before: digest(file.bytes), after: digest(content), backup };
      const last = record.writes[record.writes.length - 1];
      record.writes = options.undo ? [] : last && last.after === write.before ? [...record.writes, write] : [write];
      out += `  written; the file as it was is kept in ${shown(backup)}\n`;
      try {
        writeRecord(owner, record);
      } catch (error) {
        // The file is written: only undo's record is missing (undo then takes the wraps apart).
        out += `  but its record of what was replaced could not be kept: ${shown((error as Error).message)}\n`;
        writeDiagnostic(`leash mcp: ${shown(loaded.location.path)}: the record of what was replaced could not be kept: ${shown((error as Error).message)}\n`);
        code = Math.max(code, EXIT_CANT_CREATE);
      }
    } catch (error) {
      const changed = error instanceof ChangedMeanwhile;
      out += `  NOT written: ${shown((error as Error).message)}\n`;
      writeDiagnostic(`leash mcp: ${shown(loaded.location.path)} not written: ${shown((error as Error).message)}\n`);
      code = Math.max(code, changed ? EXIT_TRY_AGAIN : EXIT_CANT_CREATE);
    }
  }
  for (const loaded of notAsked) out += `${header(loaded)}: a project file, left alone (--project to wrap it too)\n`;
  if (options.dryRun) out += 'dry run: nothing written\n';
  else if (planned.some(({ loaded, content }) => !content.equals(loaded.file!.bytes))) out += 'restart the clients (or reload their servers) for the change to take effect\n';
  writeData(out);
  return code;
}

export async function mcpCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    writeData(MCP_HELP);
    return 0;
  }
  const options = parseOptions(argv);
  if (typeof options === 'string') return usage(options);
  const where = { env: process.env, platform: process.platform, cwd: process.cwd() };
  const locations: ConfigLocation[] = options.file
    ? [{ client: options.clients[0]!, path: resolve(options.file), scope: 'file' }]
    : configLocations(where, options.clients.length > 0 ? options.clients : CLIENTS);
  const all: Loaded[] = [];
  for (const location of locations) {
    const loaded = await load(location);
    if (options.verb === 'install' && location.scope === 'project' && !options.project) loaded.notAsked = true;
    all.push(loaded);
  }
  return options.verb === 'status' ? status(all, options, { where, leash: thisLeash() }) : install(all, options, { where, leash: thisLeash() });
}
