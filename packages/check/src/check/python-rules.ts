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
import { guessBoundNames, type Range, readerWithin, StatementSelection } from './python-ranges.js';
import { flagVariables, pythonInteger, WINDOWS_FLAG_BITS } from './python-flags.js';
import { functionsDefinedOnce, type OwnRunner, ownRunnerAt, ownRunnerCalls, ownRunners } from './python-own-runners.js';
import { type Statement, topLevelStatements } from './python-statements.js';
import { backgroundingIn, daemonOptionIn, DETACHING_PROGRAM_NAMES, detachingCommandIn, detachingCommandWithValues, detachingFlagIn, elevatingScriptIn, isDaemonOptionWord, loneProgramIn, mayHoldOptions, PROJECT_RUNNER_NAMES, mayBeDetachingArgv, PROGRAM_LOOKUP, PROGRAM_LOOKUP_CALLEE, PROGRAM_NAMES, shellMayMatter, startInArgv, startProcessWaitedInConsole, titledStartInArgv, VALUE_MARK } from './shell.js';
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
  parent: SyntaxNode | null;
  childForFieldName(name: string): SyntaxNode | null;
  childrenForFieldName(name: string): Array<SyntaxNode | null>;
  descendantsOfType(type: string): Array<SyntaxNode | null>;
  startIndex: number;
  endIndex: number;
  nextNamedSibling: SyntaxNode | null;
  walk(): TreeCursor;
}
/** A cursor reads a node's type, field and offsets without building a JavaScript object for it. */
interface TreeCursor {
  readonly nodeType: string;
  readonly nodeIsNamed: boolean;
  readonly currentFieldId: number;
  readonly currentNode: SyntaxNode;
  readonly startIndex: number;
  readonly endIndex: number;
  readonly startPosition: Point;
  readonly endPosition: Point;
  gotoFirstChild(): boolean;
  gotoNextSibling(): boolean;
  gotoParent(): boolean;
  delete(): void;
}
interface Grammar {
  fieldIdForName(name: string): number | null;
}
interface Parser {
  setLanguage(language: Grammar): void;
  parse(input: string | ((index: number) => string), oldTree?: null, options?: { includedRanges?: Range[] }): { rootNode: SyntaxNode; delete(): void } | null;
}
interface TreeSitter {
  Parser: { init(): Promise<void>; new (): Parser };
  Language: { load(bytes: Uint8Array): Promise<Grammar> };
}

/** Field ids of the grammar, so the cursor walk compares numbers instead of asking for names. */
interface Fields {
  function: number;
  value: number;
  name: number;
  key: number;
  left: number;
  right: number;
  type: number;
  object: number;
  attribute: number;
}

let parserReady: Promise<{ parser: Parser; fields: Fields }> | undefined;

