// Detached spawns in Python, found on a tree-sitter syntax tree.
//
// Why tree-sitter (WebAssembly, from @vscode/tree-sitter-wasm): it parses Python in-process with
// no Python installed, no compiler and no install script. That package ships the web-tree-sitter
// runtime built together with its grammars, so the runtime and grammar ABI always match; using that
// runtime rather than a separately pinned `web-tree-sitter` saves a dependency and a version
// pairing to keep in step. The grammar recovers from syntax errors; an error node is reported as a
// finding of its own, since the reference's "skip what does not parse" can hide a detached spawn.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { backgroundingIn } from './shell.js';
import type { RawFinding, RuleId } from './types.js';

interface Point {
  row: number;
  column: number;
}
interface SyntaxNode {
  type: string;
  text: string;
  startPosition: Point;
  endPosition: Point;
  hasError: boolean;
  isMissing: boolean;
  children: Array<SyntaxNode | null>;
  namedChildren: Array<SyntaxNode | null>;
  childForFieldName(name: string): SyntaxNode | null;
  childrenForFieldName(name: string): Array<SyntaxNode | null>;
}
interface TreeSitter {
  Parser: { init(): Promise<void>; new (): { setLanguage(language: unknown): void; parse(text: string): { rootNode: SyntaxNode; delete(): void } | null } };
  Language: { load(bytes: Uint8Array): Promise<unknown> };
}

let parserReady: Promise<{ parse(text: string): { rootNode: SyntaxNode; delete(): void } | null }> | undefined;

function pythonParser() {
  parserReady ??= (async () => {
    const require = createRequire(import.meta.url);
    const treeSitter = require('@vscode/tree-sitter-wasm') as TreeSitter;
    await treeSitter.Parser.init();
    const grammar = readFileSync(require.resolve('@vscode/tree-sitter-wasm/wasm/tree-sitter-python.wasm'));
    const language = await treeSitter.Language.load(grammar);
    const parser = new treeSitter.Parser();
    parser.setLanguage(language);
    return parser;
  })();
  return parserReady;
}

/** Names that put a process in a new session or group, by what they are qualified to. */
const DETACHING_NAMES = new Map<string, RuleId>([
  ['os.setsid', 'py-os-detach'],
  ['os.setpgid', 'py-os-detach'],
  ['os.setpgrp', 'py-os-detach'],
  ['posix.setsid', 'py-os-detach'],
  ['posix.setpgid', 'py-os-detach'],
  ['posix.setpgrp', 'py-os-detach'],
  ['pty.fork', 'py-pty'],
  ['pty.spawn', 'py-pty'],
  ['os.forkpty', 'py-pty'],
  ['posix.forkpty', 'py-pty'],
  ['ptyprocess.PtyProcess.spawn', 'py-pty'],
]);
const WINDOWS_FLAGS = new Set(['DETACHED_PROCESS', 'CREATE_NEW_PROCESS_GROUP', 'CREATE_BREAKAWAY_FROM_JOB']);
/** DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_BREAKAWAY_FROM_JOB */
const WINDOWS_FLAG_BITS = 0x8 | 0x200 | 0x1000000;
const DETACH_HELPERS = new Set(['windows_detach_popen_kwargs']);
/** Popen and posix_spawn options: for the first two only false/None/0 keep the group; for the others only None. */
const SESSION_OPTIONS = new Set(['start_new_session', 'setsid']);
const GROUP_OPTIONS = new Set(['process_group', 'setpgroup']);
/** Calls whose string arguments are shell command text or program arguments. */
const COMMAND_RUNNERS = /^(?:subprocess\.\w+|os\.(?:system|popen|spawn\w*|exec\w*|posix_spawnp?)|asyncio\.create_subprocess_(?:shell|exec))$/;

function stringValue(node: SyntaxNode): string | undefined {
  if (node.type === 'concatenated_string') {
    const parts = node.namedChildren.map((child) => (child ? stringValue(child) : undefined));
    return parts.every((p) => p !== undefined) ? parts.join('') : undefined;
  }
  if (node.type !== 'string') return undefined;
  // Interpolations in f-strings become a neutral word, so `f"{cmd} &"` still reads as backgrounding.
  return node.namedChildren
    .map((child) => (child?.type === 'string_content' || child?.type === 'escape_sequence' ? child.text : child?.type === 'interpolation' ? ' x ' : ''))
    .join('');
}

