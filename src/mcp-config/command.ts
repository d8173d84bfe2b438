// `leash mcp install|status`: finds the MCP client configs, and wraps (or, with --undo, unwraps)
// their stdio servers so each runs through `leash run --die-with-parent`. Every file is parsed
// and its new text checked before anything is written; a file that does not parse stops all.
import { resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeData, writeDiagnostic } from '../sys/safe-output.js';
import { CLIENTS, clientNamed, type Client, type ConfigLocation, configLocations } from './clients.js';
import { unifiedDiff } from './diff.js';
import { backUp, ChangedMeanwhile, type ConfigFile, readConfigFile, replaceConfig } from './files.js';
import { applyEdits, ConfigSyntaxError, type Edit, type ParsedConfig, type ServerSite } from './model.js';
import { type Action, planSite } from './plan.js';
import { type Launcher, wrappingOf } from './wrap.js';

export const EXIT_USAGE = 64;
/** A config file does not parse: nothing was written. */
export const EXIT_SYNTAX = 2;
/** A file named with --file is missing or unreadable. */
export const EXIT_NO_INPUT = 66;
/** A backup or a replacement could not be written. */
export const EXIT_CANT_CREATE = 73;
/** The client changed a file while leash edited it: that file was left alone; run again. */
export const EXIT_TRY_AGAIN = 75;

export const MCP_HELP = `usage: leash mcp install [--client NAME]... [--file PATH] [--dry-run] [--undo]
       leash mcp status  [--client NAME]... [--file PATH] [--json]

install rewrites the stdio servers of MCP client configs so that each runs through
\`leash run --die-with-parent\`: command becomes the Node running this leash, args become
[.../bin/leash.js, run, --die-with-parent, --, ORIGINAL COMMAND, ORIGINAL ARGS...]. No npx and no
PATH lookup stand between the client and leash. Servers reached by URL (http, sse) are left alone.
Running it again changes nothing; a server wrapped by another leash (an older install, another
Node) is pointed at this one. Each changed file is backed up first (FILE.leash-backup-TIME) and
replaced atomically, its comments, key order and indentation kept. Restart the client after.

status lists every server of every config found, and whether it runs through leash.

clients (NAME: files, user-level then the working directory's):
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
  --dry-run            print the changes as a unified diff; write nothing
  --undo               give every wrapped server its original command and args back
  --json               (status) the listing as JSON
  -h, --help           this text

exit: 0 done (also: nothing to change); 2 a file does not parse (its line:column printed; nothing
written to any file); 64 usage; 66 --file missing or unreadable; 73 a backup or a file could not
be written; 75 a client changed a file meanwhile (that file left alone: run again).
`;

/** This leash, as a wrapped server starts it. */
export function thisLauncher(): Launcher {
  return { node: process.execPath, script: fileURLToPath(new URL('../../../bin/leash.js', import.meta.url)) };
}

interface Options {
  verb: 'install' | 'status';
  clients: Client[];
  file?: string;
  dryRun: boolean;
  undo: boolean;
  json: boolean;
}

function usage(message: string): number {
  writeDiagnostic(`leash mcp: ${message}\n${MCP_HELP.split('\n\n')[0]}\n`);
  return EXIT_USAGE;
}

