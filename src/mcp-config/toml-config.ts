// Reads the servers of Codex's config.toml with toml-eslint-parser, which keeps the source
// range of every key and value, so edits are splices and comments stay where they are.
import { parseTOML, type AST } from 'toml-eslint-parser';
import { whereOf } from './show.js';
import { ConfigSyntaxError, type Edit, type ParsedConfig, type ServerSite, type Token, withoutByteOrderMark } from './model.js';

const SERVERS = 'mcp_servers';

function keyName(part: AST.TOMLBare | AST.TOMLQuoted): string {
  return part.type === 'TOMLBare' ? part.name : part.value;
}

/** Every key/value of the document with its full dotted path (tables and inline tables unfolded). */
function keyValues(program: AST.TOMLProgram): { path: string[]; node: AST.TOMLKeyValue }[] {
  const found: { path: string[]; node: AST.TOMLKeyValue }[] = [];
  const visit = (prefix: string[], node: AST.TOMLKeyValue) => {
    const path = [...prefix, ...node.key.keys.map(keyName)];
    found.push({ path, node });
    if (node.value.type === 'TOMLInlineTable') for (const inner of node.value.body) visit(path, inner);
  };
  for (const top of program.body[0]?.body ?? []) {
    if (top.type === 'TOMLKeyValue') visit([], top);
    else if (top.kind === 'standard') for (const node of top.body) visit(top.resolvedKey.map(String), node);
  }
  return found;
}

/** Server names, each with the tables that declare them (`[mcp_servers.NAME]`). */
function declaredServers(program: AST.TOMLProgram): string[] {
  const names: string[] = [];
  for (const top of program.body[0]?.body ?? []) {
    if (top.type === 'TOMLTable' && top.kind === 'standard' && top.resolvedKey[0] === SERVERS && top.resolvedKey.length === 2) names.push(String(top.resolvedKey[1]));
  }
  return names;
}

function stringToken(node: AST.TOMLNode, text: string): Token | undefined {
  if (node.type !== 'TOMLValue' || node.kind !== 'string') return undefined;
  return { start: node.range[0], end: node.range[1], value: node.value, raw: text.slice(node.range[0], node.range[1]) };
}

/** How to add `args = [...]` next to the command key/value, in its own table style. */
function argsAdder(text: string, commandPair: AST.TOMLKeyValue): (arrayText: string) => Edit {
  const keys = commandPair.key.keys;
  const keyPrefix = text.slice(commandPair.key.range[0], keys[keys.length - 1]!.range[0]);
  return (arrayText) => {
    if (commandPair.parent.type === 'TOMLInlineTable') return { offset: commandPair.range[1], length: 0, content: `, ${keyPrefix}args = ${arrayText}` };
    const lineStart = text.lastIndexOf('\n', commandPair.range[0] - 1) + 1;
    const indent = /^[ \t]*/.exec(text.slice(lineStart))![0];
    const newline = text.indexOf('\n', commandPair.range[1]);
    if (newline === -1) return { offset: text.length, length: 0, content: `\n${indent}${keyPrefix}args = ${arrayText}` };
    const eol = text[newline - 1] === '\r' ? '\r\n' : '\n';
    return { offset: newline + 1, length: 0, content: `${indent}${keyPrefix}args = ${arrayText}${eol}` };
  };
}

/** The TOML basic string for `value` (JSON's escapes are TOML's, DEL aside). */
function quoteToml(value: string): string {
  return JSON.stringify(value).replaceAll('\u007f', '\\u007F');
}

export function parseTomlConfig(original: string): ParsedConfig {
  const text = withoutByteOrderMark(original);
  let program: AST.TOMLProgram;
  try {
    program = parseTOML(text);
  } catch (error) {
    const { lineNumber, column, message } = error as { lineNumber?: number; column?: number; message: string };
    throw new ConfigSyntaxError(message, lineNumber ?? 1, (column ?? 0) + 1);
  }
  const pairs = keyValues(program);
  const names: string[] = declaredServers(program);
  for (const { path } of pairs) if (path[0] === SERVERS && path.length >= 2 && !names.includes(path[1]!)) names.push(path[1]!);
  const sites: ServerSite[] = [];
  for (const name of names) {
    const where = whereOf([SERVERS, name]);
    const field = (key: string) => pairs.find(({ path }) => path.length === 3 && path[0] === SERVERS && path[1] === name && path[2] === key)?.node;
    const remote = ['url', 'bearer_token_env_var'].find((key) => field(key));
    if (remote) {
      sites.push({ name, where, kind: 'remote', reason: remote });
      continue;
    }
    const commandPair = field('command');
    if (!commandPair) {
      sites.push({ name, where, kind: 'unsupported', reason: 'no command' });
      continue;
    }
    const command = stringToken(commandPair.value, text);
    if (!command) {
      sites.push({ name, where, kind: 'unsupported', reason: 'command is not a string' });
      continue;
    }
    const site: ServerSite = { name, where, kind: 'stdio', command };
    const argsPair = field('args');
    if (argsPair) {
      if (argsPair.value.type !== 'TOMLArray') {
        sites.push({ name, where, kind: 'unsupported', reason: 'args is not a list' });
        continue;
      }
      const items = argsPair.value.elements.map((element) => stringToken(element, text));
      if (items.some((item) => item === undefined)) {
        sites.push({ name, where, kind: 'unsupported', reason: 'args holds a value that is not a string' });
        continue;
      }
      site.args = { items: items as Token[], open: argsPair.value.range[0] + 1, close: argsPair.value.range[1] };
      // In a table, args alone on its line: removing it is removing that line.
      if (argsPair.parent.type !== 'TOMLInlineTable') {
        const lineStart = text.lastIndexOf('\n', argsPair.range[0] - 1) + 1;
        const newline = text.indexOf('\n', argsPair.range[1]);
        const lineEnd = newline === -1 ? text.length : newline + 1;
        if (/^[ \t]*$/.test(text.slice(lineStart, argsPair.range[0])) && /^[ \t]*\r?\n?$/.test(text.slice(argsPair.range[1], lineEnd))) {
          site.argsRemoval = { offset: lineStart, length: lineEnd - lineStart, content: '' };
        }
      }
    }
    site.addArgs = argsAdder(text, commandPair);
    site.argsAddedAt = site.addArgs('[]').offset;
    if (argsPair) delete site.addArgs;
    sites.push(site);
  }
  const secrets = pairs
    .filter(({ path, node }) => path[0] === SERVERS && path.length >= 4 && ['env', 'headers', 'http_headers', 'env_http_headers'].includes(path[2]!) && node.value.type === 'TOMLValue')
    .map(({ node }) => ({ start: node.value.range[0], end: node.value.range[1] }));
  for (const { path, node } of pairs) if (path[0] === SERVERS && path.length === 3 && path[2] === 'bearer_token' && node.value.type === 'TOMLValue') secrets.push({ start: node.value.range[0], end: node.value.range[1] });
  return { sites, quote: quoteToml, secrets };
}