function integerValue(node: SyntaxNode): number | undefined {
  if (node.type !== 'integer') return undefined;
  const text = node.text.replace(/_/g, '').toLowerCase().replace(/l$/, '');
  const value = /^0[oO]/.test(text) ? parseInt(text.slice(2), 8) : /^0b/.test(text) ? parseInt(text.slice(2), 2) : Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** Whether option `name` set to `value` puts the child in a new session or group. */
function optionDetaches(name: string | undefined, value: SyntaxNode): boolean {
  if (name === undefined) return false;
  if (SESSION_OPTIONS.has(name)) return !(value.type === 'false' || value.type === 'none' || integerValue(value) === 0);
  if (GROUP_OPTIONS.has(name)) return value.type !== 'none';
  return false;
}

export async function analysePython(text: string): Promise<RawFinding[]> {
  const parser = await pythonParser();
  const tree = parser.parse(text);
  if (!tree) {
    return [{ rule: 'parse-error', severity: 'error', line: 1, column: 1, message: 'cannot parse (a detached spawn here could go unseen)', spans: [] }];
  }
  try {
    return new PythonFileAnalysis().run(tree.rootNode);
  } finally {
    tree.delete(); // the tree lives in WebAssembly memory, outside the garbage collector's reach
  }
}

class PythonFileAnalysis {
  /** Local name -> module it is bound to (`import os as _os`). */
  private readonly modules = new Map<string, string>();
  /** Local name -> qualified name imported under it (`from os import setsid as s`). */
  private readonly names = new Map<string, string>();
  private readonly findings: RawFinding[] = [];
  private readonly enclosingCalls: SyntaxNode[] = [];

  run(root: SyntaxNode): RawFinding[] {
    if (root.hasError) this.reportParseError(root);
    this.visit(root);
    return this.findings;
  }

  private reportParseError(root: SyntaxNode): void {
    let node = root;
    for (;;) {
      const next = node.children.find((child) => child && (child.type === 'ERROR' || child.isMissing || child.hasError));
      if (!next) break;
      node = next;
      if (node.type === 'ERROR' || node.isMissing) break;
    }
    this.report(node, 'parse-error', 'cannot parse this file (a detached spawn here could go unseen)', 'error');
  }

  private qualify(node: SyntaxNode | null): string | undefined {
    if (!node) return undefined;
    if (node.type === 'identifier') return this.names.get(node.text) ?? this.modules.get(node.text) ?? node.text;
    if (node.type === 'attribute') {
      const owner = this.qualify(node.childForFieldName('object'));
      const member = node.childForFieldName('attribute')?.text;
      return owner && member ? `${owner}.${member}` : undefined;
    }
    return undefined;
  }

  private visitChildren(node: SyntaxNode): void {
    for (const child of node.namedChildren) if (child) this.visit(child);
  }

  private visit(node: SyntaxNode): void {
    switch (node.type) {
      case 'import_statement':
        return this.collectImport(node);
      case 'import_from_statement':
        return this.collectFromImport(node);
      case 'call':
        this.checkCall(node);
        this.enclosingCalls.push(node);
        this.visitChildren(node);
        this.enclosingCalls.pop();
        return;
      case 'keyword_argument': {
        const name = node.childForFieldName('name')?.text;
        const value = node.childForFieldName('value');
        if (!value) return;
        if (optionDetaches(name, value)) this.report(node, 'py-new-session', `\`${name}=${value.text.slice(0, 40)}\` puts the child in its own session or group`);
        if (name === 'creationflags') this.checkFlagLiterals(value);
        return this.visit(value);
      }
      case 'pair': {
        const key = node.childForFieldName('key');
        const value = node.childForFieldName('value');
        const name = key ? stringValue(key) : undefined;
        if (value && optionDetaches(name, value)) this.report(node, 'py-new-session', `"${name}" option puts the child in its own session or group`);
        if (value && name === 'creationflags') this.checkFlagLiterals(value);
        return this.visitChildren(node);
      }
      case 'assignment':
      case 'augmented_assignment':
        return this.checkAssignment(node);
      case 'attribute': {
        const rule = DETACHING_NAMES.get(this.qualify(node) ?? '');
        const member = node.childForFieldName('attribute')?.text ?? '';
        if (rule) this.report(node, rule, `\`${node.text}\` starts a new session or group`);
        else if (WINDOWS_FLAGS.has(member)) this.report(node, 'py-windows-detach', `\`${member}\` detaches the child from its owner on Windows`);
        const owner = node.childForFieldName('object');
        if (owner) this.visit(owner);
        return;
      }
      case 'identifier': {
        const imported = this.names.get(node.text);
        const rule = imported ? DETACHING_NAMES.get(imported) : undefined;
        if (rule) this.report(node, rule, `\`${node.text}\` (${imported}) starts a new session or group`);
        else if (WINDOWS_FLAGS.has(node.text)) this.report(node, 'py-windows-detach', `\`${node.text}\` detaches the child from its owner on Windows`);
        return;
      }
      default:
        return this.visitChildren(node);
    }
  }

  private collectImport(node: SyntaxNode): void {
    for (const child of node.namedChildren) {
      if (child?.type === 'dotted_name') {
        const first = child.text.split('.')[0] as string;
        this.modules.set(first, first);
      } else if (child?.type === 'aliased_import') {
        const name = child.childForFieldName('name')?.text;
        const alias = child.childForFieldName('alias')?.text;
        if (name && alias) this.modules.set(alias, name);
      }
    }
  }

  private collectFromImport(node: SyntaxNode): void {
    const module = node.childForFieldName('module_name');
    if (!module || module.type !== 'dotted_name') return; // relative imports are the project's own code
    for (const child of node.childrenForFieldName('name')) {
      if (child?.type === 'dotted_name') this.names.set(child.text, `${module.text}.${child.text}`);
      else if (child?.type === 'aliased_import') {
        const name = child.childForFieldName('name')?.text;
        const alias = child.childForFieldName('alias')?.text;
        if (name && alias) this.names.set(alias, `${module.text}.${name}`);
      }
    }
  }

  private checkAssignment(node: SyntaxNode): void {
    const left = node.childForFieldName('left');
    const right = node.childForFieldName('right');
    // kw["start_new_session"] = True
    if (left?.type === 'subscript' && right) {
      const index = left.childForFieldName('subscript');
      const name = index ? stringValue(index) : undefined;
      if (optionDetaches(name, right)) this.report(node, 'py-new-session', `\`${left.text}\` set: the child gets its own session or group`);
      if (name === 'creationflags') this.checkFlagLiterals(right);
    }
    // A definition such as `DETACHED_PROCESS = 0x8` is not a use; its uses are reported.
    if (left && left.type !== 'identifier') this.visit(left);
    if (right) this.visit(right);
    const type = node.childForFieldName('type');
    if (type) this.visit(type);
  }

  private checkCall(node: SyntaxNode): void {
    const callee = node.childForFieldName('function');
    const args = node.childForFieldName('arguments');
    const qualified = this.qualify(callee) ?? '';
    const member = callee?.type === 'attribute' ? callee.childForFieldName('attribute')?.text : callee?.text;
    if (member && DETACH_HELPERS.has(member)) this.report(node, 'py-detach-helper', `\`${member}()\` returns options that detach the child`);
    if (!args || args.type !== 'argument_list') return;
    const positional = args.namedChildren.filter((a): a is SyntaxNode => a !== null && a.type !== 'keyword_argument' && a.type !== 'comment');
    // kw.setdefault("start_new_session", True)
    if (member === 'setdefault' && positional.length >= 2) {
      const [first, second] = positional as [SyntaxNode, SyntaxNode];
      const name = stringValue(first);
      if (optionDetaches(name, second)) this.report(node, 'py-new-session', `\`setdefault("${name}", ...)\` gives the child its own session or group`);
    }
    if (COMMAND_RUNNERS.test(qualified)) {
      for (const argument of positional) this.checkShellText(argument);
    }
  }

  private checkShellText(node: SyntaxNode): void {
    if (node.type === 'list' || node.type === 'tuple') {
      for (const element of node.namedChildren) if (element) this.checkShellText(element);
      return;
    }
    const text = stringValue(node);
    const construct = text === undefined ? undefined : backgroundingIn(text);
    if (construct) this.report(node, 'shell-background', `shell command starts a background process (${construct}) that outlives its owner`);
  }

  private checkFlagLiterals(node: SyntaxNode): void {
    const value = integerValue(node);
    if (value !== undefined && (value & WINDOWS_FLAG_BITS) !== 0) {
      this.report(node, 'py-windows-detach', `creation flag ${node.text} includes a Windows detach flag`);
      return;
    }
    for (const child of node.namedChildren) if (child) this.checkFlagLiterals(child);
  }

  private report(node: SyntaxNode, rule: RuleId, message: string, severity: RawFinding['severity'] = 'error'): void {
    const call = this.enclosingCalls[this.enclosingCalls.length - 1];
    const spans: Array<[number, number]> = [[node.startPosition.row + 1, node.endPosition.row + 1]];
    if (call) spans.push([call.startPosition.row + 1, call.endPosition.row + 1]);
    this.findings.push({ rule, severity, line: node.startPosition.row + 1, column: node.startPosition.column + 1, message, spans });
  }
}