function pythonParser() {
  parserReady ??= (async () => {
    const require = createRequire(import.meta.url);
    const treeSitter = require('@vscode/tree-sitter-wasm') as TreeSitter;
    await treeSitter.Parser.init();
    const grammar = readFileSync(require.resolve('@vscode/tree-sitter-wasm/wasm/tree-sitter-python.wasm'));
    const language = await treeSitter.Language.load(grammar);
    const parser = new treeSitter.Parser();
    parser.setLanguage(language);
    const field = (name: string): number => {
      const id = language.fieldIdForName(name);
      if (id === null) throw new Error(`the Python grammar has no field '${name}'`);
      return id;
    };
    const fields: Fields = {
      function: field('function'),
      value: field('value'),
      name: field('name'),
      key: field('key'),
      left: field('left'),
      right: field('right'),
      type: field('type'),
      object: field('object'),
      attribute: field('attribute'),
    };
    return { parser, fields };
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
  // pexpect runs its child on a PTY through ptyprocess: the same new session, whichever entry.
  ['pexpect.spawn', 'py-pty'],
  ['pexpect.spawnu', 'py-pty'],
  ['pexpect.run', 'py-pty'],
  ['pexpect.runu', 'py-pty'],
  ['pexpect.pty_spawn.spawn', 'py-pty'],
  ['ptyprocess.PtyProcessUnicode.spawn', 'py-pty'],
  // Daemonizing libraries: the process itself forks and calls setsid, as os.setsid does.
  // python-daemon's DaemonContext (opened by `with` or `.open()`), the daemonize package's Daemonize.
  ['daemon.DaemonContext', 'py-os-detach'],
  ['daemon.daemon.DaemonContext', 'py-os-detach'],
  ['daemonize.Daemonize', 'py-os-detach'],
  // circus' daemonize(): a double fork with setsid, which circusd and projects embedding circus call.
  ['circus.circusd.daemonize', 'py-os-detach'],
]);
/** A function that forks and execs: what runs between the two runs in the child. */
const FORKS = /\bfork\s*\(/;
const EXECS = /\bexec(?:v|l)p?e?\s*\(/;
/** VTE's spawn methods, whose first argument is its PTY flags. */
const VTE_SPAWNS = new Set(['spawn_sync', 'spawn_async', 'spawn_with_fds_async']);
/** The shell's ShellExecute functions (shell32 through ctypes, pywin32's win32api/win32com.shell), in any of their spellings. */
const SHELL_EXECUTE = /^ShellExecute(?:Ex)?[AW]?$/;
/** A string (text or bytes) that is the shell's "runas" verb, in any case. */
const isRunas = (node: SyntaxNode): boolean => /^runas$/i.test(stringValue(node) ?? '');
const WINDOWS_FLAGS = new Set(['DETACHED_PROCESS', 'CREATE_NEW_PROCESS_GROUP', 'CREATE_NEW_CONSOLE', 'CREATE_BREAKAWAY_FROM_JOB']);
const lastPart = (qualified: string): string => qualified.slice(qualified.lastIndexOf('.') + 1);
const DETACH_HELPERS = new Set(['windows_detach_popen_kwargs']);
/** Popen and posix_spawn options: for the first two only false/None/0 keep the group; for the others only None. */
const SESSION_OPTIONS = new Set(['start_new_session', 'setsid']);
const GROUP_OPTIONS = new Set(['process_group', 'setpgroup']);
/** Calls whose string arguments are shell command text or program arguments. */
const COMMAND_RUNNERS = new RegExp(String.raw`^(?:subprocess\.\w+|os\.(?:system|popen|spawn\w*|exec\w*|posix_spawnp?)|asyncio\.create_subprocess_(?:shell|exec))$|^(?:[\w.]*\.)?_?(?:${PROJECT_RUNNER_NAMES})$`);

function stringValue(node: SyntaxNode): string | undefined {
  if (node.type === 'concatenated_string') {
    // A comment may sit between the parts of a string written over several lines.
    const parts = node.namedChildren.filter((child) => child?.type !== 'comment').map((child) => (child ? stringValue(child) : undefined));
    return parts.every((p) => p !== undefined) ? parts.join('') : undefined;
  }
  if (node.type !== 'string') return undefined;
  const prefix = node.children[0]?.type === 'string_start' ? (node.children[0]?.text ?? '') : '';
  const cook = /[rR]/.test(prefix) ? (text: string) => text : (text: string) => text.replace(/[bB]/.test(prefix) ? BYTES_ESCAPE : STRING_ESCAPE, escapedCharacter);
  // Interpolations in f-strings read as VALUE_MARK, so `f"{cmd} &"` still reads as backgrounding.
  return node.namedChildren
    .map((child) => (child?.type === 'string_content' ? cook(child.text) : child?.type === 'interpolation' ? VALUE_MARK : ''))
    .join('');
}

// A string's value, not its source: `"start \"\" /b x"` and `"a\t&"` are read as the shell reads them.
// Raw strings keep their backslashes; in bytes, `\u`, `\U` and `\N{...}` are not escapes.
const STRING_ESCAPE = /\\(?:\r?\n|[\\'"abfnrtv]|[0-7]{1,3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}\n]*\})/g;
const BYTES_ESCAPE = /\\(?:\r?\n|[\\'"abfnrtv]|[0-7]{1,3}|x[0-9a-fA-F]{2})/g;
const SIMPLE_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** The text an escape sequence stands for (a named character `\N{...}` as a neutral letter). */
function escapedCharacter(escape: string): string {
  const kind = escape.charAt(1);
  if (kind === '\n' || kind === '\r') return ''; // a backslash-newline continues the string
  if (kind === 'x' || kind === 'u' || kind === 'U') return String.fromCodePoint(Math.min(parseInt(escape.slice(2), 16), 0x10ffff));
  if (kind === 'N') return 'x';
  if (kind >= '0' && kind <= '7') return String.fromCharCode(parseInt(escape.slice(1), 8));
  return SIMPLE_ESCAPES[kind] ?? kind;
}

// A mapping key holds no parenthesis: with `[^)]*`, every `%(` scanned to the string's end.
const PERCENT_FIELD = /%(?:\([^()]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa%]/g;
const FORMAT_FIELD = /\{\{|\}\}|\{[^{}]*\}/g;

/** Methods whose result, called with no argument, runs as the same command as their text (its blanks trimmed; `encode` with any). */
const TEXT_KEEPING_METHODS = new Set(['strip', 'rstrip', 'lstrip']);

/**
 * The text of a command built from literals: a string; `+` of strings and other values; a string
 * `%` values; a string's `.format(...)`; in parentheses. What is not a literal reads as
 * VALUE_MARK (`"nohup %s &" % cmd` reads as nohup, the mark, &). Undefined where no literal is involved.
 */

function commandValue(node: SyntaxNode, depth = 0): string | undefined {
  if (depth > 200) return undefined;
  if (node.type === 'parenthesized_expression') {
    const inner = node.namedChildren.find((child) => child?.type !== 'comment');
    return inner ? commandValue(inner, depth + 1) : undefined;
  }
  if (node.type === 'binary_operator') {
    const operator = node.childForFieldName('operator')?.type;
    const left = node.childForFieldName('left');
    const right = node.childForFieldName('right');
    if (!left || !right) return undefined;
    if (operator === '+') {
      const a = commandValue(left, depth + 1);
      const b = commandValue(right, depth + 1);
      return a === undefined && b === undefined ? undefined : (a ?? VALUE_MARK) + (b ?? VALUE_MARK);
    }
    if (operator === '%') {
      const format = commandValue(left, depth + 1);
      // Each field takes its value in turn where that is text too (`'"%s" %s' % (os.path.join(d,
      // "elevate.cmd"), x)`); a named field, or any other value, reads as a value.
      let inner: SyntaxNode | null = right;
      while (inner?.type === 'parenthesized_expression') inner = inner.namedChildren.find((child) => child?.type !== 'comment') ?? null;
      const values = inner?.type === 'tuple' ? inner.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment') : inner ? [inner] : [];
      // `%r`/`%a` put the value's repr (quoted), and a `*` width takes a value of its own: values.
      let next = 0;
      let inTurn = true;
      return format?.replace(PERCENT_FIELD, (field) => {
        if (field === '%%') return '%';
        if (field.includes('*')) inTurn = false;
        const value = inTurn && !field.startsWith('%(') && !/[ra]$/.test(field) ? values[next] : undefined;
        next++;
        return (value && commandValue(value, depth + 1)) ?? VALUE_MARK;
      });
    }
    return undefined;
  }
  if (node.type === 'call') {
    const callee = node.childForFieldName('function');
    const method = callee?.type === 'attribute' ? callee.childForFieldName('attribute')?.text : undefined;
    const object = method !== undefined ? callee?.childForFieldName('object') : undefined;
    if (!object) return undefined;
    // A path joined from parts, the last a literal (`os.path.join(bindir, "elevate.exe")`): the
    // program it names, after a value's directory (JS's: path.join).
    if (method === 'join' && /^(?:os\.path|posixpath|ntpath|path)$/.test(object.text)) {
      const parts = (node.childForFieldName('arguments')?.namedChildren ?? []).filter((child): child is SyntaxNode => child !== null && child.type !== 'comment').map((part) => commandValue(part, depth + 1));
      const last = parts[parts.length - 1];
      return last !== undefined && !last.includes(VALUE_MARK) ? parts.map((part) => part ?? VALUE_MARK).join('/') : undefined;
    }
    if (method === 'format') return commandValue(object, depth + 1)?.replace(FORMAT_FIELD, (field) => (field === '{{' ? '{' : field === '}}' ? '}' : VALUE_MARK));
    // The same text in bytes or trimmed (`("xdg-open '%s' &" % path).encode('utf-8')`, syncthing-gtk's
    // os.system): the command a shell runs is the text's.
    const argumentCount = node.childForFieldName('arguments')?.namedChildren.filter((child) => child?.type !== 'comment').length ?? 0;
    if (method === 'encode' || (TEXT_KEEPING_METHODS.has(method as string) && argumentCount === 0)) return commandValue(object, depth + 1);
    return undefined;
  }
  return stringValue(node);
}

function integerValue(node: SyntaxNode): number | undefined {
  return node.type === 'integer' ? pythonInteger(node.text) : undefined;
}

/** Whether option `name` set to `value` puts the child in a new session or group. */
function optionDetaches(name: string | undefined, value: SyntaxNode, heldFalse?: (name: string) => boolean): boolean {
  if (name === undefined) return false;
  // `NEW_SESSION = False` then `start_new_session=NEW_SESSION`: a name every assignment of which keeps the group.
  if (value.type === 'identifier' && heldFalse?.(value.text)) return false;
  // A string is no option's value (`"setsid": "function"` in a keyword table of a syntax mode):
  // the options take booleans, numbers and names.
  if (value.type === 'string' || value.type === 'concatenated_string') return false;
  if (SESSION_OPTIONS.has(name)) return !(value.type === 'false' || value.type === 'none' || integerValue(value) === 0);
  if (GROUP_OPTIONS.has(name)) return value.type !== 'none';
  return false;
}

/**
 * `def run(cmd, start_new_session=False): return Popen(cmd, start_new_session=start_new_session)`:
 * a wrapper's own parameter, whose default keeps the group, handed on as it came. The wrapper
 * detaches nothing by itself; a caller that passes a true value writes it as a keyword of the
 * option's own name, which is reported there (any call's `start_new_session=True` is): so only a
 * parameter named as the option (lutris's `start_new_session=run_in_background` is reported), of
 * the nearest function, whose body binds the name nowhere else.
 */
function handsOnFalseDefault(value: SyntaxNode, memo: Map<string, boolean>): boolean {
  if (value.type !== 'identifier') return false;
  const name = value.text;
  let at = value.parent;
  while (at && at.type !== 'function_definition' && at.type !== 'lambda') at = at.parent;
  if (!at || at.type !== 'function_definition') return false;
  // One answer per function and name: a wrapper may hand the option on many times.
  const key = `${at.startIndex}\0${name}`;
  const known = memo.get(key);
  if (known !== undefined) return known;
  const answer = falseDefaultKept(at, name);
  memo.set(key, answer);
  return answer;
}

function falseDefaultKept(at: SyntaxNode, name: string): boolean {
  const parameters = at.childForFieldName('parameters')?.namedChildren ?? [];
  // With no default the callers always choose (hydrus' `RunSubprocessRawCall(cmd, start_new_session, …)`).
  const plain = parameters.some((p) => (p?.type === 'identifier' && p.text === name) || (p?.type === 'typed_parameter' && p.namedChildren[0]?.type === 'identifier' && p.namedChildren[0]?.text === name));
  const parameter = parameters.find(
    (p) => (p?.type === 'default_parameter' || p?.type === 'typed_default_parameter') && p.childForFieldName('name')?.text === name,
  );
  const fallback = parameter?.childForFieldName('value');
  if (!plain && (!fallback || !(fallback.type === 'false' || fallback.type === 'none' || integerValue(fallback) === 0))) return false;
  const body = at.childForFieldName('body');
  return body !== null && !rebindsName(body, name);
}

/** Whether a statement or expression under `body` binds `name` again (an assignment, augmented or not, a loop's target, `as`, `:=`, `global`/`nonlocal`). */
function rebindsName(body: SyntaxNode, name: string): boolean {
  const binds = (target: SyntaxNode | null): boolean => {
    if (!target) return false;
    if (target.type === 'identifier') return target.text === name;
    if (!/^(?:pattern_list|tuple_pattern|list_pattern|expression_list|tuple|list|list_splat_pattern|parenthesized_expression|as_pattern_target)$/.test(target.type)) return false;
    return target.namedChildren.some((child) => binds(child));
  };
  const stack: SyntaxNode[] = [body];
  while (stack.length > 0) {
    const node = stack.pop() as SyntaxNode;
    switch (node.type) {
      case 'assignment':
      case 'augmented_assignment':
      case 'for_statement':
      case 'for_in_clause':
        if (binds(node.childForFieldName('left'))) return true;
        break;
      case 'named_expression':
        if (binds(node.childForFieldName('name'))) return true;
        break;
      case 'as_pattern':
        if (binds(node.childForFieldName('alias'))) return true;
        break;
      case 'global_statement':
      case 'nonlocal_statement':
        if (node.namedChildren.some((child) => child?.type === 'identifier' && child.text === name)) return true;
        break;
    }
    for (const child of node.namedChildren) if (child) stack.push(child);
  }
  return false;
}

/**
 * `CREATE_NEW_CONSOLE = win32con.CREATE_NEW_CONSOLE`: a module of constants taking the flag under
 * its own name (pywinauto's win32defines), a definition as `DETACHED_PROCESS = 0x8` is. Its uses
 * are reported where they are.
 */
function definesFlagName(node: SyntaxNode, member: string): boolean {
  const parent = node.parent;
  if (parent?.type !== 'assignment' || parent.childForFieldName('right')?.startIndex !== node.startIndex) return false;
  const left = parent.childForFieldName('left');
  return left?.type === 'identifier' && left.text === member;
}

/** How files were parsed since the process started, for tests and benchmarks. */
export const pythonParses = {
  /** Files given to the parser as their selected statements only. */
  statements: 0,
  /** Files parsed whole: asked for, or the statements could not be told. */
  whole: 0,
  /** Files parsed whole after their statements were (a syntax error, a name used in a statement left out). */
  wholeAfterStatements: 0,
  /** Files where no statement held a trigger: nothing parsed. */
  none: 0,
  /** Characters of the files given to the parser by statements, and of the statements given. */
  statementFilesText: 0,
  statementsText: 0,
};

export interface PythonAnalysisOptions {
  /** Parse the whole file rather than only the statements that can matter (for comparison). */
  whole?: boolean;
  /** Libraries the project keeps a copy of beside the file (checker.ts: ownLibraryCopies): its own modules. */
  ownCopies?: ReadonlySet<string>;
}

/**
 * Parsing is most of the cost, and a top-level statement holding no trigger can report nothing
 * (the walk below would skip it), so the parser is given only the statements that hold one. The
 * whole file is parsed instead where the statements cannot be told exactly, where the partial
 * tree has a syntax error (so a parse error is reported as before, at the same place), and where
 * the analysis finds a use of a locally bound module name in a statement left out.
 */
export async function analysePython(text: string, options: PythonAnalysisOptions = {}): Promise<RawFinding[]> {
  const findings = await analyseOnce(text, options);
  // Code from before Python 3.7 may name things `async` (Tornado-era modules, `def f(async=None)`),
  // or a method `await`, which the grammar reads as keywords: where the file does not parse, it is
  // read again with those names spelled `_sync`/`_wait` (the same length, so every line and column stays), and that reading
  // counts if it parses. Code that parses is never read so.
  if (!findings.some((finding) => finding.rule === 'parse-error') || !KEYWORD_AS_NAME.test(text)) return findings;
  const renamed = await analyseOnce(text.replace(KEYWORDS_AS_NAMES, (word) => `_${word.slice(2)}`), options);
  return renamed.some((finding) => finding.rule === 'parse-error') ? findings : renamed;
}
/** At most this many statement ranges are given to the parser; more, and it reads the whole text. */
const MAX_RANGES = 2000;
/** `async` that is no keyword (not before `def`, `for` or `with`), and `await` defined or called as a method (`def await(`, `m.await(`). */
const KEYWORD_AS_NAME = /\basync\b(?![ \t]+(?:def|for|with)\b)|(?<=\bdef[ \t]+|\.)await\b/;
const KEYWORDS_AS_NAMES = new RegExp(KEYWORD_AS_NAME.source, 'g');

async function analyseOnce(text: string, options: PythonAnalysisOptions): Promise<RawFinding[]> {
  const { parser, fields } = await pythonParser();
  // The owners of command runners matter only for shell text: where no string of the file can
  // background a process (the prefilter's own test), their statements are not parsed.
  const triggers = matchStarts(TRIGGERS_WITHOUT_RUNNERS, text);
  const shell = shellMayMatter(text, 'python');
  const programs = matchStarts(PROGRAM_STRINGS, text);
  const runners = shell || programs.length > 0 ? matchStarts(RUNNER_CALLS, text) : [];
  // The file's own runners (python-own-runners.ts): their calls are runner calls too. Where no
  // string may background a process, a program's words are triggers of their own.
  const own = ownRunners(text, runners);
  if (!shell) runners.length = 0;
  else if (own.size > 0) {
    runners.push(...ownRunnerCalls(text, own));
    runners.sort((a, b) => a - b);
  }
  // `systemd_run = resolve_exe("systemd-run")`: the name's uses are where that program is run.
  const lookedUp = programs.length > 0 ? lookedUpPrograms(text) : NO_NAMES;
  if (programs.length > 0) {
    triggers.push(...programs, ...usesOfAny(lookedUp, text));
    triggers.sort((a, b) => a - b);
  }
  // Thousands of ranges cost the parser more than the whole text (40,000: 9 s against 0.3 s whole).
  const selected = options.whole ? undefined : selectStatements(text, triggers, runners);
  const selection = selected && selected.ranges.length <= MAX_RANGES ? selected : undefined;
  if (runners.length > 0) {
    triggers.push(...runners);
    triggers.sort((a, b) => a - b);
  }
  if (selection?.ranges.length === 0) {
    pythonParses.none++; // no statement holds a trigger
    return [];
  }
  if (selection) {
    pythonParses.statements++;
    pythonParses.statementFilesText += text.length;
    for (const range of selection.ranges) pythonParses.statementsText += range.endIndex - range.startIndex;
    const findings = analyseTree(parse(parser, text, selection.ranges), text, fields, triggers, selection, options.ownCopies, lookedUp, own);
    if (findings) return findings;
    pythonParses.wholeAfterStatements++;
  } else {
    pythonParses.whole++;
  }
  return analyseTree(parse(parser, text), text, fields, triggers, undefined, options.ownCopies, lookedUp, own) as RawFinding[];
}

/**
 * The statements that can matter, or undefined when the whole file must be parsed. A statement
 * whose only triggers are command runners' calls (`subprocess.run(...)`) can report only shell
 * text: its own, or text held in a name it uses (checkHeldCommand). It is parsed only where its
 * own text may background a process or it names such a name; most runner calls of a file that
 * holds one backgrounding string are not near it.
 */
function selectStatements(text: string, triggers: number[], runners: number[]): StatementSelection | undefined {
  const statements = topLevelStatements(text);
  if (!statements) return undefined;
  // A concatenated string can only spell an option name where one of its parts starts the name.
  let offsets = triggers.concat(matchStarts(OPTION_NAME_STARTS, text), runnersThatMatter(text, statements, runners));
  for (const use of usesOfAny(new Set(optionConstants(text).keys()), text)) offsets.push(use);
  for (const use of usesOfAny(guessBoundNames(text, WATCHED_MODULES), text)) offsets.push(use);
  offsets.sort((a, b) => a - b);
  return new StatementSelection(statements, offsets);
}

/** The runner calls (ascending) in statements whose own text may background a process or that name a name holding such text. */
function runnersThatMatter(text: string, statements: readonly Statement[], runners: readonly number[]): number[] {
  if (runners.length === 0) return [];
  let shellNames: Set<string> | undefined;
  const kept: number[] = [];
  let index = 0;
  let judged = -1;
  let keep = false;
  for (const runner of runners) {
    while (index < statements.length && (statements[index] as Statement).end <= runner) index++;
    const statement = statements[index];
    if (!statement || statement.start > runner) continue; // between statements: a comment
    if (judged !== index) {
      judged = index;
      const own = text.slice(statement.start, statement.end);
      keep = shellMayMatter(own, 'python');
      if (!keep) {
        if (shellNames === undefined) shellNames = namesHoldingShellText(text); // once a file, and only when needed
        keep = namesAny(own, shellNames);
      }
    }
    if (keep) kept.push(runner);
  }
  return kept;
}

/** The names whose held text or words checkHeldCommand could report (with a shell, the most it reads). */
function namesHoldingShellText(text: string): Set<string> {
  const names = new Set<string>();
  const held = heldCommandText(text);
  for (const [name, helds] of held) {
    // `f()`: the function's name, where a call of it is the runner's argument; a name holding its result.
    if (helds.some((entry) => heldConstruct(entry, true) !== undefined || (entry.resultOf !== undefined && held.has(`${entry.resultOf}()`)))) names.add(name.replace(/^\./, '').replace(/\(\)$/, ''));
  }
  // A program held in a name or member (`self.mountproc = "sshfs"`), run with a list later.
  if (QUOTED_PROGRAM_NAME.test(text)) for (const name of [...programHolders(text).keys(), ...programHolders(text, true).keys()]) names.add(name.replace(/^self\./, ''));
  return names;
}

/** Whether a text names any of `names` (a word of its own): one pass over its words, however many names. */
function namesAny(text: string, names: ReadonlySet<string>): boolean {
  if (names.size === 0) return false;
  for (const word of text.matchAll(/[A-Za-z_]\w*/g)) if (names.has(word[0])) return true;
  return false;
}

/** What a held text or list backgrounds, as checkHeldCommand reads it: words after cmd's `/c`, joined with a shell; or the text. */
function heldConstruct(held: HeldCommand, shell: boolean): string | undefined {
  if (held.resultOf !== undefined) return undefined; // read through the function's own entries
  const words = held.words;
  // A documented program's list run later is read in the runner's function (checkBuiltList), not
  // here: a name's one-line lists are gathered from the whole file, whatever function binds them.
  if (words) return startInArgv(words) ?? daemonOptionIn(words) ?? (shell ? backgroundingIn(words.map((word) => word ?? VALUE_MARK).join(' ')) : undefined);
  // `args.append("--daemonize")`: a word after the program of the list the name holds.
  if (held.appended && isDaemonOptionWord(held.text)) return daemonOptionIn(['', held.text]);
  return backgroundingIn(held.text);
}

type Tree = { rootNode: SyntaxNode; delete(): void } | null;

function parse(parser: Parser, text: string, ranges?: Range[]): Tree {
  try {
    return ranges ? parser.parse(readerWithin(text, ranges), null, { includedRanges: ranges }) : parser.parse(text);
  } catch (error) {
    // A trap inside the WebAssembly parser (out of memory on a huge file) can leave that parser
    // unusable: the next file gets a new one. This file's failure is reported by the caller.
    parserReady = undefined;
    throw error;
  }
}

/** The tree's findings; undefined when a tree of selected statements cannot stand for the file. */
function analyseTree(tree: Tree, text: string, fields: Fields, triggers: number[], selection: StatementSelection | undefined, ownCopies: ReadonlySet<string> | undefined, lookedUp: ReadonlySet<string>, own: ReadonlyMap<string, OwnRunner>): RawFinding[] | undefined {
  if (!tree) {
    if (selection) return undefined;
    return [{ rule: 'parse-error', severity: 'error', line: 1, column: 1, message: 'cannot parse (a detached spawn here could go unseen)', spans: [] }];
  }
  try {
    if (selection && (tree.rootNode.hasError || !startsStatements(tree.rootNode, selection.starts))) return undefined;
    const analysis = new PythonFileAnalysis(text, fields, triggers, selection, ownCopies, lookedUp, own);
    const findings = analysis.run(tree.rootNode);
    return analysis.leftOutUse ? undefined : findings;
  } finally {
    tree.delete(); // the tree lives in WebAssembly memory, outside the garbage collector's reach
  }
}

/** Whether each chosen statement (ascending `starts`) starts one of the root's children, as the tokenizer meant. */
function startsStatements(root: SyntaxNode, starts: number[]): boolean {
  const cursor = root.walk();
  try {
    let next = 0;
    if (cursor.gotoFirstChild()) {
      do {
        const start = cursor.startIndex;
        if (next < starts.length && (starts[next] as number) < start) return false;
        if (next < starts.length && starts[next] === start) next++;
      } while (cursor.gotoNextSibling());
    }
    return next === starts.length;
  } finally {
    cursor.delete();
  }
}

/** A test that the platform is Windows, as written (`sys.platform == "win32"`, `os.name == 'nt'`, ...). */
const WINDOWS_TEST = /^(?:sys\.platform\s*==\s*(["'])win32\1|(["'])win32\2\s*==\s*sys\.platform|sys\.platform\.startswith\(\s*(["'])win(?:32)?\3\s*\)|os\.name\s*==\s*(["'])nt\4|(["'])nt\5\s*==\s*os\.name|platform\.system\(\)\s*==\s*(["'])Windows\6)$/;
/** The same test negated (`!=`, `not …`): its `else` is Windows'. */
const NOT_WINDOWS_TEST = /^(?:sys\.platform\s*!=\s*(["'])win32\1|os\.name\s*!=\s*(["'])nt\2|platform\.system\(\)\s*!=\s*(["'])Windows\3|not\s+sys\.platform\.startswith\(\s*(["'])win(?:32)?\4\s*\))$/;

/** Whether a condition holds only on Windows: a Windows test, alone, in parentheses, or one side of an `and`. */
function windowsOnly(condition: SyntaxNode | null): boolean {
  if (!condition) return false;
  if (condition.type === 'parenthesized_expression') return windowsOnly(condition.namedChildren[0] ?? null);
  if (condition.type === 'boolean_operator' && condition.childForFieldName('operator')?.text === 'and') {
    return windowsOnly(condition.childForFieldName('left')) || windowsOnly(condition.childForFieldName('right'));
  }
  return WINDOWS_TEST.test(condition.text.replace(/\s+/g, ' '));
}

/**
 * Whether `node` runs only on Windows: inside the body of an `if`/`elif` that tests for Windows,
 * or the `else` of one that tests for not-Windows (prefect's Windows stand-in for
 * `anyio.open_process`, which hands `start_new_session` on to a Popen that ignores it there).
 */
function inWindowsOnlyBranch(node: SyntaxNode): boolean {
  for (let child = node, at = node.parent; at; child = at, at = at.parent) {
    if (at.type === 'if_statement' || at.type === 'elif_clause') {
      const consequence = at.childForFieldName('consequence');
      if (consequence && consequence.startIndex === child.startIndex && consequence.type === child.type && windowsOnly(at.childForFieldName('condition'))) return true;
    }
    if (at.type === 'else_clause' && at.parent?.type === 'if_statement') {
      const test = at.parent.childForFieldName('condition');
      if (test && NOT_WINDOWS_TEST.test(test.text.replace(/\s+/g, ' ')) && at.parent.namedChildren.filter((c) => c?.type === 'elif_clause').length === 0) return true;
    }
  }
  return false;
}

/** A keyword that hands ssh its own options (`ssh_opts`, `ssh_args`, `ssh_options`, `ssh_flags`). */
const SSH_OPTIONS_KEYWORD = /^ssh_?(?:opts|options|args|flags)$/;
/** Option names (keywords, dict keys, subscripts) that can detach or carry detach flags. */
const OPTION_NAMES = new Set([...SESSION_OPTIONS, ...GROUP_OPTIONS, 'creationflags']);
const OPTION_WORDS = /start_new_session|setsid|process_group|setpgroup|creationflags/;
/** Last names of DETACHING_NAMES and the Windows flags: an attribute ending otherwise is harmless. */
const DETACHING_MEMBER = /(?:setsid|daemonize|setpgid|setpgrp|fork|spawnu?|runu?|forkpty|DaemonContext|Daemonize|DETACHED_PROCESS|CREATE_NEW_PROCESS_GROUP|CREATE_NEW_CONSOLE|CREATE_BREAKAWAY_FROM_JOB)$/;
/**
 * `NAME = "text"` or `NAME = ["a", 'b']` on one line (string prefixes allowed, no continuation);
 * a list may go on with values added to it (`["start", term, "-NoExit"] + cmd`).
 */
const HELD_COMMAND = /^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*((?:[rRuUfF]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))|\[[^\]\n]*\](?:[ \t]*\+[ \t]*[A-Za-z_][\w.]*(?:\([^()\n]*\))?)*)[ \t]*(?:#[^\n]*)?$/gm;
const HELD_STRING = /([rRuUfF]{0,2})(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')/g;
/** One part of a one-line `+` chain: a string, or a name, attribute or call (a value). */
const HELD_PART = String.raw`(?:[rRuUfF]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|[A-Za-z_][\w.]*(?:\([^()\n]*\))?)`;
/** `NAME += " &"` on one line: a string added to the text a name holds. */
const HELD_ADDITION = /^[ \t]*([A-Za-z_]\w*)[ \t]*\+=[ \t]*([rRuUfF]{0,2})(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')[ \t]*(?:#[^\n]*)?$/gm;
/** `NAME.append("word")` or `NAME.extend(["a", "b"])` on one line: strings added to a list held in a name. */
const HELD_APPEND = /^[ \t]*([A-Za-z_]\w*)\.(?:append|extend)\((\[?[ \t]*[rRuU]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')(?:[ \t]*,[ \t]*[rRuU]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))*[ \t]*\]?)\)[ \t]*(?:#[^\n]*)?$/gm;
/** `NAME = "start " + terminal()` on one line: a `+` chain of strings and values. */
const HELD_CONCATENATION = new RegExp(String.raw`^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*(${HELD_PART}(?:[ \t]*\+[ \t]*${HELD_PART})+)[ \t]*(?:#[^\n]*)?$`, 'gm');
/** The same values returned (`return "server &"`, `return "start " + url`): text a function hands its caller, keyed `return` until its function is known. */
const NAME_ASSIGNED = String.raw`([A-Za-z_]\w*)[ \t]*=[ \t]*`;
// One scan for both: a name with its `=`, or `return` (a name with no `=` after it backtracks to `return`).
const HELD_OR_RETURNED = String.raw`([A-Za-z_]\w*(?=[ \t]*=)|return(?=[ \t]))[ \t]*=?[ \t]*`;
const HELD_OR_RETURNED_COMMAND = new RegExp(HELD_COMMAND.source.replace(NAME_ASSIGNED, HELD_OR_RETURNED), 'gm');
const HELD_OR_RETURNED_CONCATENATION = new RegExp(HELD_CONCATENATION.source.replace(NAME_ASSIGNED, HELD_OR_RETURNED), 'gm');
/** `NAME = f(...)`, `NAME = self.f(...)` on a line: the name holds what the file's function f returns. */
const HELD_RESULT = /^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*((?:self|cls)[ \t]*\.[ \t]*)?([A-Za-z_]\w*)[ \t]*\(/gm;
const HELD_TOKEN = new RegExp(String.raw`[ \t]*(?:([rRuUfF]{0,2})(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')|([A-Za-z_][\w.]*(?:\([^()\n]*\))?))[ \t]*\+?`, 'y');

/** The strings assigned to names in the text (an f-string's fields read as values), by name. */
function heldCommandText(text: string): Map<string, HeldCommand[]> {
  const held = new Map<string, HeldCommand[]>();
  const listOf = (name: string): HeldCommand[] => {
    let list = held.get(name);
    if (!list) held.set(name, (list = []));
    return list;
  };
  /** Every string of a value at `valueAt`, at its own offset (an f-string's fields as values). */
  const addStrings = (list: HeldCommand[], value: string, valueAt: number, waited = false, appended = false): void => {
    for (const string of value.matchAll(HELD_STRING)) {
      const body = string[2] ?? string[3] ?? '';
      if (waited && /^start-process\b/i.test(body)) continue; // waited for in the caller's console
      list.push({ offset: valueAt + (string.index as number), text: /f/i.test(string[1] as string) ? body.replace(/\{[^{}]*\}/g, VALUE_MARK) : body, ...(appended ? { appended } : {}) });
    }
  };
  for (const match of text.matchAll(HELD_OR_RETURNED_COMMAND)) {
    const value = match[2] as string;
    const valueAt = (match.index as number) + (match[0] as string).indexOf(value);
    const list = listOf(match[1] as string);
    // A list is also read word by word, for cmd's start after `/c` (`["cmd", "/c", "start", "", url]`),
    // and whole where a shell joins it; what is added after it is a value.
    const words = value.startsWith('[') ? listWords(value.slice(1, value.indexOf(']'))) : undefined;
    addStrings(list, value, valueAt, words !== undefined && startProcessWaitedInConsole(words));
    if (words) {
      if (value.indexOf(']') < value.length - 1) words.push(undefined);
      list.push({ offset: valueAt, text: '', words });
    }
  }
  // `cmd += " &"`: text added after what the name held, read after a value.
  for (const match of text.matchAll(HELD_ADDITION)) {
    const prefix = match[2] as string;
    const body = (match[3] ?? match[4] ?? '') as string;
    listOf(match[1] as string).push({ offset: (match.index as number) + (match[0] as string).indexOf(prefix + (match[3] !== undefined ? '"' : "'")), text: VALUE_MARK + (/f/i.test(prefix) ? body.replace(/\{[^{}]*\}/g, VALUE_MARK) : body) });
  }
  // `args.append("Start-Process")`, `args.extend(["-Verb", "RunAs"])`: words added to a list held in a name.
  for (const match of text.matchAll(HELD_APPEND)) {
    const value = match[2] as string;
    addStrings(listOf(match[1] as string), value, (match.index as number) + (match[0] as string).indexOf(value), false, true);
  }
  // `cmd = "start " + terminal()`: the chain read as one command text, each value a VALUE_MARK.
  for (const match of text.matchAll(HELD_OR_RETURNED_CONCATENATION)) {
    const value = match[2] as string;
    const valueAt = (match.index as number) + (match[0] as string).indexOf(value);
    let command = '';
    HELD_TOKEN.lastIndex = 0;
    for (let token = HELD_TOKEN.exec(value); token; token = HELD_TOKEN.exec(value)) {
      if (token[4] !== undefined) command += VALUE_MARK;
      else command += /f/i.test(token[1] ?? '') ? (token[2] ?? token[3] ?? '').replace(/\{[^{}]*\}/g, VALUE_MARK) : (token[2] ?? token[3] ?? '');
      if (HELD_TOKEN.lastIndex >= value.length) break;
    }
    listOf(match[1] as string).push({ offset: valueAt, text: command });
  }
  // Returned text, under `f()` for the function returning it (one the file defines once), and the
  // names that hold a call's result: read only where some returned text could be reported.
  const returned = held.get('return');
  held.delete('return');
  if (returned?.some((entry) => heldConstruct(entry, true) !== undefined)) {
    const functionAt = functionsDefinedOnce(text);
    const returning = new Set<string>();
    for (const entry of returned) {
      const key = functionAt(entry.offset);
      if (key === undefined) continue;
      listOf(`${key}()`).push(entry);
      returning.add(key);
    }
    for (const match of text.matchAll(HELD_RESULT)) {
      const called = `${match[2] ? '.' : ''}${match[3] as string}`;
      if (returning.has(called)) listOf(match[1] as string).push({ offset: match.index as number, text: '', resultOf: called });
    }
  }
  return held;
}

interface HeldCommand {
  offset: number;
  text: string;
  words?: Array<string | undefined>;
  /** Added by `.append`/`.extend` to a list. */
  appended?: boolean;
  /** The name holds what this function of the file returns (`cmd = self._submit_command(x)`). */
  resultOf?: string;
}
/** One element of a one-line list: a string (with its prefix) or anything else, up to the next comma. */
const LIST_ELEMENT = /[ \t]*(?:([rRuUfF]{0,2})(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')[ \t]*(?=,|$)|[^,]*)(?:,|$)/gy;
/** The elements of a one-line list's text: a plain string's text, or undefined (an f-string, a name, a call). */
function listWords(inner: string): Array<string | undefined> {
  const words: Array<string | undefined> = [];
  LIST_ELEMENT.lastIndex = 0;
  for (let match = LIST_ELEMENT.exec(inner); match && LIST_ELEMENT.lastIndex <= inner.length; match = LIST_ELEMENT.exec(inner)) {
    const body = match[2] ?? match[3];
    words.push(body !== undefined && !/f/i.test(match[1] ?? '') ? body : undefined);
    if (LIST_ELEMENT.lastIndex >= inner.length) break;
  }
  return words;
}

/** Whether `name` is a parameter of the function enclosing `node` (a call of it runs what the caller hands in). */
function isParameterAt(node: SyntaxNode, name: string): boolean {
  let scope = node.parent;
  while (scope && scope.type !== 'function_definition') scope = scope.parent;
  const parameters = scope?.childForFieldName('parameters');
  if (!parameters) return false;
  return parameters.namedChildren.some((parameter) => {
    const named = parameter?.type === 'identifier' ? parameter : parameter?.childForFieldName('name') ?? parameter?.namedChildren.find((child) => child?.type === 'identifier');
    return named?.text === name;
  });
}

/** Whether a call's arguments hold `shell=True`. */
function hasShellTrue(args: SyntaxNode): boolean {
  return args.namedChildren.some((a) => a?.type === 'keyword_argument' && a.childForFieldName('name')?.text === 'shell' && a.childForFieldName('value')?.text === 'True');
}

/** `~X`: flags cleared, not set. */
/** `~X`: flags cleared, not set. */
const isFlagClearing = (node: SyntaxNode | null | undefined): boolean => node?.type === 'unary_operator' && node.text.startsWith('~');
/**
 * Whether a flag's name, with this parent, is not given to a child: cleared (`~X`) or tested
 * (`if flags & DETACHED_PROCESS and …`). Only for a name itself: a flags value masked as a whole
 * (`(flags | 0x8) & mask`) still holds its bits.
 */
const isFlagNotSet = (parent: SyntaxNode | null | undefined): boolean =>
  isFlagClearing(parent) || (parent?.type === 'binary_operator' && parent.childForFieldName('operator')?.type === '&');
/** A plain dotted name's dunder attribute other than `__call__` (which runs it). */
const INTROSPECTION = /^[A-Za-z_][\w.]*\.__(?!call__)\w+__$/;
const WINDOWS_FLAG_WORDS = /DETACHED_PROCESS|CREATE_NEW_PROCESS_GROUP|CREATE_NEW_CONSOLE|CREATE_BREAKAWAY_FROM_JOB/;
/**
 * Text that every reportable shape holds within its own node: import statements (they change
 * what names mean), the command runners' calls by their owners (`subprocess.X(`, and `os` or
 * `asyncio` before a runner's name: `os.path`, `os.environ`, a `-> subprocess.CompletedProcess`
 * annotation or an `except subprocess.CalledProcessError`, in most functions of many files, made
 * them worth parsing for nothing), and the option, member, helper and flag names. A subtree holding none of these can report nothing and import nothing, so the walk
 * skips it. Two more kinds of trigger are added per file: local names bound to watched modules,
 * as the imports that bind them are read, and every concatenated string, whose parts can split
 * an option name (`{"start_new_" "session": True}`); tree-sitter finds those in WebAssembly.
 */
const TRIGGERS =
  /\b(?:import|subprocess(?=\s*\.\s*\w+\s*\()|os(?=\s*\.\s*(?:system|popen|spawn|exec|posix_spawn))|asyncio(?=\s*\.\s*create_subprocess)|setdefault|windows_detach_popen_kwargs|setsid|setpgid|setpgrp|fork|spawn|pexpect|forkpty|DaemonContext|Daemonize|DETACHED_PROCESS|CREATE_NEW_PROCESS_GROUP|CREATE_NEW_CONSOLE|CREATE_BREAKAWAY_FROM_JOB|start_new_session|process_group|setpgroup|creationflags|[Rr]un[Aa]s|ShellExecute(?:Ex)?[AW]?|SIGHUP|startDetached|PtyFlags|StartTransientUnit|ssh_?(?:opts|options|args|flags))\b/g;
/**
 * A string that is just the name of a program whose job is to detach (`"twistd"`,
 * `'/usr/bin/systemd-run'`): an argument vector may start there, wherever it is built; or cmd's
 * `/c`, which `start` may follow in one.
 */
const PROGRAM_STRINGS = new RegExp(String.raw`["'](?:[\w.\/-]*\/)?(?:${DETACHING_PROGRAM_NAMES}|\/[cCkK])["']|["'][Ss][Tt][Aa][Rr][Tt]["'][ \t]*,[ \t]*(?:""|''|"''"|'""')|\btwistd\.run\(|\bscripts\.twistd\b`, 'g');
/**
 * Whether an element after a program's name makes a list built outside a runner's arguments an
 * argument vector: an option (`-d`, `--user`), a path, or a value that is not a literal. A tuple of
 * bare words (`("systemd-run", "daemon", "mode")`, the names of a program's settings) is data.
 */
const isArgumentLike = (element: SyntaxNode): boolean => {
  const word = stringValue(element);
  return word === undefined || /^-|[\/\\]/.test(word);
};
/** At most this many argument vectors are tried with held words in place: a scope's bindings are few. */
const MAX_HELD_CHOICES = 8;

/**
 * The argument vector with its words held in names (up to the first word known neither way) in
 * place: each name's literal values in the nearest function, from its assignments
 * (`x = "-d"`, either literal branch of `x = "-d" if c else y`) with what `x += "n"` appends.
 */
function heldWordChoices(elements: readonly SyntaxNode[], argv: ReadonlyArray<string | undefined>, memo: Map<string, string[]>): Array<Array<string | undefined>> {
  // Only a detaching program's own words are looked up: most lists hold names that are no flag. The
  // program may be held too, as a literal or where `which` found it (`cupsd = which("cupsd")`).
  const first = elements[0];
  const found = first?.type === 'call' ? programFound(first) : undefined;
  const programs = argv[0] !== undefined ? [argv[0]] : found !== undefined ? [found] : first?.type === 'identifier' ? literalBindings(first, memo).filter((program) => mayBeDetachingArgv(program, undefined)) : [];
  if (!programs.some((program) => mayBeDetachingArgv(program, undefined))) return [];
  let choices: Array<Array<string | undefined>> = [[]];
  let held = false;
  for (let k = 0; k < argv.length; k++) {
    const element = elements[k] as SyntaxNode;
    const values = k === 0 ? programs : argv[k] !== undefined ? [argv[k]] : element.type === 'identifier' ? literalBindings(element, memo) : [];
    if (values.length === 0) break;
    held ||= argv[k] === undefined;
    choices = choices.flatMap((head) => values.map((value) => [...head, value])).slice(0, MAX_HELD_CHOICES);
  }
  return held ? choices : [];
}

/** The literal values a name is bound to in its scope (see heldWordChoices); none when one is not a literal at all. */
function literalBindings(name: SyntaxNode, memo: Map<string, string[]>): string[] {
  // A function's own: its whole body is parsed wherever it is. The module's top level is not read,
  // since its statements that hold no trigger are left out of the parse (python-ranges.ts).
  let scope = name.parent;
  while (scope && scope.type !== 'function_definition') scope = scope.parent;
  const body = scope?.childForFieldName('body');
  if (!body) return [];
  // One walk per scope and name: a module may hand the same name to many runners.
  const key = `${body.startIndex}\0${name.text}`;
  const known = memo.get(key);
  if (known) return known;
  const found = scopeBindings(body, name.text);
  memo.set(key, found);
  return found;
}

/** An element that is one value, not options (see mayHoldOptions): a name, member, item, call or number. */
const PLAIN_VALUE_TYPES = new Set(['identifier', 'attribute', 'subscript', 'call', 'integer']);
const isPlainValue = (element: SyntaxNode): boolean => PLAIN_VALUE_TYPES.has(element.type) && !mayHoldOptions(element.text);

/** The list elements' words: a string's text, anything else unknown. */
const listElementWords = (list: SyntaxNode): Array<string | undefined> =>
  list.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment').map((child) => commandValue(child));

/** Functions that only read a list handed to them (`" ".join(cmd)`, `logger.debug("%s", cmd)`, `len(cmd)`). */
const LIST_READERS = /(?:^|\.)(?:join|format|debug|info|warning|warn|error|exception|critical|log|print|len|str|repr|tuple|list|sorted|isinstance|quote|list2cmdline)$/;
/** An argument list built over statements: its words (unknown parts undefined), and the same read for a missing flag. */
interface BuiltList {
  first: SyntaxNode;
  words: Array<string | undefined>;
  /** The words with values held in names marked (VALUE_MARK), literal words added in a branch read as added, and a held program in place. */
  values: Array<string | undefined>;
  /** Whether `values` holds words added on a branch (read for a missing flag only). */
  merged: boolean;
  parts: number;
}
/** An element's word for a missing flag: its text, a value held in a name (VALUE_MARK), else unknown. */
const elementValue = (element: SyntaxNode, boundToLiterals: (node: SyntaxNode) => boolean): string | undefined =>
  commandValue(element) ?? (isPlainValue(element) && !(element.type === 'identifier' && boundToLiterals(element)) ? VALUE_MARK : undefined);
const listElementValues = (list: SyntaxNode, boundToLiterals: (node: SyntaxNode) => boolean): Array<string | undefined> =>
  list.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment').map((child) => elementValue(child, boundToLiterals));
/** The program a list's first element holds, where it is a name or member (heldProgram). */
const programOfFirst = (list: SyntaxNode, programOf: (node: SyntaxNode) => string | undefined): string | undefined => {
  const first = list.namedChildren.find((child) => child !== null && child.type !== 'comment');
  return first && (first.type === 'identifier' || first.type === 'attribute') ? programOf(first) : undefined;
};

/**
 * The words of an argument list a function builds in a name before `before` (`args = ["ssh"] +
 * base()`, `args += [...]`, `args.extend([...])`, `args.append("-f")`), in source order; a part not
 * written as a list or string is one unknown word. Undefined where the name is not first bound to a
 * list whose first element is a string, or is rebound or changed otherwise after.
 */
function builtListWords(body: SyntaxNode, name: string, before: number, programOf: (node: SyntaxNode) => string | undefined = () => undefined, boundToLiterals: (node: SyntaxNode) => boolean = () => false): BuiltList | undefined {
  let built: (BuiltList & { block: SyntaxNode | null }) | undefined;
  /** A value's words; with `values`, also its words for a missing flag (BuiltList.values). */
  const addValue = (value: SyntaxNode, words: Array<string | undefined>, values?: Array<string | undefined>): void => {
    if (built) built.parts++;
    if (value.type === 'list') {
      words.push(...listElementWords(value));
      values?.push(...listElementValues(value, boundToLiterals));
    } else if (value.type === 'binary_operator' && value.childForFieldName('operator')?.type === '+') {
      if (built) built.parts--; // its operands count
      const left = value.childForFieldName('left');
      const right = value.childForFieldName('right');
      if (left) addValue(left, words, values);
      if (right) addValue(right, words, values);
    } else {
      words.push(undefined);
      values?.push(undefined);
    }
  };
  // An addition in another block than the list's (a branch, a loop) may not happen, or happen on
  // one branch of two: its words are one unknown part. For a missing flag, literal words added
  // there are read as if added (`if reverse: cmd += ["--reverse"]`): a foreground flag among them
  // keeps the program in front either way; anything else stays unknown.
  const addInBlock = (at: SyntaxNode, add: (words: Array<string | undefined>, values: Array<string | undefined>) => void): void => {
    if (!built) return;
    // Nodes are compared by place: the parser hands out a new object at each access.
    if (blockOf(at)?.startIndex === built.block?.startIndex) add(built.words, built.values);
    else {
      const values: Array<string | undefined> = [];
      add([], values);
      built.words.push(undefined);
      built.values.push(...(values.every((value) => value !== undefined && value !== VALUE_MARK) ? values : [undefined]));
      built.merged = true;
      built.parts++;
    }
  };
  const stack: SyntaxNode[] = [body];
  let visited = 0;
  while (stack.length > 0 && visited++ < 5000) {
    const node = stack.pop() as SyntaxNode;
    if (node.startIndex >= before) continue;
    if (node.type === 'function_definition' || node.type === 'class_definition' || node.type === 'lambda') continue;
    if (node.type === 'assignment' || node.type === 'augmented_assignment') {
      const left = node.childForFieldName('left');
      const right = node.childForFieldName('right');
      if (left?.type === 'identifier' && left.text === name && right) {
        if (node.type === 'assignment') {
          let head: SyntaxNode | null = right;
          while (head?.type === 'binary_operator') head = head.childForFieldName('left');
          // Its program a literal, or held in a name or member (`[self.mountproc, ...]`: values only).
          const program = head?.type === 'list' ? (listElementWords(head)[0] ?? programOfFirst(head, programOf)) : undefined;
          if (head?.type === 'list' && program !== undefined) {
            built = { first: node, block: blockOf(node), words: [], values: [], merged: false, parts: 0 };
            addValue(right, built.words, built.values);
            built.values[0] = program;
          } else built = undefined;
        } else if (built && node.childForFieldName('operator')?.type === '+=') {
          addInBlock(node, (words, values) => addValue(right, words, values));
        } else built = undefined;
        continue;
      }
      // Bound or changed in another way (`args, env = build(args)`, `args[1] = "-v"`): not followed.
      if (built && left && namesIn(left).has(name)) built = undefined;
    }
    if (built && node.type === 'delete_statement' && namesIn(node).has(name)) built = undefined;
    // Handed to another function before it runs (`add_fuse_flags(cmd)`): it may change the list.
    if (built && node.type === 'call' && node.endIndex <= before && !LIST_READERS.test(node.childForFieldName('function')?.text ?? '')) {
      const handed = node.childForFieldName('arguments')?.namedChildren.some((argument) => argument?.type === 'identifier' && argument.text === name);
      if (handed) built = undefined;
    }
    if (built && node.type === 'call') {
      const callee = node.childForFieldName('function');
      const object = callee?.type === 'attribute' ? callee.childForFieldName('object') : undefined;
      if (object?.type === 'identifier' && object.text === name) {
        const method = callee?.childForFieldName('attribute')?.text;
        const argument = node.childForFieldName('arguments')?.namedChildren.find((child) => child?.type !== 'comment');
        if (method === 'append' && argument) addInBlock(node, (words, values) => {
          words.push(commandValue(argument));
          values.push(elementValue(argument, boundToLiterals));
          if (built) built.parts++;
        });
        else if (method === 'extend' && argument) addInBlock(node, (words, values) => addValue(argument, words, values));
        else built = undefined; // insert, remove, pop, sort, clear…: the order or the words change
      }
    }
    const children = node.namedChildren;
    for (let k = children.length - 1; k >= 0; k--) {
      const child = children[k];
      if (child) stack.push(child);
    }
  }
  return built;
}

/** The block (or module) a statement is written in. */
function blockOf(node: SyntaxNode): SyntaxNode | null {
  let at = node.parent;
  while (at && at.type !== 'block' && at.type !== 'module') at = at.parent;
  return at;
}

/** The identifiers a node holds (`args, env` of a tuple target, `args` of `args[1]`). */
function namesIn(node: SyntaxNode): Set<string> {
  const names = new Set<string>();
  const stack = [node];
  let visited = 0;
  while (stack.length > 0 && visited++ < 1000) {
    const at = stack.pop() as SyntaxNode;
    if (at.type === 'identifier') names.add(at.text);
    for (const child of at.namedChildren) if (child) stack.push(child);
  }
  return names;
}

function scopeBindings(body: SyntaxNode, name: string): string[] {
  const values: string[] = [];
  const suffixes: string[] = [];
  const stack: SyntaxNode[] = [body];
  let visited = 0;
  while (stack.length > 0 && visited++ < 5000) {
    const node = stack.pop() as SyntaxNode;
    if (node.type === 'function_definition' || node.type === 'class_definition' || node.type === 'lambda') continue;
    const left = node.type === 'assignment' || node.type === 'augmented_assignment' ? node.childForFieldName('left') : null;
    const right = left?.type === 'identifier' && left.text === name ? node.childForFieldName('right') : null;
    if (right) {
      const branches = right.type === 'conditional_expression' ? [right.namedChildren[0], right.namedChildren[2]] : [right];
      const literals = branches.map((branch) => (branch ? (commandValue(branch) ?? programFound(branch)) : undefined)).filter((value): value is string => value !== undefined && !value.includes(VALUE_MARK));
      if (node.type === 'augmented_assignment') suffixes.push(...literals);
      else values.push(...literals);
    }
    const children = node.namedChildren;
    for (let k = children.length - 1; k >= 0; k--) {
      const child = children[k];
      if (child) stack.push(child);
    }
  }
  return [...values, ...values.flatMap((value) => suffixes.map((suffix) => value + suffix))].slice(0, MAX_HELD_CHOICES);
}

/** A program's name alone in quotes, which every binding programHolders reads holds: most files hold none. */
const QUOTED_PROGRAM_NAME = new RegExp(String.raw`["'](?:[\w.\/-]*\/)?(?:${DETACHING_PROGRAM_NAMES}|${PROGRAM_NAMES})(?:\.exe)?["']`, 'i');
/** Whether a function's text binds a name: assigned (alone or in a tuple), a loop's or comprehension's variable, `as` or `:=`. */
function bindsNameOtherwise(text: string, name: string): boolean {
  const n = String.raw`(?<![\w.])${name}(?!\w)`;
  return new RegExp(String.raw`${n}[ \t]*(?::[^=\n]*)?[-+*\/|&]?=(?!=)|${n}[ \t]*,[^=\n]*=(?!=)|,[ \t]*${n}[^=\n]*=(?!=)|\bfor\b[^\n]{0,200}?${n}[^\n]{0,200}?\bin\b|\bas[ \t]+${n}|${n}[ \t]*:=`).test(text);
}
/** Every assignment of a name or `self.` member: its value, to the line's end. */
const ASSIGNMENT = /^([ \t]*)((?:self\.)?[A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?(?:[-+*\/|&]?=)(?!=)[ \t]*([^\n]*)$/gm;
/** A value that is a program's name alone, or a lookup of one: `"sshfs"`, `shutil.which('ssh-agent')`. */
const PROGRAM_VALUE = new RegExp(String.raw`^(?:${PROGRAM_LOOKUP_CALLEE}[ \t]*\([ \t]*)?[rRbBuU]?(["'])((?:[\w.\/-]*\/)?(?:${DETACHING_PROGRAM_NAMES}|${PROGRAM_NAMES})(?:\.exe)?)\1[ \t]*\)?[ \t]*(?:#.*)?$`, 'i');
/**
 * The module's names (or, with `members`, the `self.` members of a class's text) whose every
 * assignment binds one program's name alone (PROGRAM_VALUE): read from the text, since the
 * module's plain statements are not parsed. A name assigned anything else, or two programs, holds none.
 */
function programHolders(text: string, members = false): Map<string, string> {
  const found = new Map<string, string>();
  const spoilt = new Set<string>();
  for (const [, indent, name, value] of text.matchAll(ASSIGNMENT)) {
    // A plain name only at the module's level (a function's own bindings are read in its scope);
    // members only in their class's text.
    if (members ? !(name as string).startsWith('self.') : indent !== '' || (name as string).startsWith('self.')) continue;
    const program = PROGRAM_VALUE.exec(value as string)?.[2];
    const known = found.get(name as string);
    if (program === undefined || (known !== undefined && known !== program)) spoilt.add(name as string);
    else found.set(name as string, program);
  }
  for (const name of spoilt) found.delete(name);
  return found;
}

/**
 * `which("cupsd")`, `shutil.which("tmux")`, `find_executable("x")`, a project's own lookup
 * (`General.resolve_exe('systemd-run')`): the path of the program named, read as its name.
 */
function programFound(node: SyntaxNode): string | undefined {
  if (node.type !== 'call') return undefined;
  const callee = node.childForFieldName('function');
  const name = callee?.type === 'attribute' ? callee.childForFieldName('attribute')?.text : callee?.text;
  if (!PROGRAM_LOOKUP.test(name ?? '')) return undefined;
  const first = node.childForFieldName('arguments')?.namedChildren.find((argument) => argument?.type !== 'comment');
  return first ? stringValue(first) : undefined;
}

const NO_NAMES: ReadonlySet<string> = new Set();
/** `systemd_run = General.resolve_exe("systemd-run")`, `tmux = shutil.which('tmux')`: a name bound, on a line of its own, to a lookup of a detaching program. */
const PROGRAM_LOOKUP_BINDING = new RegExp(String.raw`^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*${PROGRAM_LOOKUP_CALLEE}[ \t]*\([ \t]*[rRbBuU]?["'](?:[\w.\/-]*\/)?(?:${DETACHING_PROGRAM_NAMES})["']`, 'gim');

/** The names PROGRAM_LOOKUP_BINDING binds in the text. */
function lookedUpPrograms(text: string): ReadonlySet<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(PROGRAM_LOOKUP_BINDING)) names.add(match[1] as string);
  return names.size === 0 ? NO_NAMES : names;
}

/** Whether a function body assigns `name` a true literal (`True`, a non-zero integer) anywhere. */
function bindsTrue(body: SyntaxNode, name: string): boolean {
  const stack: SyntaxNode[] = [body];
  for (let visited = 0; stack.length > 0 && visited < 5000; visited++) {
    const node = stack.pop() as SyntaxNode;
    if (node.type === 'function_definition' || node.type === 'class_definition' || node.type === 'lambda') continue;
    if (node.type === 'assignment' && node.childForFieldName('left')?.text === name) {
      const right = node.childForFieldName('right');
      if (right && (right.type === 'true' || (integerValue(right) ?? 0) !== 0)) return true;
    }
    for (const child of node.namedChildren) if (child) stack.push(child);
  }
  return false;
}

/** A call that ends the process: `sys.exit(…)`, `os._exit(…)`, `exit()`, `quit()`. */
const EXIT_CALL = /^(?:(?:sys|os|posix)\.)?_?exit$|^quit$/;

/** Whether a block's statements end the process (at the top of the block: an exit call, `raise SystemExit`). */
/** The parent's branch exits without waiting for the child first (`os.waitpid(pid, 0); sys.exit(rc)` is a plain run). */
const WAITS = /\b(?:os\.)?wait(?:pid|4|3)?\s*\(|\.wait\s*\(/;
function parentLeaves(block: SyntaxNode | null): boolean {
  return blockExits(block) && !WAITS.test(block?.text ?? '');
}
function blockExits(block: SyntaxNode | null): boolean {
  for (const statement of block?.namedChildren ?? []) {
    if (!statement) continue;
    if (statement.type === 'raise_statement' && /^raise\s+SystemExit\b/.test(statement.text)) return true;
    const expression = statement.type === 'expression_statement' ? statement.namedChildren[0] : null;
    const callee = expression?.type === 'call' ? (expression.childForFieldName('function')?.text ?? '') : '';
    // `os.execv(myself, sys.argv)` first: the parent runs on as another program, the same process
    // (swift's re-exec), and its child stays its child; an `exit` after it is never reached.
    if (EXEC_CALL.test(callee)) return false;
    if (EXIT_CALL.test(callee)) return true;
  }
  return false;
}
/** An exec of the os module: the process becomes another program, the same pid. */
const EXEC_CALL = /^(?:os|posix)\.exec[lv]p?e?$/;

/** `pid == 0`, `0 == pid`, `not pid`: the child's branch, whose `else` is the parent's. */
function isChildTest(test: SyntaxNode, result: (node: SyntaxNode) => boolean): boolean {
  let node = test;
  while (node.type === 'parenthesized_expression' && node.namedChildren[0]) node = node.namedChildren[0] as SyntaxNode;
  if (node.type === 'not_operator') {
    const operand = node.childForFieldName('argument');
    return operand !== null && result(operand);
  }
  if (node.type !== 'comparison_operator' || node.namedChildren.length !== 2) return false;
  const [left, right] = node.namedChildren as [SyntaxNode, SyntaxNode];
  const operator = node.text.slice(left.endIndex - node.startIndex, right.startIndex - node.startIndex).trim();
  return operator === '==' && ((result(left) && right.text === '0') || (result(right) && left.text === '0'));
}
/** The parent's branch of an `if` on a fork's result: its body where the test is the parent's, its `else` where the test is the child's. */
function parentBranch(statement: SyntaxNode, result: (node: SyntaxNode) => boolean): SyntaxNode | null {
  const condition = statement.childForFieldName('condition');
  if (!condition) return null;
  if (isParentTest(condition, result)) return statement.childForFieldName('consequence');
  const alternative = statement.childForFieldName('alternative');
  return isChildTest(condition, result) && alternative?.type === 'else_clause' ? alternative.childForFieldName('body') : null;
}
/** The parent's side of a fork's result: the result itself, `> 0`, `!= 0`, or `0 <` / `0 !=`. */
function isParentTest(test: SyntaxNode, result: (node: SyntaxNode) => boolean): boolean {
  let node = test;
  while (node.type === 'parenthesized_expression' && node.namedChildren[0]) node = node.namedChildren[0] as SyntaxNode;
  if (result(node)) return true;
  if (node.type !== 'comparison_operator' || node.namedChildren.length !== 2) return false;
  const [left, right] = node.namedChildren as [SyntaxNode, SyntaxNode];
  const operator = node.text.slice(left.endIndex - node.startIndex, right.startIndex - node.startIndex).trim();
  return (result(left) && right.text === '0' && (operator === '>' || operator === '!=')) || (result(right) && left.text === '0' && (operator === '<' || operator === '!='));
}

/**
 * Whether the fork at `call` is a daemonizing one whose parent exits: `if os.fork(): sys.exit()`
 * (or `> 0`, `!= 0`), or `pid = os.fork()` followed in its block by `if pid: os._exit(0)`; not
 * where its function also calls setsid, setpgrp or setpgid (reported there: one site, one finding).
 */
function parentExitsAfter(call: SyntaxNode, changesSession: Map<number, boolean>): boolean {
  // A fork beside a session or group change is the usual double fork: that change is the finding.
  let scope = call.parent;
  while (scope && scope.type !== 'function_definition' && scope.type !== 'module') scope = scope.parent;
  if (scope) {
    let changes = changesSession.get(scope.startIndex); // read once a function: it may fork many times
    if (changes === undefined) changesSession.set(scope.startIndex, (changes = /\bset(?:sid|pgrp|pgid)\s*\(/.test(scope.text)));
    if (changes) return false;
  }
  let up = call.parent;
  while (up?.type === 'parenthesized_expression' || up?.type === 'comparison_operator' || up?.type === 'not_operator') up = up.parent;
  if (up?.type === 'if_statement') return parentLeaves(parentBranch(up, (node) => node.startIndex === call.startIndex && node.endIndex === call.endIndex));
  const assignment = call.parent?.type === 'assignment' ? call.parent : null;
  const name = assignment?.childForFieldName('left');
  if (!assignment || name?.type !== 'identifier') return false;
  // The next few statements after the assignment, in its block.
  let statement = assignment.parent?.type === 'expression_statement' ? assignment.parent.nextNamedSibling : null;
  for (let k = 0; statement && k < 5; k++, statement = statement.nextNamedSibling) {
    if (statement.type !== 'if_statement') continue;
    // `if pid: os._exit(0)`, or `if pid == 0: <child> else: os._exit(0)` (ganeti's Daemonize).
    if (parentLeaves(parentBranch(statement, (node) => node.type === 'identifier' && node.text === name.text))) return true;
  }
  return false;
}

/** cmd's flag before its script: `/c` or `/k`. */
const CMD_FLAG = /^\/[ck]$/i;
/** A project's own command runner, by its name (ganeti's `utils.RunCmd`, a `run_command` helper): what it is handed is a command. */
const PROJECT_RUNNERS = String.raw`_?(?:${PROJECT_RUNNER_NAMES})`;
/** TRIGGERS less the command runners' owners (`subprocess`, `os`, `asyncio`), which only shell text needs. */
const RUNNER_OWNERS = String.raw`subprocess(?=\s*\.\s*\w+\s*\()|os(?=\s*\.\s*(?:system|popen|spawn|exec|posix_spawn))|asyncio(?=\s*\.\s*create_subprocess)|`;
const TRIGGERS_WITHOUT_RUNNERS = new RegExp(TRIGGERS.source.replace(RUNNER_OWNERS, ''), 'g');
/** The command runners' calls: TRIGGERS' other half. */
const RUNNER_CALLS = new RegExp(String.raw`\b(?:${RUNNER_OWNERS.slice(0, -1)}|${PROJECT_RUNNERS}(?=\s*\())`, 'g');

/**
 * A concatenated string can only spell an option name if one of its parts is a string holding
 * just the start of that name (`"start_new_"`): files without such a string skip the search.
 */
const OPTION_NAME_START = new RegExp(
  `["'](?:${[...new Set([...OPTION_NAMES].flatMap((name) => Array.from(name, (_, i) => name.slice(0, i + 1))))].join('|')})["']`,
);
const OPTION_NAME_STARTS = new RegExp(OPTION_NAME_START.source, 'g');
/** `KEY = "start_new_session"`: a name bound to an option's name, which a dict key or subscript may use (`{KEY: True}`). */
const OPTION_CONSTANT = /^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*(["'])(start_new_session|setsid|process_group|setpgroup|creationflags)\2[ \t]*(?:#.*)?$/gm;

/** Names bound to an option's name anywhere in the file (a name bound twice, to anything else too, is not followed). */
function optionConstants(text: string): Map<string, string> {
  const constants = new Map<string, string>();
  if (!OPTION_WORDS.test(text)) return constants;
  for (const match of text.matchAll(OPTION_CONSTANT)) constants.set(match[1] as string, match[3] as string);
  for (const name of [...constants.keys()]) {
    if (matchStarts(new RegExp(`^[ \\t]*${name}[ \\t]*(?::[^=\\n]*)?=(?!=)`, 'gm'), text).length !== 1) constants.delete(name);
  }
  return constants;
}

/** Assignment targets made only of names and dotted names: writing them is not a use. */
const WRITTEN_NAMES = new Set(['attribute', 'pattern_list', 'tuple_pattern', 'list_pattern']);
/** Modules whose names, bound locally, can make a call a command runner or a detaching name. */
const WATCHED_MODULES = new Set(['subprocess', 'os', 'asyncio', 'posix', 'pty', 'ptyprocess', 'pexpect', 'daemon', 'daemonize', 'circus']);
const isWatched = (qualified: string): boolean => WATCHED_MODULES.has(qualified.split('.')[0] as string);

/** Offsets of the uses of a local name (any occurrence as a whole word). */
function usesOf(name: string, text: string): number[] {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return matchStarts(new RegExp(`(?<!\\w)${escaped}(?!\\w)`, 'g'), text);
}

/**
 * Offsets of the uses of any of `names` (whole words), in one pass over the text: a pass per name
 * made a file importing 20,000 names from a watched module take 17 s.
 */
function usesOfAny(names: ReadonlySet<string>, text: string): number[] {
  if (names.size === 0) return [];
  const uses: number[] = [];
  WORD.lastIndex = 0;
  for (let match = WORD.exec(text); match; match = WORD.exec(text)) if (names.has(match[0])) uses.push(match.index);
  return uses;
}
const WORD = /(?<!\w)[A-Za-z_]\w*/g;

/** Start offsets of every match of `pattern` in `text`, overlapping ones included, ascending. */
function matchStarts(pattern: RegExp, text: string): number[] {
  const starts: number[] = [];
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    starts.push(match.index);
    pattern.lastIndex = match.index + 1;
  }
  return starts;
}

/** Which children of an entered node are walked: none, the named ones, or a few by field. */
const CHILDREN_NONE = 0;
const CHILDREN_NAMED = 1;
/** The first `value` (a keyword argument's). */
const CHILDREN_VALUE = 2;
/** The first `object` (an attribute's). */
const CHILDREN_OBJECT = 3;
/** The first `left`, `type` and `right` (an assignment's), the left unless it only names. */
const CHILDREN_ASSIGNMENT = 4;

/** A node being walked. */
interface Visit {
  children: number;
  /** Fields of its children already walked (a bit each), for the by-field kinds. */
  fields: number;
  /** A call: popped from the enclosing calls when left. */
  call: boolean;
}

// The walk goes over the tree with a TreeCursor and builds a JavaScript node object only where a
// rule could fire. Building one for every node (namedChildren, childForFieldName) cost more than
// the parse itself. Each shortcut below is a cheap test that is false only when the exact check
// (which then runs on real node objects, as before) could not report anything.
class PythonFileAnalysis {
  /** Local name -> module it is bound to (`import os as _os`). */
  private readonly modules = new Map<string, string>();
  /** Local name -> qualified name imported under it (`from os import setsid as s`). */
  private readonly names = new Map<string, string>();
  private readonly findings: RawFinding[] = [];
  /** First and last row of each call being visited, innermost last. */
  private readonly enclosingCalls: Array<[number, number]> = [];
  /** Whether a bare identifier can be reported: a detaching name was imported, or a flag is named. */
  private identifiersMatter: boolean;
  /** Names assigned creation flags with a detach bit (python-flags.ts), read when a flags value is met. */
  private flagVariables: Map<string, number> | undefined;
  /** Strings assigned to names, by name (heldCommandText), read when a name is handed to a command runner. */
  private heldCommands: Map<string, HeldCommand[]> | undefined;
  private readonly heldReported = new Set<number>();
  /** Names whose held text was read, with a shell (1) or without (0) first (checkHeldCommand). */
  private readonly heldNamesRead = new Set<string>();
  /** Where each line of the text starts, found once (lineAt). */
  private lineStarts: number[] | undefined;

  /** The 1-based line of an offset, by a binary search (slicing the text up to it for each was quadratic). */
  private lineAt(offset: number): number {
    if (!this.lineStarts) {
      this.lineStarts = [0];
      for (let at = this.text.indexOf('\n'); at >= 0; at = this.text.indexOf('\n', at + 1)) this.lineStarts.push(at + 1);
    }
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if ((this.lineStarts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }
  /** Functions and names whose built argument list was read (checkBuiltList): once each. */
  private readonly builtListsRead = new Set<string>();
  /** Functions and lambdas judged to run in a child before exec (checkHangupIgnored), by start. */
  private readonly childScopes = new Map<number, boolean>();
  /** Lists and tuples already read as argument vectors, by start. */
  private readonly argumentVectors = new Set<number>();
  private readonly heldFalseNames = new Map<string, boolean>();
  /**
   * Whether every assignment of `name` in the file (at least one) is `False`, `None` or `0`, and
   * nothing else binds it (a parameter, a loop, an import, `as`, `:=`): read from the text, so
   * whatever statements were parsed. By name, file-wide, as the rest of the analysis.
   */
  private readonly heldFalse = (name: string): boolean => {
    let held = this.heldFalseNames.get(name);
    if (held === undefined) {
      // A match with nothing after `=` on its line is prose (a comment's text), never Python.
      const assignments = [...this.text.matchAll(new RegExp(`(?<![\\w.])${name}[ \\t]*(?::[^=\\n]*)?(?:[-+*/|&^%@]|//|>>|<<|\\*\\*)?=(?!=)[ \\t]*([^\\n]*)`, 'g'))].filter((m) => m[1] !== '');
      const otherBinding = new RegExp(`(?:\\b(?:for|as|import|global|nonlocal)[ \\t]+(?:[\\w, \\t]*,[ \\t]*)?${name}\\b|\\b${name}[ \\t]*:=|(?:\\bdef[ \\t]+\\w+[ \\t]*\\(|\\blambda\\b)[^:]*\\b${name}\\b)`);
      held = assignments.length > 0 && assignments.every((m) => /^(?:False|None|0)[ \t]*(?:#.*|[,)].*)?$/.test(m[1] as string)) && !otherBinding.test(this.text);
      this.heldFalseNames.set(name, held);
    }
    return held;
  };
  /** Whether the text names ShellExecute and runas both: only then are its strings read as scripts. */
  private readonly namesElevation: boolean;
  /** handsOnFalseDefault's answers, by function and name. */
  private readonly falseDefaults = new Map<string, boolean>();
  /** Literal values of names held in a scope, by scope and name (heldWordChoices). */
  private readonly heldWords = new Map<string, string[]>();
  /** The module's names bound to one program's name alone (programHolders). */
  private programHolders: Map<string, string> | undefined;
  /** Whether a function binds a name otherwise than to a literal, by function and name (heldProgram). */
  private readonly bindsOtherwise = new Map<string, boolean>();
  /** The program each class's `self.` members hold, by the class's place (programHolders). */
  private readonly memberPrograms = new Map<number, Map<string, string>>();
  /** Whether a function sets a name true (checkOptionHandedOn), by function and name. */
  private readonly boundTrue = new Map<string, boolean>();
  /** Whether a function changes its session or group (parentExitsAfter), by function. */
  private readonly changesSession = new Map<number, boolean>();
  /** Whether the text names systemd's StartTransientUnit at all: its calls are looked for only then. */
  private readonly namesTransientUnit: boolean;
  /** Set when a watched local name is used in a statement the parser was not given. */
  leftOutUse = false;
  /** Names bound to an option's name (`KEY = "start_new_session"`). */
  private readonly constants: Map<string, string>;

  constructor(
    private readonly text: string,
    private readonly fields: Fields,
    triggers: number[],
    /** The statements parsed, when the tree holds only some (undefined: the whole file). */
    private readonly selection: StatementSelection | undefined,
    /** Libraries the project keeps a copy of beside the file: imported, they are its own modules. */
    private readonly ownCopies: ReadonlySet<string> | undefined = undefined,
    /** Names bound to a lookup of a detaching program (lookedUpPrograms): a list they start is an argument vector. */
    private readonly lookedUp: ReadonlySet<string> = NO_NAMES,
    /** The file's own runners by name (python-own-runners.ts). */
    private readonly ownRunners: ReadonlyMap<string, OwnRunner> = new Map(),
  ) {
    this.identifiersMatter = WINDOWS_FLAG_WORDS.test(text);
    this.namesTransientUnit = text.includes('StartTransientUnit');
    this.namesElevation = /ShellExecute/i.test(text) && /runas/i.test(text);
    this.triggers = triggers.slice();
    this.constants = optionConstants(text);
  }

  /** Sorted start offsets of TRIGGERS (and of watched local names) in the text. */
  private triggers: number[];

  /** Uses of watched names added since the last sort: sorted in once, when next needed. */
  private unsorted = false;
  /** Every whole word's offsets, built at the first watched name (a full-text search per name was quadratic). */
  private words: Map<string, number[]> | undefined;

  /** Whether the cursor's node holds a trigger, i.e. visiting it could matter. */
  private mayMatter(cursor: TreeCursor): boolean {
    if (this.unsorted) {
      this.triggers.sort((a, b) => a - b);
      this.unsorted = false;
    }
    const start = cursor.startIndex;
    let low = 0;
    let high = this.triggers.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.triggers[middle] as number) < start) low = middle + 1;
      else high = middle;
    }
    return low < this.triggers.length && (this.triggers[low] as number) < cursor.endIndex;
  }

  /** Makes every use of a local name bound to a watched module a trigger. */
  private watch(local: string, target: string): void {
    if (!WATCHED_MODULES.has(target.split('.')[0] as string)) return;
    const uses = local.includes('.') ? usesOf(local, this.text) : (this.wordIndex().get(local) ?? []);
    if (this.selection && uses.some((use) => this.selection?.leftOut(use))) this.leftOutUse = true;
    for (const use of uses) this.triggers.push(use);
    this.unsorted ||= uses.length > 0;
  }

  private wordIndex(): Map<string, number[]> {
    if (!this.words) {
      this.words = new Map();
      WORD.lastIndex = 0;
      for (let match = WORD.exec(this.text); match; match = WORD.exec(this.text)) {
        const offsets = this.words.get(match[0]);
        if (offsets) offsets.push(match.index);
        else this.words.set(match[0], [match.index]);
      }
    }
    return this.words;
  }

  run(root: SyntaxNode): RawFinding[] {
    if (root.hasError) this.reportParseError(root);
    const concatenated = OPTION_NAME_START.test(this.text) ? root.descendantsOfType('concatenated_string') : [];
    if (concatenated.length > 0) {
      for (const node of concatenated) if (node) this.triggers.push(node.startIndex);
      this.unsorted = true;
    }
    // Keys spelled in parts (`'start_new_' + 'session'`) or by a name bound to an option's name.
    for (const start of matchStarts(OPTION_NAME_STARTS, this.text)) this.triggers.push(start);
    for (const use of usesOfAny(new Set(this.constants.keys()), this.text)) this.triggers.push(use);
    this.unsorted = true;
    this.visitNode(root);
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

  /** `a.b.c` with `a` qualified by the imports; undefined unless every part is a name. Iterative: a dotted name can be any length. */
  private qualify(node: SyntaxNode | null): string | undefined {
    const members: string[] = [];
    let part = node;
    while (part?.type === 'attribute') {
      const member = part.childForFieldName('attribute')?.text;
      if (!member) return undefined;
      members.push(member);
      part = part.childForFieldName('object');
    }
    if (part?.type !== 'identifier') return undefined;
    const owner = this.qualifyName(part.text);
    return owner ? [owner, ...members.reverse()].join('.') : undefined;
  }

  private qualifyName(name: string): string {
    return this.names.get(name) ?? this.modules.get(name) ?? name;
  }

  private textAt(cursor: TreeCursor): string {
    return this.text.slice(cursor.startIndex, cursor.endIndex);
  }

  /**
   * Walks the tree under `node` without recursion: a file's nesting is unbounded (a chain of
   * thousands of calls is valid Python 3.13), and a recursive walk overflows the stack on it. Each
   * node is entered once (its own checks, in enter), and then those of its children that can
   * report anything are walked in source order; the cursor is the walk's only position.
   */
  private visitNode(node: SyntaxNode): void {
    const cursor = node.walk();
    try {
      const parents: Visit[] = [];
      let entered = this.enter(cursor);
      for (;;) {
        if (entered.children !== CHILDREN_NONE && cursor.gotoFirstChild()) {
          parents.push(entered);
          if (this.accepts(entered, cursor)) {
            entered = this.enter(cursor);
            continue;
          }
        } else {
          this.leave(entered);
          if (parents.length === 0) return;
        }
        // On to the next child worth entering, climbing out of the nodes whose children are done.
        for (;;) {
          const parent = parents[parents.length - 1] as Visit;
          if (cursor.gotoNextSibling()) {
            if (this.accepts(parent, cursor)) {
              entered = this.enter(cursor);
              break;
            }
            continue;
          }
          cursor.gotoParent();
          parents.pop();
          this.leave(parent);
          if (parents.length === 0) return;
        }
      }
    } finally {
      cursor.delete();
    }
  }

  /** Whether the child under the cursor is walked, by what its parent's visit asked for. */
  private accepts(parent: Visit, cursor: TreeCursor): boolean {
    switch (parent.children) {
      case CHILDREN_NAMED:
        return cursor.nodeIsNamed;
      case CHILDREN_VALUE:
      case CHILDREN_OBJECT: {
        if (parent.fields !== 0) return false; // only the first such child
        const wanted = parent.children === CHILDREN_VALUE ? this.fields.value : this.fields.object;
        if (cursor.currentFieldId !== wanted) return false;
        parent.fields = 1;
        return true;
      }
      case CHILDREN_ASSIGNMENT: {
        // The first left, type and right parts (in source order). A definition such as
        // `DETACHED_PROCESS = 0x8` is not a use; its uses are reported. Nor is a write to a
        // detaching name (`os.forkpty = None` disables it in a sandbox): a plain name or dotted
        // name on the left is not walked.
        const field = cursor.currentFieldId;
        const bit = field === this.fields.left ? 1 : field === this.fields.right ? 2 : field === this.fields.type ? 4 : 0;
        if (bit === 0 || (parent.fields & bit) !== 0) return false;
        parent.fields |= bit;
        return !(bit === 1 && (cursor.nodeType === 'identifier' || (WRITTEN_NAMES.has(cursor.nodeType) && /^[\w.,\s()[\]]+$/.test(this.textAt(cursor)))));
      }
      default:
        return false;
    }
  }

  /** A node's own checks, on entering it; says which of its children are walked. */
  private enter(cursor: TreeCursor): Visit {
    if (!this.mayMatter(cursor)) return { children: CHILDREN_NONE, fields: 0, call: false };
    switch (cursor.nodeType) {
      case 'import_statement':
        this.collectImport(cursor.currentNode);
        return { children: CHILDREN_NONE, fields: 0, call: false };
      case 'import_from_statement':
        this.collectFromImport(cursor.currentNode);
        return { children: CHILDREN_NONE, fields: 0, call: false };
      case 'call':
        this.enterCall(cursor);
        return { children: CHILDREN_NAMED, fields: 0, call: true };
      case 'keyword_argument':
        this.enterKeywordArgument(cursor);
        return { children: CHILDREN_VALUE, fields: 0, call: false };
      case 'pair':
        this.enterPair(cursor);
        return { children: CHILDREN_NAMED, fields: 0, call: false };
      case 'assignment':
      case 'augmented_assignment':
        this.enterAssignment(cursor);
        return { children: CHILDREN_ASSIGNMENT, fields: 0, call: false };
      case 'attribute':
        // `pexpect.spawn.__init__`, `os.setsid.__doc__`: a dotted name's dunder is introspection
        // (a signature, a docstring), not a use; nothing else is inside a plain dotted name.
        if (INTROSPECTION.test(this.textAt(cursor))) return { children: CHILDREN_NONE, fields: 0, call: false };
        this.enterAttribute(cursor);
        return { children: CHILDREN_OBJECT, fields: 0, call: false };
      case 'identifier':
        this.visitIdentifier(cursor);
        return { children: CHILDREN_NONE, fields: 0, call: false };
      case 'list':
      case 'tuple':
        this.enterArgumentVector(cursor.currentNode);
        return { children: CHILDREN_NAMED, fields: 0, call: false };
      case 'string':
        if (this.namesElevation) this.checkElevatingScript(cursor.currentNode);
        return { children: CHILDREN_NAMED, fields: 0, call: false };
      default:
        return { children: CHILDREN_NAMED, fields: 0, call: false };
    }
  }

  /** Leaving a node, after its children. */
  private leave(visit: Visit): void {
    if (visit.call) this.enclosingCalls.pop();
  }

  private enterCall(cursor: TreeCursor): void {
    const { member, qualified } = this.callee(cursor);
    if ((member !== undefined && (DETACH_HELPERS.has(member) || member === 'setdefault')) || COMMAND_RUNNERS.test(qualified)) {
      this.checkCall(cursor.currentNode);
    }
    const own = member === undefined || this.ownRunners.size === 0 ? undefined : this.ownRunnerOf(member, qualified, cursor.startIndex);
    if (own) this.checkOwnRunnerCall(cursor.currentNode, own);
    if (member === 'spawn') this.checkPtyShape(cursor.currentNode);
    if (member !== undefined && SHELL_EXECUTE.test(member)) this.checkShellExecute(cursor.currentNode, member);
    if (member === 'signal' && qualified === 'signal.signal') this.checkHangupIgnored(cursor.currentNode);
    if (member === 'getattr' && qualified === 'getattr') this.checkGetattr(cursor.currentNode);
    if (member !== undefined && VTE_SPAWNS.has(member)) this.checkVteSpawn(cursor.currentNode, member);
    // Qt's QProcess.startDetached (PyQt, PySide; static or on an instance): on Unix the program is
    // forked twice and leads a session of its own, reparented away from the caller.
    this.checkOptionHandedOn(cursor.currentNode);
    if (member === 'startDetached') this.report(cursor.currentNode, 'py-os-detach', '`startDetached` (Qt\'s QProcess) starts the program in a session of its own, away from its owner');
    // `if os.fork(): sys.exit()`: the daemonizing fork whose parent exits at once, leaving the child
    // to run on in the background past whoever started the process (as a shell's lone `&`).
    if (member === 'fork' && (qualified === 'os.fork' || qualified === 'posix.fork') && parentExitsAfter(cursor.currentNode, this.changesSession)) {
      this.report(cursor.currentNode, 'py-os-detach', '`os.fork()` whose parent exits at once: the child runs on in the background, past whoever started the process');
    }
    // systemd's Manager.StartTransientUnit over D-Bus, called by name or named by a string argument
    // of a generic method call beside systemd's bus name (cockpit's `message_new_method_call(
    // "org.freedesktop.systemd1", …, "StartTransientUnit", …)`):
    // the unit's program runs under systemd, as systemd-run's does. JS: the same.
    if (this.namesTransientUnit && (member === 'StartTransientUnit' || this.transientUnitArgument(cursor.currentNode))) {
      this.report(cursor.currentNode, 'shell-background', 'systemd\'s `StartTransientUnit` (over D-Bus, as systemd-run calls it) starts the unit\'s program under systemd, away from its owner, which cannot end it');
    }
    // Popped when the call is left: findings inside it carry its span.
    this.enclosingCalls.push([cursor.startPosition.row + 1, cursor.endPosition.row + 1]);
  }

  /**
   * Script text calling ShellExecute with "runas", written anywhere (a VBScript or PowerShell
   * script written to a file and run): reported at the string unless a finding already covers its
   * first line (the same text handed to a command runner, or ShellExecute called here). JS: the same.
   */
  private checkElevatingScript(node: SyntaxNode): void {
    const text = stringValue(node);
    if (text === undefined || !elevatingScriptIn(text)) return;
    const line = node.startPosition.row + 1;
    if (this.findings.some((finding) => finding.line === line || finding.spans.some(([first, last]) => first <= line && line <= last))) return;
    this.report(node, 'shell-background', 'script text calls ShellExecute with the "runas" verb: the program it names starts elevated, outside the caller\'s tree and job');
  }

  /** `call(…, "org.freedesktop.systemd1…", …, "StartTransientUnit", …)`: the method named beside systemd's bus name. */
  private transientUnitArgument(call: SyntaxNode): boolean {
    const args = call.childForFieldName('arguments');
    if (args?.type !== 'argument_list') return false;
    const strings = args.namedChildren.filter((argument) => argument?.type === 'string').map((argument) => stringValue(argument as SyntaxNode) ?? '');
    return strings.includes('StartTransientUnit') && strings.some((text) => text.startsWith('org.freedesktop.systemd1'));
  }

  /**
   * The callee's member name (as checkCall reads it) and its qualified name where that could be
   * a command runner. COMMAND_RUNNERS names have exactly two parts, so an attribute whose object
   * is not a plain identifier (three parts or more, or none) can never match and gets ''.
   */
  private callee(cursor: TreeCursor): { member: string | undefined; qualified: string } {
    let member: string | undefined;
    let qualified = '';
    if (!cursor.gotoFirstChild()) return { member, qualified };
    do {
      if (cursor.currentFieldId !== this.fields.function) continue;
      const type = cursor.nodeType;
      if (type === 'identifier') {
        member = this.textAt(cursor);
        qualified = this.qualifyName(member);
      } else if (type === 'attribute') {
        let owner: string | undefined;
        let ownerIsName = false;
        if (cursor.gotoFirstChild()) {
          do {
            const field = cursor.currentFieldId;
            if (field === this.fields.object && owner === undefined) {
              ownerIsName = cursor.nodeType === 'identifier';
              owner = ownerIsName ? this.qualifyName(this.textAt(cursor)) : '';
            } else if (field === this.fields.attribute && member === undefined) {
              member = this.textAt(cursor);
            }
          } while (cursor.gotoNextSibling());
          cursor.gotoParent();
        }
        qualified = ownerIsName && owner && member ? `${owner}.${member}` : '';
      } else {
        member = this.textAt(cursor);
      }
      break;
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
    return { member, qualified };
  }

  /** An option's keyword is checked exactly; its value is walked either way. */
  private enterKeywordArgument(cursor: TreeCursor): void {
    let name: string | undefined;
    let hasValue = false;
    if (!cursor.gotoFirstChild()) return;
    do {
      const field = cursor.currentFieldId;
      if (field === this.fields.value) {
        hasValue = true;
        break;
      }
      if (field === this.fields.name && name === undefined) name = this.textAt(cursor);
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
    if (hasValue && name !== undefined && OPTION_NAMES.has(name)) this.checkKeywordArgument(cursor.currentNode);
    if (hasValue && name === 'lpVerb') this.checkVerb(cursor.currentNode.childForFieldName('value'), cursor.currentNode);
    if (hasValue && name !== undefined && SSH_OPTIONS_KEYWORD.test(name)) this.checkSshOptions(cursor.currentNode);
  }

  /**
   * `self.popen(args, ssh_opts=["-f"])`: ssh's own options handed on by a keyword named for them
   * (plumbum's SshMachine, ssh wrappers' `ssh_args`), read as ssh run with them: `-f` forks the
   * client into the background once it has authenticated, as `ssh -f` in a command does.
   */
  private checkSshOptions(node: SyntaxNode): void {
    const value = node.childForFieldName('value');
    if (!value) return;
    const words = value.type === 'list' || value.type === 'tuple' ? value.namedChildren.filter((child) => child !== null && child.type !== 'comment').map((child) => stringValue(child as SyntaxNode)) : stringValue(value)?.split(/\s+/).filter(Boolean);
    if (!words || words.length === 0) return;
    const construct = detachingCommandIn(['ssh', ...words, VALUE_MARK]);
    if (construct) this.report(node, 'shell-background', `ssh options \`${value.text.slice(0, 40)}\` make ssh fork into the background (${construct}), away from its owner`);
  }

  /** `ShellExecuteW(None, "runas", exe, params, None, 1)`: the verb among its arguments. */
  private checkShellExecute(node: SyntaxNode, member: string): void {
    const args = node.childForFieldName('arguments');
    for (const argument of args?.namedChildren ?? []) {
      // The verb held in a name its function binds to "runas" (`lpOperation = 'runas'`) too.
      const held = argument?.type === 'identifier' && literalBindings(argument, this.heldWords).some((value) => /^runas$/i.test(value));
      if (argument && argument.type !== 'keyword_argument' && (held || isRunas(argument))) {
        this.report(node, 'py-windows-detach', `\`${member}\` with the "runas" verb starts the program elevated, outside the caller's tree and job`);
        return;
      }
    }
  }

  /**
   * VTE's `Terminal.spawn_sync(Vte.PtyFlags.DEFAULT, cwd, argv, env, …)` (and `spawn_async`): the
   * child runs on the terminal's pseudo-terminal, in a session of its own (VTE's child setup calls
   * setsid), as pty.spawn's does. Known by its first argument, VTE's PTY flags.
   */
  private checkVteSpawn(node: SyntaxNode, member: string): void {
    const first = (node.childForFieldName('arguments')?.namedChildren ?? []).find((a): a is SyntaxNode => a !== null && a.type !== 'comment');
    if (first && /(?:^|\.)PtyFlags\.\w+$/.test(first.text)) this.report(node, 'py-pty', `VTE's \`${member}\` starts the child on a pseudo-terminal, in a new session of its own`);
  }

  /**
   * `getattr(os, "setsid", None)`, `getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)`: a
   * detaching name looked up by its text, the idiom for one a platform may lack, is that name.
   */
  private checkGetattr(node: SyntaxNode): void {
    const [owner, attribute] = (node.childForFieldName('arguments')?.namedChildren ?? []).filter((a): a is SyntaxNode => a !== null && a.type !== 'comment');
    const name = attribute && stringValue(attribute);
    const module = owner && (owner.type === 'identifier' || owner.type === 'attribute') ? this.qualify(owner) : undefined;
    if (!name || !module) return;
    const rule = DETACHING_NAMES.get(`${module}.${name}`);
    if (rule) this.report(node, rule, `\`${node.text.slice(0, 60)}\` is \`${module}.${name}\`, which starts a new session or group`);
    else if (WINDOWS_FLAGS.has(name) && (module === 'subprocess' || module === '_winapi' || module === 'win32process')) this.report(node, 'py-windows-detach', `\`${name}\` looked up on ${module} detaches the child from its owner on Windows`);
  }

  /**
   * `signal.signal(signal.SIGHUP, signal.SIG_IGN)` in a child before it execs: nohup's own
   * mechanism, so that the program outlives its session's terminal. In the child: in a
   * `preexec_fn` (a lambda given as one, or a function the file names as one), or in a function
   * that forks and execs. A process that ignores SIGHUP for itself (a server's reload) is not one.
   */
  private checkHangupIgnored(node: SyntaxNode): void {
    const [signalNumber, handler] = (node.childForFieldName('arguments')?.namedChildren ?? []).filter((a): a is SyntaxNode => a !== null && a.type !== 'comment');
    if (!signalNumber || !handler || lastPart(this.qualify(signalNumber) ?? '') !== 'SIGHUP' || lastPart(this.qualify(handler) ?? '') !== 'SIG_IGN') return;
    let scope = node.parent;
    while (scope && scope.type !== 'lambda' && scope.type !== 'function_definition') scope = scope.parent;
    if (!scope) return;
    // Judged once a scope: a function holding thousands of such calls reads its text once.
    let inChild = this.childScopes.get(scope.startIndex);
    if (inChild === undefined) {
      if (scope.type === 'lambda') inChild = scope.parent?.type === 'keyword_argument' && scope.parent.childForFieldName('name')?.text === 'preexec_fn';
      else {
        const name = scope.childForFieldName('name')?.text ?? '';
        inChild = (FORKS.test(scope.text) && EXECS.test(scope.text)) || (name !== '' && new RegExp(`\\bpreexec_fn\\s*=\\s*(?:self\\.)?${name}\\b`).test(this.text));
      }
      this.childScopes.set(scope.startIndex, inChild);
    }
    if (inChild) this.report(node, 'py-os-detach', 'the child ignores SIGHUP before it execs (nohup\'s mechanism): it keeps running when its session ends');
  }

  /**
   * `start_new_session = True` in a function, then `run_raw(cmd, start_new_session, …)`: a name
   * named as a session or group option, which the function binds to a true value, handed on
   * positionally to a helper (hydrus' `RunSubprocessRawCall`, whose own parameter of that name is
   * handed to Popen as it came: the wrapper is not the site, its caller is).
   */
  private checkOptionHandedOn(call: SyntaxNode): void {
    const args = call.childForFieldName('arguments');
    if (args?.type !== 'argument_list') return;
    for (const argument of args.namedChildren) {
      if (argument?.type !== 'identifier' || !(SESSION_OPTIONS.has(argument.text) || GROUP_OPTIONS.has(argument.text))) continue;
      let scope = argument.parent;
      while (scope && scope.type !== 'function_definition') scope = scope.parent;
      const body = scope?.childForFieldName('body');
      if (!body) continue;
      // One walk per function and name: a planted file may hand the name on thousands of times.
      const key = `${body.startIndex}\0${argument.text}`;
      let setTrue = this.boundTrue.get(key);
      if (setTrue === undefined) this.boundTrue.set(key, (setTrue = bindsTrue(body, argument.text)));
      if (setTrue) this.report(argument, 'py-new-session', `\`${argument.text}\`, set true here, is handed on to \`${call.childForFieldName('function')?.text.slice(0, 40) ?? 'a helper'}\`: the child gets its own session or group`);
    }
  }

  /** `SHELLEXECUTEINFO(lpVerb="runas", ...)`, `info.lpVerb = "runas"`: ShellExecuteEx will start the program elevated. */
  private checkVerb(value: SyntaxNode | null, at: SyntaxNode): void {
    if (value && isRunas(value)) this.report(at, 'py-windows-detach', 'the "runas" verb makes ShellExecuteEx start the program elevated, outside the caller\'s tree and job');
  }

  private checkKeywordArgument(node: SyntaxNode): void {
    const name = node.childForFieldName('name')?.text;
    const value = node.childForFieldName('value');
    if (!value) return;
    if (optionDetaches(name, value, this.heldFalse) && !(value.text === name && handsOnFalseDefault(value, this.falseDefaults))) this.report(node, 'py-new-session', `\`${name}=${value.text.slice(0, 40)}\` puts the child in its own session or group`);
    if (name === 'creationflags') this.checkFlagLiterals(value);
  }

  private enterPair(cursor: TreeCursor): void {
    // Only a string key can name an option; a plain string's value is its own text less the
    // quotes, so it holds the option's name verbatim. Concatenated keys always go the exact way.
    let exact = false;
    if (cursor.gotoFirstChild()) {
      do {
        if (cursor.currentFieldId !== this.fields.key) continue;
        const type = cursor.nodeType;
        exact =
          type === 'concatenated_string' ||
          type === 'binary_operator' ||
          (type === 'identifier' && this.constants.has(this.textAt(cursor))) ||
          (type === 'string' && OPTION_WORDS.test(this.textAt(cursor)));
        break;
      } while (cursor.gotoNextSibling());
      cursor.gotoParent();
    }
    if (exact) this.checkPair(cursor.currentNode);
  }

  private checkPair(node: SyntaxNode): void {
    const key = node.childForFieldName('key');
    const value = node.childForFieldName('value');
    const name = key ? this.keyValue(key) : undefined;
    if (value && optionDetaches(name, value, this.heldFalse)) this.report(node, 'py-new-session', `"${name}" option puts the child in its own session or group`);
    if (value && name === 'creationflags') this.checkFlagLiterals(value);
  }

  /** A dotted name is checked whole; of its parts only the object is walked. */
  private enterAttribute(cursor: TreeCursor): void {
    // The member is the attribute's last token, so its text ends with the member's name.
    if (DETACHING_MEMBER.test(this.textAt(cursor))) {
      const node = cursor.currentNode;
      const rule = DETACHING_NAMES.get(this.qualify(node) ?? '');
      const member = node.childForFieldName('attribute')?.text ?? '';
      if (rule) this.report(node, rule, `\`${node.text}\` starts a new session or group`);
      else if (WINDOWS_FLAGS.has(member) && !isFlagNotSet(node.parent) && !definesFlagName(node, member)) this.report(node, 'py-windows-detach', `\`${member}\` detaches the child from its owner on Windows`);
    }
  }

  private visitIdentifier(cursor: TreeCursor): void {
    if (!this.identifiersMatter) return;
    const name = this.textAt(cursor);
    const imported = this.names.get(name);
    const rule = imported ? DETACHING_NAMES.get(imported) : undefined;
    if (rule) this.report(cursor.currentNode, rule, `\`${name}\` (${imported}) starts a new session or group`);
    else if (WINDOWS_FLAGS.has(name) && !isFlagNotSet(cursor.currentNode.parent)) this.report(cursor.currentNode, 'py-windows-detach', `\`${name}\` detaches the child from its owner on Windows`);
    // `from subprocess import DETACHED_PROCESS as DP`: the alias is the flag wherever it is used
    // (the import holds the flag's name, so identifiers are walked in such a file).
    else if (imported && WINDOWS_FLAGS.has(lastPart(imported)) && !isFlagNotSet(cursor.currentNode.parent)) this.report(cursor.currentNode, 'py-windows-detach', `\`${name}\` (${imported}) detaches the child from its owner on Windows`);
  }

  /** `kw["start_new_session"] = True` is checked here; the parts are walked by accepts(). */
  private enterAssignment(cursor: TreeCursor): void {
    if (!cursor.gotoFirstChild()) return;
    // The left side comes first.
    let subscriptTarget = false;
    let verbTarget = false;
    do {
      if (cursor.currentFieldId === this.fields.left) {
        subscriptTarget = cursor.nodeType === 'subscript';
        verbTarget = cursor.nodeType === 'attribute' && this.textAt(cursor).endsWith('.lpVerb');
        break;
      }
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
    if (subscriptTarget) this.checkSubscriptAssignment(cursor.currentNode);
    if (verbTarget) this.checkVerb(cursor.currentNode.childForFieldName('right'), cursor.currentNode);
  }

  private checkSubscriptAssignment(node: SyntaxNode): void {
    const left = node.childForFieldName('left');
    const right = node.childForFieldName('right');
    if (left?.type !== 'subscript' || !right) return;
    const index = left.childForFieldName('subscript');
    const name = index ? this.keyValue(index) : undefined;
    if (optionDetaches(name, right, this.heldFalse)) this.report(node, 'py-new-session', `\`${left.text}\` set: the child gets its own session or group`);
    if (name === 'creationflags') this.checkFlagLiterals(right);
  }

  /** A key's string: a literal, `+` of literals, or a name bound to an option's name. */
  private keyValue(node: SyntaxNode, depth = 0): string | undefined {
    if (node.type === 'identifier') return this.constants.get(node.text);
    if (node.type === 'parenthesized_expression' && depth < 8) {
      const inner = node.namedChildren[0];
      return inner ? this.keyValue(inner, depth + 1) : undefined;
    }
    if (node.type === 'binary_operator' && depth < 8 && node.childForFieldName('operator')?.type === '+') {
      const left = node.childForFieldName('left');
      const right = node.childForFieldName('right');
      const a = left ? this.keyValue(left, depth + 1) : undefined;
      const b = a !== undefined && right ? this.keyValue(right, depth + 1) : undefined;
      return b === undefined ? undefined : (a as string) + b;
    }
    return stringValue(node);
  }

  private collectImport(node: SyntaxNode): void {
    for (const child of node.namedChildren) {
      if (child?.type === 'dotted_name') {
        const first = child.text.split('.')[0] as string;
        this.modules.set(first, this.ownName(first));
      } else if (child?.type === 'aliased_import') {
        const name = child.childForFieldName('name')?.text;
        const alias = child.childForFieldName('alias')?.text;
        if (name && alias) {
          this.modules.set(alias, this.ownName(name));
          this.watch(alias, this.ownName(name));
        }
      }
    }
  }

  private collectFromImport(node: SyntaxNode): void {
    const module = node.childForFieldName('module_name');
    if (!module) return;
    if (module.type !== 'dotted_name') {
      // A module of the package itself (`from . import pexpect`: the package's own wrapper, not a
      // copy of the library, which a folder such as `._vendor` holds): a name a watched library has
      // is the project's, and no longer reads as the library's (metakernel's replwrap). Other
      // names stay unbound, read by their shape (Terminus' own PtyProcess subclass, by its size).
      if (!/^\.+$/.test(module.text)) return;
      for (const child of node.childrenForFieldName('name')) {
        const name = child?.type === 'dotted_name' ? child.text : child?.type === 'aliased_import' ? child.childForFieldName('alias')?.text : undefined;
        const imported = child?.type === 'aliased_import' ? child.childForFieldName('name')?.text : name;
        if (name && imported && WATCHED_MODULES.has(imported)) this.names.set(name, `.${imported}`);
      }
      return;
    }
    const from = this.ownName(module.text);
    for (const child of node.childrenForFieldName('name')) {
      if (child?.type === 'dotted_name') this.bindName(child.text, `${from}.${child.text}`);
      else if (child?.type === 'aliased_import') {
        const name = child.childForFieldName('name')?.text;
        const alias = child.childForFieldName('alias')?.text;
        if (name && alias) this.bindName(alias, `${from}.${name}`);
      }
    }
  }

  /**
   * A module's qualified name, marked as the project's own (a leading `.`, as a relative import's)
   * where the project keeps a copy of that library beside the file: no rule knows it by name.
   */
  private ownName(module: string): string {
    return this.ownCopies?.has(module.split('.')[0] as string) ? `.${module}` : module;
  }

  private bindName(local: string, qualified: string): void {
    // `try: from ptyprocess import PtyProcessUnicode` / `except ImportError: from winpty import
    // PtyProcess as PtyProcessUnicode`: a name bound to a watched module's on some path keeps that
    // binding (a spawn function on some path is one), whatever other module a fallback imports.
    const previous = this.names.get(local);
    if (previous !== undefined && isWatched(previous) && !isWatched(qualified)) return;
    this.names.set(local, qualified);
    if (DETACHING_NAMES.has(qualified)) this.identifiersMatter = true;
    this.watch(local, qualified);
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
      const name = this.keyValue(first);
      if (optionDetaches(name, second, this.heldFalse)) this.report(node, 'py-new-session', `\`setdefault("${name}", ...)\` gives the child its own session or group`);
    }
    if (COMMAND_RUNNERS.test(qualified)) {
      const shell = hasShellTrue(args);
      // The command alone as the only argument: os.exec*/os.spawn* take a path, then the words.
      for (const argument of positional) this.checkCommand(argument, shell, positional.length === 1 && !/^os\.(?:exec|spawn)/.test(qualified));
    }
  }

  /** A runner's command argument: its shell text or words, a list joined for a shell, a documented program alone. */
  private checkCommand(argument: SyntaxNode, shell: boolean, alone: boolean): void {
    const before = this.findings.length;
    this.checkShellText(argument, shell);
    if (shell && this.findings.length === before) this.checkJoinedList(argument);
    if (alone && this.findings.length === before) this.checkLoneProgram(argument);
  }

  /** The own runner a call of `member` (qualified `qualified`, at `at`) is: a plain name's, or a method's on `self`, `cls` or its class. */
  private ownRunnerOf(member: string, qualified: string, at: number): OwnRunner | undefined {
    if (qualified === member) return ownRunnerAt(this.ownRunners, undefined, member, at);
    const dot = qualified.length - member.length - 1;
    return dot > 0 && qualified.endsWith(`.${member}`) ? ownRunnerAt(this.ownRunners, qualified.slice(0, dot), member, at) : undefined;
  }

  /** A call of one of the file's own runners (python-own-runners.ts): what it passes for the parameter it runs is the command. */
  private checkOwnRunnerCall(node: SyntaxNode, runner: OwnRunner): void {
    const args = node.childForFieldName('arguments');
    if (args?.type !== 'argument_list') return;
    let command: SyntaxNode | undefined;
    let position = 0;
    for (const argument of args.namedChildren) {
      if (!argument || argument.type === 'comment' || argument.type === 'dictionary_splat') continue;
      if (argument.type === 'keyword_argument') {
        if (argument.childForFieldName('name')?.text === runner.parameter) command = argument.childForFieldName('value') ?? undefined;
      } else if (argument.type === 'list_splat') {
        if (runner.index >= position) return; // where the command falls is not known
      } else if (position++ === runner.index) {
        command = argument;
      }
    }
    if (command) this.checkCommand(command, runner.shell, runner.alone);
  }

  /** `os.system("sshd")`, `Popen(["nginx"])`: the runner's command a documented program alone. */
  private checkLoneProgram(command: SyntaxNode): void {
    const elements = command.type === 'list' || command.type === 'tuple' ? command.namedChildren.filter((child) => child !== null && child.type !== 'comment') : [command];
    const word = elements.length === 1 && elements[0] ? commandValue(elements[0]) : undefined;
    const name = word === undefined ? undefined : loneProgramIn(word.trim());
    if (name) this.report(command, 'shell-background', `\`${name}\` starts the program away from its owner, which cannot end it`);
  }

  /**
   * `Popen(["start", term, "-NoExit"], shell=True)`: with `shell=True` a list is joined into one
   * command line for the shell (list2cmdline on Windows), so its words are read as one shell text,
   * a word that is not a literal as a value. JS's counterpart: `spawn(program, args, { shell: true })`.
   */
  private checkJoinedList(node: SyntaxNode): void {
    if (node.type !== 'list' && node.type !== 'tuple') return;
    const words = node.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment').map((child) => commandValue(child) ?? VALUE_MARK);
    const construct = backgroundingIn(words.join(' '));
    if (construct) this.report(node, 'shell-background', `shell command starts a background process (${construct}) that outlives its owner`);
  }

  private checkShellText(node: SyntaxNode, shell = false, cmdScript = false): void {
    // `os.system(open_command(url))`, `self._submit_command(script)`: the text the file's function returns.
    if (node.type === 'call') {
      const callee = node.childForFieldName('function');
      const owner = callee?.type === 'attribute' ? callee.childForFieldName('object')?.text : undefined;
      // A plain call runs a function (not one the enclosing function takes as a parameter), a call on
      // `self`/`cls` a method: each keyed as functionsDefinedOnce keys them.
      const method = owner === 'self' || owner === 'cls' ? callee?.childForFieldName('attribute')?.text : undefined;
      const plain = callee?.type === 'identifier' && !isParameterAt(node, callee.text) ? callee.text : undefined;
      if (plain !== undefined) this.checkHeldCommand(`${plain}()`, shell, cmdScript);
      if (method !== undefined) this.checkHeldCommand(`.${method}()`, shell, cmdScript);
      // `" ".join(args)`: a list's words joined into one command line, written there or held in a name.
      const joined = callee?.type === 'attribute' && callee.childForFieldName('attribute')?.text === 'join' ? callee.childForFieldName('object') : undefined;
      const separator = joined ? stringValue(joined) : undefined;
      const parts = node.childForFieldName('arguments')?.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment') ?? [];
      if (separator !== undefined && parts.length === 1 && parts[0]) {
        const list = parts[0];
        // A held list is read joined by blanks (checkHeldCommand's shell reading): only for a blank separator.
        if (list.type === 'identifier') {
          if (separator.trim() === '') this.checkHeldCommand(list.text, true, cmdScript);
        } else if (list.type === 'list' || list.type === 'tuple') {
          const words = list.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment').map((child) => commandValue(child) ?? VALUE_MARK);
          const construct = backgroundingIn(words.join(separator));
          if (construct && !(cmdScript && construct === 'a background `&`')) this.report(list, 'shell-background', `shell command starts a background process (${construct}) that outlives its owner`);
        }
        return;
      }
    }
    if (node.type === 'identifier') {
      this.checkHeldCommand(node.text, shell, cmdScript);
      this.checkBuiltList(node);
      return;
    }
    // `[*admin_command, exe]`: the words of a list held in a name, unpacked into the argument list.
    if (node.type === 'list_splat') {
      const inner = node.namedChildren[0];
      if (inner?.type === 'identifier') this.checkHeldCommand(inner.text, shell);
      return;
    }
    if (node.type === 'list' || node.type === 'tuple') {
      this.argumentVectors.add(node.startIndex); // read here, with the command runner's other text
      const before = this.findings.length;
      const elements = node.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment');
      // `["Start-Process", exe, "-Wait", "-NoNewWindow"]`: a plain child waited for in the caller's console.
      const waited = startProcessWaitedInConsole(elements.map((element) => commandValue(element)));
      // After cmd's `/c` or `/k` the words are cmd's script, where `&` runs commands in turn.
      // (cmd's: the list's first word, or right after cmd.)
      let afterCmdFlag = false;
      elements.forEach((element, index) => {
        if (!(waited && /^start-process\b/i.test(commandValue(element) ?? ''))) this.checkShellText(element, false, afterCmdFlag);
        const before = index === 0 ? undefined : elements[index - 1];
        if (/^\/[ck]$/i.test(commandValue(element) ?? '') && (index === 0 || /^(?:.*[\\/])?cmd(?:\.exe)?$/i.test((before && commandValue(before)) ?? ''))) afterCmdFlag = true;
      });
      if (this.findings.length === before) this.checkDetachingCommand(node, true);
      if (this.findings.length === before) this.checkStartArgv(node);
      if (this.findings.length === before) {
        // `[sys.executable, "-m", "server", "--daemonize"]`: any program's own daemonizing option.
        const daemon = daemonOptionIn(elements.map((element) => commandValue(element)));
        if (daemon) this.report(node, 'shell-background', `shell command starts a background process (${daemon}) that outlives its owner`);
      }
      return;
    }
    const text = commandValue(node);
    const construct = text === undefined ? undefined : (backgroundingIn(text) ?? this.splicedConstruct(node));
    if (construct && !(cmdScript && construct === 'a background `&`')) this.report(node, 'shell-background', `shell command starts a background process (${construct}) that outlives its owner`);
  }

  /**
   * An f-string splicing names its function binds to literals (`command = "start"` on one branch,
   * then `f"{command} {path}"`): read with each literal in place, at most MAX_HELD_CHOICES texts.
   * JS's twin: js-rules.ts, splicedConstruct.
   */
  private splicedConstruct(node: SyntaxNode): string | undefined {
    if (node.type !== 'string') return undefined;
    const fields = node.namedChildren.filter((child): child is SyntaxNode => child?.type === 'interpolation');
    const choices = fields.map((field) => {
      const inner = field.namedChildren.find((child) => child !== null && child.type !== 'comment');
      return inner?.type === 'identifier' ? literalBindings(inner, this.heldWords) : [];
    });
    if (choices.every((values) => values.length === 0)) return undefined;
    const pieces = (stringValue(node) ?? '').split(VALUE_MARK);
    if (pieces.length !== fields.length + 1) return undefined;
    let texts = [pieces[0] as string];
    choices.forEach((values, index) => {
      const each = values.length > 0 ? values : [VALUE_MARK];
      texts = texts.flatMap((text) => each.map((value) => text + value + (pieces[index + 1] as string))).slice(0, MAX_HELD_CHOICES);
    });
    for (const text of texts) {
      const construct = backgroundingIn(text);
      if (construct) return construct;
    }
    return undefined;
  }

  /**
   * An argument list the runner's function builds in the name over several statements (labgrid's
   * `args = ["ssh"] + base_args()`, then `args += ["-MN", "-o", "ControlPersist=300", host]`): read
   * as one list, its unknown parts as values, for a flag or verb that is written (detachingFlagIn);
   * reported at the list's first assignment, once a function and name.
   */
  private checkBuiltList(name: SyntaxNode): void {
    let scope = name.parent;
    while (scope && scope.type !== 'function_definition') scope = scope.parent;
    const body = scope?.childForFieldName('body');
    if (!body) return;
    const key = `${body.startIndex}\0${name.text}`;
    if (this.builtListsRead.has(key)) return;
    this.builtListsRead.add(key);
    // A name its scope binds to literals (`stay = "-f"`) may be a flag: unknown, not a value.
    const built = builtListWords(body, name.text, name.startIndex, (node) => this.heldProgram(node), (node) => literalBindings(node, this.heldWords).length > 0);
    // One list written whole is read where it is (checkDetachingCommand, held lists): only a list
    // built from parts here. A flag that is written, with unknown parts; a missing one, where every
    // part is known (values held in names as values, `encfs = [self.mountproc, "--extpass=x"]`,
    // then `encfs += [path, mountpoint]`).
    const written = built && built.parts > 1 && built.words[0] !== undefined && built.words.includes(undefined) ? detachingFlagIn(built.words) : undefined;
    // For a missing flag also a list written in one piece (over several lines, which the held
    // text does not read; its program held, `sshAgent = [sshAgent]` after `sshAgent =
    // which("ssh-agent")`): a lone program as the runner's whole command.
    const found = written ?? (built ? (built.values.length === 1 ? loneProgramIn(built.values[0] ?? '') : detachingCommandWithValues(built.values, built.merged)) : undefined);
    if (!built || !found) return;
    // A list that starts with a detaching program is read where it is written (checkDetachingCommand): once a line.
    const line = built.first.startPosition.row + 1;
    if (this.findings.some((finding) => finding.line === line && finding.rule === 'shell-background')) return;
    this.report(built.first, 'shell-background', `\`${found}\` starts the program away from its owner, which cannot end it`);
  }

  /**
   * Command text held in a name (`CMD = "nohup server &"`, `script = 'worker &'` in a branch, a
   * one-line list of strings): every such assignment of the name in the file, read from the text
   * (so whatever statements were parsed), reported at its string, once. A list run with
   * `shell=True` is also read joined, as one command line.
   */
  private checkHeldCommand(name: string, shell: boolean, cmdScript = false): void {
    // Once a name (and a shell or none): the same bindings whatever use reads them (a file using
    // one name thousands of times read every binding at every use).
    const key = `${shell ? 1 : 0}${name}`;
    if (this.heldNamesRead.has(key)) return;
    this.heldNamesRead.add(key);
    this.heldCommands ??= heldCommandText(this.text);
    for (const held of this.heldCommands.get(name) ?? []) {
      if (held.resultOf !== undefined) {
        this.checkHeldCommand(`${held.resultOf}()`, shell, cmdScript);
        continue;
      }
      if (this.heldReported.has(held.offset)) continue;
      const construct = heldConstruct(held, shell);
      if (!construct || (cmdScript && construct === 'a background `&`')) continue;
      this.heldReported.add(held.offset);
      const line = this.lineAt(held.offset);
      // A one-line list's string and its words are two entries of one text: one finding a line.
      if (this.findings.some((finding) => finding.line === line && finding.rule === 'shell-background')) continue;
      const column = held.offset - this.text.lastIndexOf('\n', held.offset - 1);
      const call = this.enclosingCalls[this.enclosingCalls.length - 1];
      this.findings.push({
        rule: 'shell-background',
        severity: 'error',
        line,
        column,
        message: `shell command in \`${name}\` starts a background process (${construct}) that outlives its owner`,
        spans: call ? [[line, line], call] : [[line, line]],
      });
    }
  }

  /**
   * An argument vector of a program whose job is to detach, built anywhere (held in a name and
   * spawned later, or set as `sys.argv` for twistd's in-process `run()`): `["twistd", "--no_save",
   * "--python=buildbot.tac"]`. One handed to a command runner is read with its other text.
   */
  private enterArgumentVector(node: SyntaxNode): void {
    if (this.argumentVectors.has(node.startIndex)) return;
    this.argumentVectors.add(node.startIndex);
    const elements = node.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment');
    const [first, , third] = elements;
    // Its program held in a name a detaching program's lookup bound (`[systemd_run, "--scope", …]`) too.
    const heldProgram = first?.type === 'identifier' && this.lookedUp.has(first.text);
    if ((heldProgram || mayBeDetachingArgv(first && stringValue(first), third && stringValue(third))) && elements.slice(1).some(isArgumentLike)) this.checkDetachingCommand(node);
    // cmd's `/c start` in a list built anywhere (`args = ['/c', 'start']`, joined to `cmd.exe` and
    // the command later): those two words mean nothing else.
    else if (elements.some((element) => CMD_FLAG.test(stringValue(element) ?? ''))) this.checkStartArgv(node);
    // cmd's `start` first, with its empty title (`['start', '', cmd]`, handed to a shell later).
    else if (first && /^start$/i.test(stringValue(first) ?? '')) this.checkStartArgv(node, true);
  }

  /**
   * `.spawn(argv, dimensions=(24, 80))`: ptyprocess's (and pexpect's) signature, a child on a
   * pseudo-terminal in a session of its own, whatever the class is called or wherever it came
   * from (`self.pty_class.spawn`). A name the imports already make a PTY spawn is reported as such.
   */
  private checkPtyShape(node: SyntaxNode): void {
    const callee = node.childForFieldName('function');
    const qualified = this.qualify(callee) ?? '';
    // The project's own copy of a PTY library: its spawn is reported in the copy.
    if (DETACHING_NAMES.has(qualified) || qualified.startsWith('.')) return;
    const args = node.childForFieldName('arguments');
    if (args?.type !== 'argument_list') return;
    for (const argument of args.namedChildren) {
      if (argument?.type === 'keyword_argument' && argument.childForFieldName('name')?.text === 'dimensions') {
        this.report(node, 'py-pty', '`spawn(..., dimensions=...)` (a PTY size: ptyprocess\'s signature) starts the child on a pseudo-terminal, in a new session of its own');
        return;
      }
    }
  }

  /** `["cmd", "/c", "start", "", url]`: cmd's start after `/c` or `/k`, one word to an element. */
  private checkStartArgv(list: SyntaxNode, titled = false): void {
    // A list held in a name is also read from the text where the name goes to a runner (checkHeldCommand): once.
    if (this.heldReported.has(list.startIndex)) return;
    const argv: Array<string | undefined> = [];
    for (const element of list.namedChildren) if (element && element.type !== 'comment') argv.push(stringValue(element));
    const construct = titled ? titledStartInArgv(argv) : startInArgv(argv);
    if (!construct) return;
    this.heldReported.add(list.startIndex);
    this.report(list, 'shell-background', `shell command starts a background process (${construct}) that outlives its owner`);
  }

  /**
   * `["systemd-run", "--user", "server"]`: a program whose job is to detach, with its literal
   * arguments (up to the first one not known). A word formatted from a literal (`"--port=%s" %
   * port`, an f-string) is known by its literal parts, as in shell text.
   */
  private checkDetachingCommand(list: SyntaxNode, run = false): void {
    const elements = list.namedChildren.filter((element): element is SyntaxNode => element !== null && element.type !== 'comment');
    const argv = elements.map((element) => commandValue(element));
    let name = detachingCommandIn(argv);
    // A flag held in a name (`opts = '-cd' if mnopts is None else mnopts`, then `['mnexec', opts,
    // …]`): each literal value the scope binds it to is tried in its place; any that detaches counts.
    for (const argvWith of name ? [] : heldWordChoices(elements, argv, this.heldWords)) {
      name = detachingCommandIn(argvWith);
      if (name) break;
    }
    // `["sshfs", remote, mountpoint]`: positional values held in names, read as values; and the
    // program held in a name or member bound to its literal name alone (`self.mountproc = "sshfs"`).
    // Only in a list handed to a runner: one held for later may be a prefix handed to the
    // repository's own helper. A name its scope binds to literals is read as those (above).
    if (!name && run && argv.includes(undefined)) {
      const marked = elements.map((element, k) => argv[k] ?? (k > 0 && isPlainValue(element) && !(element.type === 'identifier' && literalBindings(element, this.heldWords).length > 0) ? VALUE_MARK : undefined));
      const program = argv[0] ?? (elements[0] ? this.heldProgram(elements[0]) : undefined);
      if (program !== undefined) name = detachingCommandWithValues([program, ...marked.slice(1)]);
    }
    if (name) this.report(list, 'shell-background', `\`${name}\` starts the program away from its owner, which cannot end it`);
  }

  /**
   * The program a name or member holds where every binding of it is one literal program name (its
   * function's, else the file's: `SSHFS = "sshfs"`, `self.mountproc = "sshfs"`), or a lookup of one
   * (`self.agent = which("ssh-agent")`). Undefined where any binding is something else.
   */
  private heldProgram(element: SyntaxNode): string | undefined {
    if (element.type === 'identifier') {
      const inScope = [...new Set(literalBindings(element, this.heldWords))];
      if (inScope.length === 1) return inScope[0];
      if (inScope.length > 1) return undefined;
      // A parameter of its function is not the module's name (`def mount(prog): ...`).
      let scope = element.parent;
      while (scope && scope.type !== 'function_definition') scope = scope.parent;
      const parameters = scope?.childForFieldName('parameters');
      if (parameters && namesIn(parameters).has(element.text)) return undefined;
      // Nor where its function binds the name otherwise (a loop's, a `with`'s, a comprehension's
      // variable, a value no literal is): the module's name is then not the one read.
      if (scope) {
        // Once a function and name: a function may run the name thousands of times.
        const key = `${scope.startIndex}\0${element.text}`;
        let binds = this.bindsOtherwise.get(key);
        if (binds === undefined) this.bindsOtherwise.set(key, (binds = bindsNameOtherwise(scope.text, element.text)));
        if (binds) return undefined;
      }
      this.programHolders ??= programHolders(this.text);
      return this.programHolders.get(element.text);
    }
    if (element.type !== 'attribute' || !/^(?:self|cls)\.[A-Za-z_]\w*$/.test(element.text)) return undefined;
    // Within its class: another class's member of the same name is another binding.
    let owner = element.parent;
    while (owner && owner.type !== 'class_definition') owner = owner.parent;
    if (!owner) return undefined;
    // One read of a class's text for all its members: a class may run many.
    let members = this.memberPrograms.get(owner.startIndex);
    if (!members) this.memberPrograms.set(owner.startIndex, (members = programHolders(owner.text, true)));
    return members.get(element.text.replace(/^cls\./, 'self.'));
  }

  /**
   * Integer literals holding a detach bit, anywhere in a flags expression (`0x8 | X | ...`, however
   * long), and names assigned such integers elsewhere (`FLAGS = 0x8 | 0x200`, then
   * `creationflags=FLAGS`). A part under `~` clears flags (`flags & ~0x8`): not walked.
   */
  private checkFlagLiterals(root: SyntaxNode): void {
    const pending = [root];
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      if (isFlagClearing(node)) continue;
      // A flag's own name (`CREATE_BREAKAWAY_FROM_JOB = 0x01000000`) is reported as a name.
      if ((node.type === 'identifier' || node.type === 'attribute') && !WINDOWS_FLAGS.has(lastPart(node.text))) {
        this.flagVariables ??= flagVariables(this.text);
        const line = this.flagVariables.get(node.text);
        if (line !== undefined) {
          this.report(node, 'py-windows-detach', `creation flags \`${node.text}\` hold a Windows detach flag (set on line ${line})`);
          continue;
        }
      }
      const value = integerValue(node);
      if (value !== undefined && (value & WINDOWS_FLAG_BITS) !== 0) {
        this.report(node, 'py-windows-detach', `creation flag ${node.text} includes a Windows detach flag`);
        continue;
      }
      const children = node.namedChildren;
      for (let k = children.length - 1; k >= 0; k--) {
        const child = children[k];
        if (child) pending.push(child); // in reverse: popped in source order
      }
    }
  }

  private report(node: SyntaxNode, rule: RuleId, message: string, severity: RawFinding['severity'] = 'error'): void {
    // Session and group options are POSIX's: Popen and posix_spawn ignore or lack them on Windows.
    if (rule === 'py-new-session' && inWindowsOnlyBranch(node)) return;
    const call = this.enclosingCalls[this.enclosingCalls.length - 1];
    const spans: Array<[number, number]> = [[node.startPosition.row + 1, node.endPosition.row + 1]];
    if (call) spans.push(call);
    this.findings.push({ rule, severity, line: node.startPosition.row + 1, column: node.startPosition.column + 1, message, spans });
  }
}