function parseOptions(argv: readonly string[]): Options | string {
  const [verb, ...rest] = argv;
  if (verb !== 'install' && verb !== 'status') return verb === undefined ? 'a command is needed: install or status' : `unknown command '${verb}'`;
  const options: Options = { verb, clients: [], dryRun: false, undo: false, json: false };
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

type State = 'wrapped' | 'wrapped-elsewhere' | 'not-wrapped' | 'remote' | 'unsupported';

function stateOf(site: ServerSite, launcher: Launcher): { state: State; via?: string } {
  if (site.kind !== 'stdio') return { state: site.kind };
  const wrapping = wrappingOf(site.command!.value, (site.args?.items ?? []).map((item) => item.value), launcher);
  if (!wrapping.wrapped) return { state: 'not-wrapped' };
  return wrapping.current ? { state: 'wrapped' } : { state: 'wrapped-elsewhere', via: wrapping.via };
}

const STATE_TEXT: Record<State, string> = {
  wrapped: 'wrapped',
  'wrapped-elsewhere': 'wrapped by another leash',
  'not-wrapped': 'not wrapped',
  remote: 'remote, left alone',
  unsupported: 'not understood, left alone',
};

function header(loaded: Loaded): string {
  return `${loaded.location.client.name} (${loaded.location.scope}) ${loaded.location.path}`;
}

function syntaxLine(loaded: Loaded): string {
  const error = loaded.syntax!;
  return `${loaded.location.path}:${error.line}:${error.column}: ${error.message}`;
}

function nameWidth(sites: readonly ServerSite[]): number {
  return Math.max(0, ...sites.map((site) => site.where.length));
}

function status(all: Loaded[], options: Options, launcher: Launcher): number {
  if (options.json) {
    const files = all.map((loaded) => ({
      client: loaded.location.client.name,
      scope: loaded.location.scope,
      path: loaded.location.path,
      found: loaded.file !== undefined,
      ...(loaded.syntax ? { error: { line: loaded.syntax.line, column: loaded.syntax.column, message: loaded.syntax.message } } : {}),
      ...(loaded.unreadable ? { error: { message: loaded.unreadable } } : {}),
      servers: (loaded.config?.sites ?? []).map((site) => ({ name: site.name, where: site.where, ...stateOf(site, launcher), ...(site.reason ? { reason: site.reason } : {}) })),
    }));
    writeData(`${JSON.stringify({ launcher, files }, null, 2)}\n`);
  } else {
    let text = `leash: ${launcher.node} ${launcher.script}\n`;
    // Missing files are named when asked for by name, or when none was found (where it looked).
    const nameMissing = options.clients.length > 0 || options.file !== undefined || all.every((loaded) => !loaded.file);
    for (const loaded of all) {
      if (!loaded.file && !loaded.unreadable) {
        if (nameMissing) text += `${header(loaded)}: no such file\n`;
        continue;
      }
      text += `${header(loaded)}\n`;
      if (loaded.unreadable) text += `  unreadable: ${loaded.unreadable}\n`;
      if (loaded.syntax) text += `  does not parse: ${syntaxLine(loaded)}\n`;
      const sites = loaded.config?.sites ?? [];
      if (loaded.config && sites.length === 0) text += '  no servers\n';
      const width = nameWidth(sites);
      for (const site of sites) {
        const { state, via } = stateOf(site, launcher);
        text += `  ${site.where.padEnd(width)}  ${STATE_TEXT[state]}${via ? ` (${via}): install points it here` : ''}${site.reason ? ` (${site.reason})` : ''}\n`;
      }
    }
    writeData(text);
  }
  if (options.file && all.some((loaded) => !loaded.file)) return EXIT_NO_INPUT;
  return all.some((loaded) => loaded.syntax) ? EXIT_SYNTAX : 0;
}

const ACTION_TEXT: Record<Action, string> = { wrap: 'wrapped', repoint: 'pointed at this leash', unwrap: 'unwrapped', none: '' };
/** The same for a dry run, which changes nothing. */
const DRY_ACTION_TEXT: Record<Action, string> = { wrap: 'would be wrapped', repoint: 'would be pointed at this leash', unwrap: 'would be unwrapped', none: '' };

interface Planned {
  loaded: Loaded;
  text: string;
  report: string;
}

/** The new text of one file, checked: parsed again, every stdio server is now as asked. */
async function planFile(loaded: Loaded, launcher: Launcher, undo: boolean, dryRun: boolean): Promise<Planned> {
  const { file, config } = loaded;
  const edits: Edit[] = [];
  let report = '';
  const width = nameWidth(config!.sites);
  for (const site of config!.sites) {
    const line = `  ${site.where.padEnd(width)}  `;
    if (site.kind !== 'stdio') {
      report += `${line}${STATE_TEXT[site.kind]} (${site.reason})\n`;
      continue;
    }
    const plan = planSite(file!.text, site, config!, launcher, undo);
    edits.push(...plan.edits);
    report += `${line}${plan.action === 'none' ? (undo ? 'not wrapped' : 'already wrapped') : (dryRun ? DRY_ACTION_TEXT : ACTION_TEXT)[plan.action]}\n`;
  }
  const text = applyEdits(file!.text, edits);
  const again = await parse(text, loaded.location.client);
  const before = config!.sites.map((site) => `${site.where}:${site.kind}`).join('\n');
  const after = again.sites.map((site) => `${site.where}:${site.kind}`).join('\n');
  const wrong = again.sites.find((site) => site.kind === 'stdio' && (stateOf(site, launcher).state === 'wrapped') === undo);
  if (before !== after || wrong) throw new Error(`the rewrite of ${loaded.location.path} did not come out as planned${wrong ? ` (${wrong.where})` : ''}; nothing written`);
  return { loaded, text, report };
}

async function install(all: Loaded[], options: Options, launcher: Launcher): Promise<number> {
  const broken = all.filter((loaded) => loaded.syntax);
  for (const loaded of broken) writeDiagnostic(`leash mcp: ${syntaxLine(loaded)}\n`);
  if (broken.length > 0) {
    writeDiagnostic(`leash mcp: ${broken.length === 1 ? 'a config does' : `${broken.length} configs do`} not parse: nothing written (fix it, or leave it out with --client/--file)\n`);
    return EXIT_SYNTAX;
  }
  const unreadable = all.filter((loaded) => loaded.unreadable);
  for (const loaded of unreadable) writeDiagnostic(`leash mcp: ${loaded.location.path}: ${loaded.unreadable}\n`);
  if (options.file && (unreadable.length > 0 || !all[0]?.file)) {
    if (!all[0]?.file && !all[0]?.unreadable) writeDiagnostic(`leash mcp: ${options.file}: no such file\n`);
    return EXIT_NO_INPUT;
  }
  if (!options.undo && launcher.script.includes(`${sep}_npx${sep}`)) {
    writeDiagnostic(`leash mcp: warning: this leash runs from npx's cache (${launcher.script}), which npm may clear; install it for good (npm install -g proc-leash) and run leash mcp install from there\n`);
  }
  const planned: Planned[] = [];
  for (const loaded of all) if (loaded.file && loaded.config) planned.push(await planFile(loaded, launcher, options.undo, options.dryRun));
  let code = unreadable.length > 0 ? EXIT_NO_INPUT : 0;
  let out = '';
  for (const loaded of all) if (!loaded.file && !loaded.unreadable) out += `${header(loaded)}: no such file, skipped\n`;
  for (const { loaded, text, report } of planned) {
    out += `${header(loaded)}\n${report || '  no servers\n'}`;
    if (text === loaded.file!.text) continue;
    if (options.dryRun) {
      out += unifiedDiff(loaded.location.path, loaded.file!.text, text);
      continue;
    }
    try {
      const backup = backUp(loaded.file!);
      replaceConfig(loaded.file!, text);
      out += `  written; the old file is ${backup}\n`;
    } catch (error) {
      const changed = error instanceof ChangedMeanwhile;
      out += `  NOT written: ${(error as Error).message}\n`;
      writeDiagnostic(`leash mcp: ${loaded.location.path} not written: ${(error as Error).message}\n`);
      code = Math.max(code, changed ? EXIT_TRY_AGAIN : EXIT_CANT_CREATE);
    }
  }
  if (options.dryRun) out += 'dry run: nothing written\n';
  else if (planned.some(({ loaded, text }) => text !== loaded.file!.text)) out += 'restart the clients (or reload their servers) for the change to take effect\n';
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
  for (const location of locations) all.push(await load(location));
  const launcher = thisLauncher();
  return options.verb === 'status' ? status(all, options, launcher) : install(all, options, launcher);
}
