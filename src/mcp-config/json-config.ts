// Reads the servers of a JSON or JSON-with-comments config (Claude, Cursor, VS Code, Windsurf,
// Zed) with Microsoft's jsonc-parser, keeping every node's offsets so edits are splices.
import { type Node, type ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';
import { whereOf } from './show.js';
import { ConfigSyntaxError, type Edit, lineAndColumn, type ParsedConfig, type ServerSite, type Token, withoutByteOrderMark } from './model.js';

/** Keys whose presence marks a server that is reached over the network, never started. */
const REMOTE_KEYS = ['url', 'serverUrl', 'httpUrl'];

function property(object: Node, key: string): Node | undefined {
  if (object.type !== 'object') return undefined;
  for (const child of object.children ?? []) {
    if (child.children?.[0]?.value === key) return child.children[1];
  }
  return undefined;
}

function stringToken(node: Node, text: string): Token | undefined {
  if (node.type !== 'string') return undefined;
  return { start: node.offset, end: node.offset + node.length, value: String(node.value), raw: text.slice(node.offset, node.offset + node.length) };
}

/** The objects at `path` (a `*` step matches every key), with the keys that led there. */
function objectsAt(root: Node, path: readonly string[]): { node: Node; keys: string[] }[] {
  let found = [{ node: root, keys: [] as string[] }];
  for (const step of path) {
    const next: { node: Node; keys: string[] }[] = [];
    for (const { node, keys } of found) {
      if (node.type !== 'object') continue;
      for (const child of node.children ?? []) {
        const key = child.children?.[0]?.value;
        const value = child.children?.[1];
        if (typeof key === 'string' && value && (step === '*' || step === key)) next.push({ node: value, keys: [...keys, key] });
      }
    }
    found = next;
  }
  return found.filter(({ node }) => node.type === 'object');
}

function readSite(name: string, where: string, server: Node, text: string): ServerSite {
  if (server.type !== 'object') return { name, where, kind: 'unsupported', reason: 'not an object' };
  const type = property(server, 'type');
  if (type?.type === 'string' && type.value !== 'stdio') return { name, where, kind: 'remote', reason: `type "${String(type.value)}"` };
  const remoteKey = REMOTE_KEYS.find((key) => property(server, key) !== undefined);
  if (remoteKey) return { name, where, kind: 'remote', reason: remoteKey };
  let holder = server;
  let commandNode = property(server, 'command');
  // Zed's older shape: "command": { "path": ..., "args": [...], "env": {...} }.
  if (commandNode?.type === 'object') {
    holder = commandNode;
    commandNode = property(commandNode, 'path');
  }
  if (!commandNode) return { name, where, kind: 'unsupported', reason: 'no command' };
  const command = stringToken(commandNode, text);
  if (!command) return { name, where, kind: 'unsupported', reason: 'command is not a string' };
  const argsNode = property(holder, 'args');
  const site: ServerSite = { name, where, kind: 'stdio', command };
  if (argsNode) {
    if (argsNode.type !== 'array') return { name, where, kind: 'unsupported', reason: 'args is not a list' };
    const items = (argsNode.children ?? []).map((item) => stringToken(item, text));
    if (items.some((item) => item === undefined)) return { name, where, kind: 'unsupported', reason: 'args holds a value that is not a string' };
    site.args = { items: items as Token[], open: argsNode.offset + 1, close: argsNode.offset + argsNode.length };
    // Removing the args key: with the comma before it, or (when it comes first) the one after it.
    const properties = holder.children ?? [];
    const index = properties.findIndex((child) => child.children?.[1] === argsNode);
    const own = properties[index]!;
    if (index > 0) {
      const previous = properties[index - 1]!;
      site.argsRemoval = { offset: previous.offset + previous.length, length: own.offset + own.length - (previous.offset + previous.length), content: '' };
    } else if (properties.length > 1) {
      site.argsRemoval = { offset: own.offset, length: properties[1]!.offset - own.offset, content: '' };
    }
  } else {
    site.addArgs = (arrayText: string): Edit => ({ offset: command.end, length: 0, content: `, "args": ${arrayText}` });
  }
  site.argsAddedAt = command.end;
  return site;
}

/**
 * A key written twice in `object`: clients (JSON.parse) take the last, an editor may show the
 * first, so leash refuses such an object where it reads or edits, like a syntax error.
 */
function refuseDuplicateKeys(object: Node, text: string, only?: (key: string) => boolean): void {
  if (object.type !== 'object') return;
  const seen = new Set<string>();
  for (const child of object.children ?? []) {
    const key = child.children?.[0];
    if (typeof key?.value !== 'string' || (only && !only(key.value))) continue;
    if (seen.has(key.value)) {
      const { line, column } = lineAndColumn(text, key.offset);
      throw new ConfigSyntaxError(`the key ${JSON.stringify(key.value)} is written twice here (clients read the last one): keep one`, line, column);
    }
    seen.add(key.value);
  }
}

/** Every scalar value below `node` (the values of env and headers). */
function stringSpans(node: Node | undefined, into: { start: number; end: number }[]): void {
  if (!node) return;
  if (node.type === 'string' || node.type === 'number' || node.type === 'boolean') into.push({ start: node.offset, end: node.offset + node.length });
  else if (node.type === 'property') stringSpans(node.children?.[1], into);
  else for (const child of node.children ?? []) stringSpans(child, into);
}

/** jsonc-parser's error codes, as sentences. */
const PARSE_ERRORS: Record<string, string> = {
  InvalidSymbol: 'an unexpected character',
  InvalidNumberFormat: 'a malformed number',
  PropertyNameExpected: 'a property name in double quotes is expected here',
  ValueExpected: 'a value is expected here',
  ColonExpected: 'a colon is expected here',
  CommaExpected: 'a comma is expected here',
  CloseBraceExpected: 'a closing brace `}` is expected here',
  CloseBracketExpected: 'a closing bracket `]` is expected here',
  EndOfFileExpected: 'the file should end here: something follows the top-level value',
  InvalidCommentToken: 'a malformed comment',
  UnexpectedEndOfComment: 'a comment that is never closed',
  UnexpectedEndOfString: 'a string that is never closed',
  UnexpectedEndOfNumber: 'a number cut short',
  InvalidUnicode: 'a malformed \\u escape',
  InvalidEscapeCharacter: 'an escape a JSON string cannot hold',
  InvalidCharacter: 'a character a JSON string cannot hold (a raw line break or control character)',
};

/** The servers under the server maps at `paths` (e.g. [['mcpServers'], ['projects', '*', 'mcpServers']]). */
export function parseJsonConfig(original: string, paths: readonly (readonly string[])[]): ParsedConfig {
  const text = withoutByteOrderMark(original);
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  if (errors.length > 0) {
    const first = errors[0]!;
    const { line, column } = lineAndColumn(text, first.offset);
    const code = printParseErrorCode(first.error);
    throw new ConfigSyntaxError(PARSE_ERRORS[code] ?? code, line, column);
  }
  // Every client's file is an object of settings: anything else is no config of theirs. An empty
  // file (a client may create one) holds no servers.
  if (root && root.type !== 'object') {
    const { line, column } = lineAndColumn(text, root.offset);
    throw new ConfigSyntaxError(`the top level is ${root.type === 'array' ? 'a list' : root.type === 'null' ? 'null' : `a ${root.type}`}, not an object of settings`, line, column);
  }
  const sites: ServerSite[] = [];
  const secrets: { start: number; end: number }[] = [];
  if (root) {
    for (const path of paths) {
      // The objects on the way to the servers, then the server maps, each server and Zed's command object.
      for (let depth = 0; depth < path.length; depth++) {
        for (const { node } of objectsAt(root, path.slice(0, depth))) refuseDuplicateKeys(node, text, path[depth] === '*' ? undefined : (key) => key === path[depth]);
      }
      for (const { node, keys } of objectsAt(root, path)) {
        refuseDuplicateKeys(node, text);
        for (const child of node.children ?? []) {
          const name = child.children?.[0]?.value;
          const server = child.children?.[1];
          if (typeof name !== 'string' || !server) continue;
          refuseDuplicateKeys(server, text);
          const command = property(server, 'command');
          if (command) refuseDuplicateKeys(command, text);
          for (const holder of [server, command]) for (const key of ['env', 'headers']) if (holder) stringSpans(property(holder, key), secrets);
          sites.push(readSite(name, whereOf([...keys, name]), server, text));
        }
      }
    }
  }
  return { sites, quote: (value) => JSON.stringify(value), secrets };
}
