// Detached spawns in JavaScript and TypeScript, found on the TypeScript compiler's syntax tree.
//
// Why the TypeScript compiler API: it parses JS, JSX, TS and TSX synchronously with one parser that
// the project already pins, and its trees are exact (tree-sitter's TS grammar recovers from errors
// silently, which would hide the parse errors this check must report). Only the parser is used: no
// Program and no type checker, so the cost is one createSourceFile per file that passes the
// prefilter, and data flow is followed by hand within one file.
//
// The parser is TypeScript's own, cut by the build to the compiler and the language service's
// node objects (dist/vendor/typescript-parser.cjs, scripts/build-typescript-parser.mjs; 1.9 MB of
// typescript.js's 9 MB). Loaded with require (`import = require` compiles to createRequire):
// typescript-cache.ts has usually put it in require's cache already, compiled from a code cache.
import ts = require('../vendor/typescript-parser.cjs');
import { lstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { relevantText } from './js-chunks.js';
import { isRelative, MAX_MODULE_BYTES, resolveProjectModule } from './module-resolution.js';
import { readRegularFile } from './regular-file.js';
import { backgroundingIn, daemonOptionIn, detachingCommandIn, detachingCommandWithValues, detachingFlagIn, elevatingScriptIn, DETACHING_PROGRAM_NAMES, isDaemonOptionWord, loneProgramIn, mayHoldOptions, mayBeDetachingArgv, PROGRAM_LOOKUP, PROGRAM_NAMES, PROJECT_RUNNER_NAMES, startInArgv, startProcessWaitedInConsole, VALUE_MARK } from './shell.js';
import type { RawFinding } from './types.js';

type ModuleShape = {
  /** Named exports that start a process. */
  functions: ReadonlySet<string>;
  /** Whether the module's default export is itself a spawn function (`spawn(...)`, `spawn.sync(...)`). */
  callableDefault: boolean;
  /** Exported functions that return a child handle they started (`startServer()` returning `spawn(...)`). */
  handles?: ReadonlySet<string>;
  /** Its functions start the child on a pseudo-terminal, in a new session whatever the options (node-pty). */
  pty?: boolean;
  /** Its functions start a detached child whatever the options: npm's daemon package. */
  daemon?: boolean;
  /** Exported functions' parameters that they only read (js-rules.ts: onlyReadByHelper), by the export's name. */
  readers?: ReadonlyMap<string, readonly number[]>;
  /** Named exports that are a spawn module's object (`export const child_process = require('child_process')`). */
  modules?: ReadonlyMap<string, Extract<Binding, { kind: 'namespace' | 'callable' }>>;
  /** Exported runners (findOwnRunners: a parameter handed, as it is, to a spawn as its command), to that parameter's position. */
  runners?: ReadonlyMap<string, number>;
};

const CHILD_PROCESS: ModuleShape = {
  functions: new Set(['spawn', 'spawnSync', 'fork', 'exec', 'execSync', 'execFile', 'execFileSync']),
  callableDefault: false,
};

// node-pty's `fork` and `createTerminal` are `spawn` under older names (its index.ts): each starts a terminal.
const PTY_SHAPE: ModuleShape = { functions: new Set(['spawn', 'fork', 'createTerminal']), callableDefault: false, pty: true };
/** node-pty's published forks and prebuilt builds under any scope (`@scrypted/node-pty`, `node-pty-prebuilt-multiarch`). */
const PTY_FORK = /^(?!@types\/)(?:@[\w.-]+\/)?node-pty(?:-[\w.-]+)?$/;

/** The spawn modules by specifier; node-pty's forks are known by their name's shape. */
class SpawnModules extends Map<string, ModuleShape> {
  override get(specifier: string): ModuleShape | undefined {
    return super.get(specifier) ?? (PTY_FORK.test(specifier) ? PTY_SHAPE : undefined);
  }
  override has(specifier: string): boolean {
    return super.has(specifier) || PTY_FORK.test(specifier);
  }
}

export const SPAWN_MODULES: ReadonlyMap<string, ModuleShape> = new SpawnModules([
  ['child_process', CHILD_PROCESS],
  ['node:child_process', CHILD_PROCESS],
  [
    'execa',
    {
      functions: new Set(['execa', 'execaSync', 'execaCommand', 'execaCommandSync', 'execaNode', '$']),
      callableDefault: true,
    },
  ],
  ['cross-spawn', { functions: new Set(['spawn', 'sync']), callableDefault: true }],
  ['nano-spawn', { functions: new Set(['default']), callableDefault: true }],
  ['tinyexec', { functions: new Set(['x', 'exec', 'xSync', 'execSync']), callableDefault: false }],
  // node-pty: `spawn` forks on a new PTY (setsid). Its forks: PTY_FORK.
  ['node-pty', PTY_SHAPE],
  // npm's daemon: `require('daemon')()` re-spawns the running script with `detached: true` and
  // exits; `daemon.daemon(script, args)` spawns a script so.
  ['daemon', { functions: new Set(['daemon']), callableDefault: true, daemon: true }],
]);

/** Type names whose object literals are spawn options on their own, wherever they end up. */
const SPAWN_OPTIONS_TYPE = /^(?:Common)?(?:Spawn|Exec|ExecFile|Fork|Execa|Process)(?:Sync)?Options(?:With\w+)?$/;

/** What a local name stands for. */
type Binding =
  | { kind: 'function'; pty?: boolean; daemon?: boolean }
  /** A module object: some of its properties are spawn functions. */
  | { kind: 'namespace'; shape: ModuleShape }
  /** A spawn function that also carries spawn functions as properties (cross-spawn, execa's default). */
  | { kind: 'callable'; shape: ModuleShape }
  /**
   * A name imported or required from the project's own module, read only when a finding could
   * hang on it: `member` is the export's name, `default`, or `*` for the module object.
   */
  | { kind: 'project'; specifier: string; member: string; require: boolean };


export function scriptKindFor(path: string): ts.ScriptKind {
  if (/\.tsx$/i.test(path)) return ts.ScriptKind.TSX;
  if (/\.[mc]?ts$/i.test(path)) return ts.ScriptKind.TS;
  if (/\.jsx$/i.test(path)) return ts.ScriptKind.JSX;
  return ts.ScriptKind.JS;
}

function parse(path: string, text: string): ts.SourceFile {
  // JSDoc is not parsed: no rule reads it, and it does not change the tree or the syntax errors.
  return ts.createSourceFile(path, text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, false, scriptKindFor(path));
}

/**
 * The findings of one file. `root` bounds the relative imports that are followed (the project's
 * own spawn wrappers and re-exports): a module outside it is not read. Only the statements that
 * can matter are parsed (js-chunks.ts), with the same findings. `parsing` is for tests: `whole`
 * parses every file whole, `chunks` blanks whatever can be blanked, however little.
 */
export function analyseJs(text: string, path: string, root: string = process.cwd(), parsing: 'auto' | 'whole' | 'chunks' = 'auto'): RawFinding[] {
  const findings = analyseJsText(text, path, root, parsing);
  // Flow's annotations (`(x: string)` casts, `?Type`) are no TypeScript: a JS file marked `@flow`
  // that does not parse is read again with its types blanked by flow-remove-types (loaded only
  // here), which keeps every line and column; that reading counts if it parses.
  if (!findings.some((finding) => finding.rule === 'parse-error') || !FLOW_SOURCE.test(path) || text.length > MAX_FLOW_BYTES || !FLOW_PRAGMA.test(leadingComments(text))) return findings;
  const stripped = flowStripped(text);
  if (stripped === undefined) return findings;
  const again = analyseJsText(stripped, path, root, parsing);
  return again.some((finding) => finding.rule === 'parse-error') ? findings : again;
}

/**
 * Flow's parser is super-linear in a file's size (0.9 MB: 5.5 s, 1.8 MB: 81 s, measured): above
 * this, the first parse error stands.
 */
const MAX_FLOW_BYTES = 256 * 1024;
/** The comments before a file's first code (a `#!` line first), where Flow reads its pragma; at most 4 KB. */
const LEADING_COMMENTS = /^(?:#![^\n]*\n)?(?:\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*/;
function leadingComments(text: string): string {
  return LEADING_COMMENTS.exec(text.slice(0, 4096))?.[0] ?? '';
}
/** Files Flow annotates: JS, not TypeScript. */
const FLOW_SOURCE = /\.[cm]?jsx?$/i;
/** Flow's pragma (`// @flow`, or `@flow strict` in a block comment), in the leading comments. */
const FLOW_PRAGMA = /@flow\b/;

/** The text with Flow's types blanked (the same length), or undefined where Flow's parser cannot read it either. */
function flowStripped(text: string): string | undefined {
  try {
    const strip = createRequire(import.meta.url)('flow-remove-types') as (source: string, options: { all: boolean }) => { toString(): string };
    const out = strip(text, { all: true }).toString();
    return out.length === text.length ? out : undefined;
  } catch {
    return undefined;
  }
}

function analyseJsText(text: string, path: string, root: string, parsing: 'auto' | 'whole' | 'chunks'): RawFinding[] {
  const context = { root: resolve(root), depth: 0 };
  const isProject = (specifier: string) => isProjectSpecifier(path, specifier, context.root);
  const chunks = parsing === 'whole' ? undefined : relevantText(text, path, parsing === 'chunks' ? 0 : undefined, isProject);
  if (chunks !== undefined) {
    const findings = new JsFileAnalysis(parse(path, chunks), context).run();
    // A syntax error in what was parsed: the whole file is parsed instead, so that the error
    // reported is the file's first one, where it is (an earlier one may lie in a blanked chunk).
    if (!findings.some((finding) => finding.rule === 'parse-error')) return findings;
  }
  return new JsFileAnalysis(parse(path, text), context).run();
}

// --- the project's own modules, followed through relative and aliased imports --------------------

/** How far a chain of project re-exports is followed. */
const MAX_IMPORT_DEPTH = 4;

interface ImportContext {
  root: string;
  depth: number;
}

/** Exported spawn functions of the modules read so far, by path, size and modification time. */
const moduleCache = new Map<string, ModuleShape | null>();

/** A module's text, if it is a regular file small enough to be hand-written (read as checked files are). */
function readModule(file: string): string | undefined {
  const read = readRegularFile(file, { followSymlink: false, maxBytes: MAX_MODULE_BYTES });
  return 'text' in read ? read.text : undefined;
}

/**
 * Whether `specifier`, imported by the file `from`, names a project module: a relative one (read
 * even where no file is found), or a bare one the project's config maps to one of its files. A
 * spawn module's name is always the spawn module's.
 */
function isProjectSpecifier(from: string, specifier: string, root: string): boolean {
  return isRelative(specifier) || (!SPAWN_MODULES.has(specifier) && resolveProjectModule(from, specifier, root) !== undefined);
}

/** The spawn functions a project module exports (re-exported, or wrappers that pass options through). */
function projectModule(from: string, specifier: string, context: ImportContext): ModuleShape | undefined {
  if (context.depth >= MAX_IMPORT_DEPTH) return undefined;
  const file = resolveProjectModule(from, specifier, context.root);
  if (!file) return undefined;
  let key: string;
  try {
    const stats = lstatSync(file);
    key = `${file}\0${stats.size}\0${stats.mtimeMs}`;
  } catch {
    return undefined;
  }
  if (moduleCache.has(key)) return moduleCache.get(key) ?? undefined;
  moduleCache.set(key, null); // a cycle of imports reads as "nothing exported" while it is being read
  let shape: ModuleShape | undefined;
  try {
    const text = readModule(file);
    if (text !== undefined) shape = new JsFileAnalysis(parse(file, text), { root: context.root, depth: context.depth + 1 }).exportedSpawns();
  } catch {
    shape = undefined; // that module's own check reports why it cannot be read
  }
  moduleCache.set(key, shape ?? null);
  return shape;
}

/**
 * The syntax kinds the analyser compares, copied out of `ts.SyntaxKind`: that enum object has
 * hundreds of keys (dictionary mode), and reading it for every node of every file showed up as
 * the analyser's hottest line.
 */
const SK = {
  ArrayLiteralExpression: ts.SyntaxKind.ArrayLiteralExpression,
  AmpersandAmpersandToken: ts.SyntaxKind.AmpersandAmpersandToken,
  BarBarToken: ts.SyntaxKind.BarBarToken,
  BinaryExpression: ts.SyntaxKind.BinaryExpression,
  CallExpression: ts.SyntaxKind.CallExpression,
  CommaToken: ts.SyntaxKind.CommaToken,
  DefaultKeyword: ts.SyntaxKind.DefaultKeyword,
  EqualsToken: ts.SyntaxKind.EqualsToken,
  ExportAssignment: ts.SyntaxKind.ExportAssignment,
  ExportDeclaration: ts.SyntaxKind.ExportDeclaration,
  ExportKeyword: ts.SyntaxKind.ExportKeyword,
  FalseKeyword: ts.SyntaxKind.FalseKeyword,
  FunctionDeclaration: ts.SyntaxKind.FunctionDeclaration,
  ImportDeclaration: ts.SyntaxKind.ImportDeclaration,
  ImportEqualsDeclaration: ts.SyntaxKind.ImportEqualsDeclaration,
  ImportKeyword: ts.SyntaxKind.ImportKeyword,
  NullKeyword: ts.SyntaxKind.NullKeyword,
  PlusEqualsToken: ts.SyntaxKind.PlusEqualsToken,
  PropertyAssignment: ts.SyntaxKind.PropertyAssignment,
  PropertyDeclaration: ts.SyntaxKind.PropertyDeclaration,
  QuestionQuestionToken: ts.SyntaxKind.QuestionQuestionToken,
  NoSubstitutionTemplateLiteral: ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ShorthandPropertyAssignment: ts.SyntaxKind.ShorthandPropertyAssignment,
  StringLiteral: ts.SyntaxKind.StringLiteral,
  TaggedTemplateExpression: ts.SyntaxKind.TaggedTemplateExpression,
  NewExpression: ts.SyntaxKind.NewExpression,
  TemplateExpression: ts.SyntaxKind.TemplateExpression,
  ThisKeyword: ts.SyntaxKind.ThisKeyword,
  TrueKeyword: ts.SyntaxKind.TrueKeyword,
  VariableDeclaration: ts.SyntaxKind.VariableDeclaration,
  Parameter: ts.SyntaxKind.Parameter,
  VariableStatement: ts.SyntaxKind.VariableStatement,
} as const;

/** Wrappers that do not change what an expression evaluates to (for this check). */
const TRANSPARENT = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.ParenthesizedExpression,
  ts.SyntaxKind.AsExpression,
  ts.SyntaxKind.SatisfiesExpression,
  ts.SyntaxKind.NonNullExpression,
  ts.SyntaxKind.TypeAssertionExpression,
  ts.SyntaxKind.AwaitExpression,
]);

function unwrap(node: ts.Expression): ts.Expression {
  while (TRANSPARENT.has(node.kind)) node = (node as ts.ParenthesizedExpression).expression;
  return node;
}

/** A program's name alone (a detaching or documented one), with a path or `.exe`. */
const PROGRAM_ALONE = new RegExp(String.raw`^(?:[^\s'"]*[\/\\])?(?:${DETACHING_PROGRAM_NAMES}|${PROGRAM_NAMES})(?:\.exe)?$`, 'i');
/** A member's value that is a program's name alone (PROGRAM_ALONE), or a lookup of one. */
const MEMBER_PROGRAM = new RegExp(String.raw`^(?:([\w$.]{1,200})\(\s*)?(['"\x60])((?:[^\s'"\x60]*[\/\\])?(?:${DETACHING_PROGRAM_NAMES}|${PROGRAM_NAMES})(?:\.exe)?)\2\s*\)?\s*$`, 'i');

/** Every assignment of a `this.` member in a class's text: its name and value, to the line's or statement's end. */
const MEMBER_ASSIGNMENT = /(?<![\w$.])this\s*\.\s*([\w$]+)\s*(?:[-+*\/|&?]{0,2})=(?![=>])[ \t]*([^\n;]*)/g;
/**
 * The members of a class whose every assignment binds one program's name alone, or a lookup of
 * one (MEMBER_PROGRAM); a member assigned anything else, or two programs, holds none.
 */
function memberPrograms(text: string): Map<string, string> {
  const found = new Map<string, string>();
  const spoilt = new Set<string>();
  for (const [, member, value] of text.matchAll(MEMBER_ASSIGNMENT)) {
    const match = MEMBER_PROGRAM.exec(value as string);
    const callee = match?.[1]?.slice(match[1].lastIndexOf('.') + 1);
    const program = callee === undefined || PROGRAM_LOOKUP.test(callee) ? match?.[3] : undefined;
    const known = found.get(member as string);
    if (program === undefined || (known !== undefined && known !== program)) spoilt.add(member as string);
    else found.set(member as string, program);
  }
  for (const member of spoilt) found.delete(member);
  return found;
}

/** An argument that is one value, not options (see mayHoldOptions): a name, member, item, call or number. Python's: isPlainValue. */
function isPlainValue(element: ts.Expression): boolean {
  const node = unwrap(element);
  const plain = ts.isIdentifier(node) || ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node) || ts.isCallExpression(node) || ts.isNumericLiteral(node);
  return plain && !mayHoldOptions(node.getText());
}

function propertyName(name: ts.PropertyName | ts.BindingName | ts.MemberName | undefined): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  if (ts.isComputedPropertyName(name)) {
    const inner = unwrap(name.expression);
    if (ts.isStringLiteral(inner) || ts.isNoSubstitutionTemplateLiteral(inner)) return inner.text;
  }
  return undefined;
}

/** The member name of `a.b` or `a['b']`. */
function memberName(node: ts.Expression): string | undefined {
  if (ts.isPropertyAccessExpression(node)) return node.name.text;
  if (ts.isElementAccessExpression(node)) {
    const arg = unwrap(node.argumentExpression);
    if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) return arg.text;
  }
  return undefined;
}

/**
 * `detached` values that leave the child in its owner's group: the falsy ones, and literals that
 * are not booleans, which Node refuses (`detached: 'true'` throws ERR_INVALID_ARG_TYPE, so no child
 * is started; execa, cross-spawn and tinyexec hand the option to Node as it is).
 */
/** `+=`, `||=`, `??=`, ...: a write whose value is not one expression's. */
const isCompoundAssignment = (kind: ts.SyntaxKind): boolean => kind >= ts.SyntaxKind.FirstCompoundAssignment && kind <= ts.SyntaxKind.LastCompoundAssignment;

function isFalsy(node: ts.Expression): boolean {
  const value = unwrap(node);
  return (
    value.kind === SK.FalseKeyword ||
    value.kind === SK.NullKeyword ||
    (ts.isIdentifier(value) && value.text === 'undefined') ||
    ts.isNumericLiteral(value) ||
    ts.isBigIntLiteral(value) ||
    ts.isStringLiteral(value) ||
    ts.isNoSubstitutionTemplateLiteral(value) ||
    ts.isTemplateExpression(value) ||
    ts.isRegularExpressionLiteral(value) ||
    ts.isArrayLiteralExpression(value) ||
    ts.isObjectLiteralExpression(value) ||
    ts.isVoidExpression(value)
  );
}

/** Calls that refuse `detached` and start nothing with it: execa's synchronous methods throw on it. */
const REFUSES_DETACHED = new Set(['execaSync', 'execaCommandSync']);

/**
 * tsd's assertions: their arguments are type-checked, never run (`expectError(spawn(..., {detached:
 * true}))` asserts the call does not compile).
 */
const TYPE_ONLY_CALLS = new Set(['expectType', 'expectNotType', 'expectAssignable', 'expectNotAssignable', 'expectError', 'expectDeprecated', 'expectNotDeprecated']);
/** Test expectations: an object handed to one describes a value, it is not handed to a spawn. */
const EXPECTATION_CALLS = /^(?:toMatchObject|toEqual|toStrictEqual|toHaveBeenCalledWith|toHaveBeenLastCalledWith|toHaveBeenNthCalledWith|toHaveProperty|toContainEqual|toMatchInlineSnapshot|objectContaining|deepEqual|deepStrictEqual|partialDeepStrictEqual|notDeepEqual|calledWith|calledWithMatch|calledOnceWith|calledOnceWithExactly|have|include|eql|match)$/;
/** Calls that take a record (logging, registries, serialising): a `detached` field there is data. */
const RECORD_CALLS = /^(?:log|info|debug|warn|warning|error|trace|fatal|verbose|emit|push|unshift|set|add|send|write|writeFile|writeFileSync|appendFile|appendFileSync|record|register|save|store|insert|upsert|update|stringify|dump|track|report|append|persist)$/;
/** Keys only a record of a started child has: the pid is known after the spawn, never an option. */
const RECORD_KEYS = new Set(['pid', 'pgid', 'exitCode', 'startedAt', 'spawnedAt']);

type FunctionLike = ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression;

/** The name a call's callee is known by: `f` of `f()`, `b` of `a.b()`. */
function calleeName(call: ts.CallExpression | ts.NewExpression): string | undefined {
  const callee = unwrap(call.expression);
  return ts.isIdentifier(callee) ? callee.text : memberName(callee);
}

/** Whether `node` lies in the arguments of a call of tsd's type-only assertions. */
function inTypeOnlyCall(node: ts.Node): boolean {
  for (let at = node.parent; at; at = at.parent) {
    if (ts.isCallExpression(at) && at.arguments.some((a) => a.pos <= node.pos && node.end <= a.end) && TYPE_ONLY_CALLS.has(calleeName(at) ?? '')) return true;
    if (ts.isSourceFile(at)) break;
  }
  return false;
}

/**
 * The text of a command built from literals: a string, a template, `+` of strings and other
 * values. Substitutions and other values read as VALUE_MARK (shell.ts), so `${cmd} &` and
 * `'nohup ' + bin + ' &'` still read as backgrounding, `${a}&${b}` not. Undefined where no
 * literal is involved.
 */
/** `which.sync('cupsd')`, `await which('tmux')`, `whichSync('x')`, a project's own lookup (`findExecutable('x')`): the path of the program named, read as its name. */
function programFound(expression: ts.Expression): string | undefined {
  let node = unwrap(expression);
  if (ts.isAwaitExpression(node)) node = unwrap(node.expression);
  if (!ts.isCallExpression(node) || node.arguments.length === 0) return undefined;
  const callee = unwrap(node.expression);
  const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) ? `${callee.expression.text}.${callee.name.text}` : '';
  if (!PROGRAM_LOOKUP.test(name)) return undefined;
  const first = unwrap(node.arguments[0] as ts.Expression);
  return ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first) ? first.text : undefined;
}

/** How many calls deep returned text is followed (`return c1()` … `return "server &"`). */
const MAX_RETURN_DEPTH = 8;
/** cmd itself, as a list's word (`cmd`, `cmd.exe`, a path to it). */
const CMD_PROGRAM = /^(?:.*[\\/])?cmd(?:\.exe)?$/i;
/** What backgroundingIn calls a lone `&`: in cmd's script (after `/c` or `/k` in a list) it runs commands in turn. */
const BACKGROUND_AMPERSAND_NAME = 'a background `&`';

/** At most this many argument vectors are tried with held words in place: a file's bindings of a name are few. */
const MAX_HELD_CHOICES = 8;

/** A project's own runner's name (shell.ts: PROJECT_RUNNER_NAMES; not spawn or exec alone, which are SPAWN_FAMILY_NAMES'). */
const PROJECT_RUNNER = new RegExp(String.raw`^_?(?:${PROJECT_RUNNER_NAMES})$`);
/** Node's path joins, on its module (`path`, `path.win32`, `upath`, `pathe`). */
const PATH_JOINS = new Set(['join', 'resolve']);
const PATH_MODULE = /^(?:path|upath|pathe|(?:path|upath)\.(?:posix|win32))$/;
function commandText(expression: ts.Expression, depth: number): string | undefined {
  const node = unwrap(expression);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((span) => VALUE_MARK + span.literal.text).join('');
  if (depth < 200 && ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = commandText(node.left, depth + 1);
    const right = commandText(node.right, depth + 1);
    return left === undefined && right === undefined ? undefined : (left ?? VALUE_MARK) + (right ?? VALUE_MARK);
  }
  // A path joined from parts, the last a literal (`path.join(dir, 'elevate.exe')`): the program it
  // names, after a value's directory (Python's: os.path.join).
  if (depth < 200 && ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && PATH_JOINS.has(node.expression.name.text) && PATH_MODULE.test(node.expression.expression.getText())) {
    const parts = node.arguments.map((argument) => commandText(argument, depth + 1));
    const last = parts[parts.length - 1];
    if (last !== undefined && !last.includes(VALUE_MARK)) return parts.map((part) => part ?? VALUE_MARK).join('/');
  }
  // The same text with its blanks trimmed (`` `nohup ${bin} &`.trim() ``): the command a shell runs
  // is the text's (Python: its str methods encode and strip).
  if (depth < 200 && ts.isCallExpression(node) && node.arguments.length === 0 && ts.isPropertyAccessExpression(node.expression) && TEXT_KEEPING_METHODS.has(node.expression.name.text)) {
    return commandText(node.expression.expression, depth + 1);
  }
  return undefined;
}
const TEXT_KEEPING_METHODS = new Set(['trim', 'trimEnd', 'trimStart']);

/** The specifier of `require('./x')` when it names a project module (`isProject`). */
function projectRequire(expression: ts.Expression, isProject: (specifier: string) => boolean): string | undefined {
  const node = unwrap(expression);
  if (!ts.isCallExpression(node) || node.arguments.length !== 1) return undefined;
  const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
  if (!isRequire) return undefined;
  const specifier = unwrap(node.arguments[0] as ts.Expression);
  return ts.isStringLiteral(specifier) && isProject(specifier.text) ? specifier.text : undefined;
}

function hasExportModifier(node: ts.FunctionDeclaration | ts.VariableStatement): boolean {
  return node.modifiers?.some((m) => m.kind === SK.ExportKeyword) === true;
}

/** The function a node is written in (parent links are set by the collecting walk). */
function enclosingFunction(node: ts.Node): FunctionLike | undefined {
  for (let at = node.parent; at; at = at.parent) {
    if (ts.isFunctionDeclaration(at) || ts.isArrowFunction(at) || ts.isFunctionExpression(at)) return at;
    if (ts.isMethodDeclaration(at) || ts.isConstructorDeclaration(at) || ts.isAccessor(at)) return undefined;
  }
  return undefined;
}

/** `Deno.Command` (or `globalThis.Deno.Command`). */
function isDenoCommand(expression: ts.Expression): boolean {
  const node = unwrap(expression);
  if (!ts.isPropertyAccessExpression(node) || node.name.text !== 'Command') return false;
  const owner = unwrap(node.expression);
  if (ts.isIdentifier(owner)) return owner.text === 'Deno';
  return ts.isPropertyAccessExpression(owner) && owner.name.text === 'Deno' && ts.isIdentifier(owner.expression) && owner.expression.text === 'globalThis';
}

/**
 * The function or method whose parameter `name` is where `node` is written (the nearest that
 * declares it: an inner callback that does not is looked through), with that parameter's position
 * among those a caller passes (TypeScript's `this` parameter not counted).
 */
function functionDeclaring(node: ts.Node, name: string): { fn: ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression | ts.MethodDeclaration; index: number } | undefined {
  for (let at = node.parent; at; at = at.parent) {
    if (ts.isFunctionDeclaration(at) || ts.isArrowFunction(at) || ts.isFunctionExpression(at) || ts.isMethodDeclaration(at)) {
      const parameters = at.parameters.filter((parameter) => !(ts.isIdentifier(parameter.name) && parameter.name.text === 'this'));
      const index = parameters.findIndex((parameter) => ts.isIdentifier(parameter.name) && parameter.name.text === name && !parameter.dotDotDotToken);
      if (index >= 0) return { fn: at, index };
      if (parameters.some((parameter) => !ts.isIdentifier(parameter.name))) return undefined; // a destructured one may bind it
    }
    if (ts.isConstructorDeclaration(at) || ts.isAccessor(at) || ts.isClassStaticBlockDeclaration(at) || ts.isSourceFile(at)) return undefined;
  }
  return undefined;
}

/** A class's method, or an arrow or function held in a class field (`run = (cmd) => …`), with its class and name; static members are not. */
function classMemberOf(fn: ts.Node): { owner: ts.ClassLikeDeclaration; name: string } | undefined {
  const member = ts.isMethodDeclaration(fn) ? fn : fn.parent && ts.isPropertyDeclaration(fn.parent) && fn.parent.initializer === fn ? fn.parent : undefined;
  const owner = member?.parent;
  if (!member || !owner || !(ts.isClassDeclaration(owner) || ts.isClassExpression(owner))) return undefined;
  if (member.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.StaticKeyword)) return undefined;
  const name = propertyName(member.name);
  // A name the class declares twice (an overload's signature aside) is read two ways: neither.
  if (name === undefined || owner.members.filter((other) => other !== member && other.name !== undefined && propertyName(other.name) === name && !(ts.isMethodDeclaration(other) && !other.body)).length > 0) return undefined;
  return { owner, name };
}

/** Whether a function's body binds `name` again (`cmd = cmd.trim()`, `cmd += ' --x'`, `let cmd`, `for (cmd of …)`). */
function rebindsName(body: string, name: string): boolean {
  return new RegExp(String.raw`(?<![\w$.])${name.replace(/\$/g, '\\$')}\s*(?:[-+*/%|&^]|\*\*|<<|>>>?|&&|\|\||\?\?)?=(?![=>])|\b(?:let|const|var)\s+${name.replace(/\$/g, '\\$')}\b|\(\s*(?:let|const|var)?\s*${name.replace(/\$/g, '\\$')}\s+(?:of|in)\b`).test(body);
}

/** The function, method or file a node is written in: a name's scope for heldArgumentsCommand. */
function nearestScope(node: ts.Node): ts.Node {
  for (let at = node.parent; at; at = at.parent) {
    if (ts.isFunctionDeclaration(at) || ts.isArrowFunction(at) || ts.isFunctionExpression(at) || ts.isMethodDeclaration(at) || ts.isConstructorDeclaration(at) || ts.isAccessor(at) || ts.isSourceFile(at)) return at;
  }
  return node;
}

/** The name a function is known by in this file: its own, or the variable it initialises. */
function functionName(fn: FunctionLike): string | undefined {
  if (ts.isFunctionDeclaration(fn)) return fn.name?.text;
  let at: ts.Node = fn;
  while (at.parent && (ts.isParenthesizedExpression(at.parent) || ts.isAsExpression(at.parent) || ts.isSatisfiesExpression(at.parent))) at = at.parent;
  return at.parent && ts.isVariableDeclaration(at.parent) && ts.isIdentifier(at.parent.name) ? at.parent.name.text : undefined;
}

/**
 * Whether `call` (a spawn call in `fn`) is handed one of fn's parameters as it came: the
 * parameter itself (past the command), spread into the arguments, or spread into an options
 * object that does not set `detached` after it. Then the options fn's callers pass reach the spawn.
 */
function passesThrough(fn: FunctionLike, call: ts.CallExpression): boolean {
  const params = new Set<string>();
  for (const parameter of fn.parameters) if (ts.isIdentifier(parameter.name)) params.add(parameter.name.text);
  if (params.size === 0) return false;
  const isParam = (e: ts.Expression) => {
    const node = unwrap(e);
    return ts.isIdentifier(node) && params.has(node.text);
  };
  // The first argument is the command: passing that through makes no wrapper of options.
  for (const [index, argument] of call.arguments.entries()) {
    if ((index > 0 && isParam(argument)) || (ts.isSpreadElement(argument) && isParam(argument.expression))) return true;
    const object = unwrap(argument);
    if (!ts.isObjectLiteralExpression(object)) continue;
    let spread = false;
    for (const property of object.properties) {
      if (ts.isSpreadAssignment(property) && isParam(property.expression)) spread = true;
      else if (propertyName(property.name) === 'detached') spread = false; // an explicit value overrides the caller's
    }
    if (spread) return true;
  }
  return false;
}

/**
 * Whether an `.unref()` of `child` runs in a listener of that child's own `exit` or `close`
 * (`child.on('exit', () => { child.unref(); … })`): the child has ended, nothing is let go.
 */
function unrefAfterExit(call: ts.CallExpression, child: ts.Expression, sf: ts.SourceFile): boolean {
  const childText = unwrap(child).getText(sf);
  for (let at: ts.Node | undefined = call.parent; at && !ts.isSourceFile(at); at = at.parent) {
    if (!ts.isArrowFunction(at) && !ts.isFunctionExpression(at)) continue;
    const listen = at.parent;
    if (!listen || !ts.isCallExpression(listen) || listen.arguments[1] !== at) return false;
    const method = unwrap(listen.expression);
    const event = listen.arguments[0] && unwrap(listen.arguments[0]);
    return ts.isPropertyAccessExpression(method) && /^(?:on|once|addListener|prependListener|prependOnceListener)$/.test(method.name.text) &&
      unwrap(method.expression).getText(sf) === childText && event !== undefined && ts.isStringLiteralLike(event) && (event.text === 'exit' || event.text === 'close');
  }
  return false;
}

/**
 * A D-Bus call of systemd's `Manager.StartTransientUnit`: the method called by its name
 * (`manager.StartTransientUnit(name, 'fail', props, [])`, dbus-next's proxies) or named by a string
 * argument of a generic method call beside systemd's bus name (`callMethod('org.freedesktop.systemd1.Manager',
 * 'StartTransientUnit', …)`; not `text.includes('StartTransientUnit')`). Python: the same.
 */
function startsTransientUnit(call: ts.CallExpression): boolean {
  if (memberName(unwrap(call.expression)) === 'StartTransientUnit') return true;
  const strings = call.arguments.map(unwrap).filter((node) => ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)).map((node) => (node as ts.StringLiteral).text);
  return strings.includes('StartTransientUnit') && strings.some((text) => text.startsWith('org.freedesktop.systemd1'));
}

/**
 * `cp.unref(); return cp.kill(signal)`: an unref in the same block as, and before, the same child's
 * `kill` (renovate's timeout: the owner stops waiting on a child it is ending, not one it leaves
 * running). Only a statement of its own, and a `kill` among the statements after it.
 */
function unrefBeforeKill(call: ts.CallExpression, child: ts.Expression, sf: ts.SourceFile): boolean {
  const statement = call.parent;
  if (!statement || !ts.isExpressionStatement(statement) || !ts.isBlock(statement.parent)) return false;
  const lastKill = lastKillsIn(statement.parent, sf).get(unwrap(child).getText(sf));
  return lastKill !== undefined && lastKill > statement.parent.statements.indexOf(statement);
}

/** For a block: the index of the last statement holding `x.kill(…)` (not inside a function), by `x`'s text. Read once a block. */
const blockKills = new WeakMap<ts.Block, Map<string, number>>();
function lastKillsIn(block: ts.Block, sf: ts.SourceFile): Map<string, number> {
  let kills = blockKills.get(block);
  if (kills) return kills;
  const found = new Map<string, number>();
  block.statements.forEach((statement, index) => {
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const callee = unwrap(node.expression);
        if (ts.isPropertyAccessExpression(callee) && callee.name.text === 'kill') found.set(unwrap(callee.expression).getText(sf), index);
      }
      if (!ts.isFunctionLike(node)) ts.forEachChild(node, visit);
    };
    visit(statement);
  });
  kills = found;
  blockKills.set(block, kills);
  return kills;
}

/**
 * The expression a value stands in once the parentheses and `!` around it are climbed, and with
 * `throughLogical` the `&&`/`||`/`??` too; `tested` says a logical operator was crossed, `negated`
 * that an odd number of `!` were.
 */
function climbTest(node: ts.Node, throughLogical: boolean): { value: ts.Node; tested: boolean; negated: boolean } {
  let value = node;
  let tested = false;
  let negated = false;
  for (let up = value.parent; up; up = value.parent) {
    if (ts.isParenthesizedExpression(up)) value = up;
    else if (ts.isPrefixUnaryExpression(up) && up.operator === ts.SyntaxKind.ExclamationToken) {
      negated = !negated;
      value = up;
    } else if (throughLogical && ts.isBinaryExpression(up) && isLogical(up.operatorToken.kind)) {
      tested = true;
      value = up;
    } else break;
  }
  return { value, tested, negated };
}

/** A module that binds POSIX's process calls for Node (`posix`, `posix-node`, `node-posix`), named in the file. */
const POSIX_BINDING = /(['"`])(?:@[\w.-]+\/)?(?:node-)?posix(?:-node)?\1/;

/** A ChildProcess's methods that return the child itself (EventEmitter's listener methods). */
const CHAINING_METHODS = new Set(['on', 'once', 'addListener', 'prependListener', 'prependOnceListener', 'off', 'removeListener', 'removeAllListeners', 'setMaxListeners']);
/** Properties of a library's subprocess object that hold the Node ChildProcess (nano-spawn, tinyexec, ...). */
const CHILD_MEMBERS = new Set(['nodeChildProcess', 'childProcess', 'process', 'child', 'subprocess']);
/** Of those, the names that say so on their own: a child, of whatever object they are a member. */
const OWN_NAME_CHILD_MEMBERS = new Set(['nodeChildProcess', 'childProcess']);
/**
 * The names a spawn function goes by in any library (`fork` of @ionic/utils-subprocess, the
 * default `spawn` of @expo/turtle-spawn, execa's own `execa` inside its repository): what such a
 * call returns, once `.unref()` is called on it or on its `.child`, is a child handle, whatever
 * module the function came from. Only for `.unref()`: options handed to an unknown module's
 * function are not read as spawn options on the strength of its name.
 */
const SPAWN_FAMILY_NAMES = new Set(['spawn', 'spawnAsync', 'fork', 'exec', 'execFile', 'execa', 'execaNode']);

/** `createRequire(url)` or `module.createRequire(url)`: its result is a require function. */
function isCreateRequireCall(node: ts.Expression): boolean {
  if (!ts.isCallExpression(node)) return false;
  const callee = unwrap(node.expression);
  return (ts.isIdentifier(callee) && callee.text === 'createRequire') || (ts.isPropertyAccessExpression(callee) && callee.name.text === 'createRequire');
}

/** Spawn-option keys besides `detached`: an object literal holding one is spawn options. */
const SPAWN_OPTION_KEYS = new Set(['stdio', 'cwd', 'env', 'shell', 'windowsHide', 'windowsVerbatimArguments', 'argv0', 'uid', 'gid', 'killSignal', 'serialization', 'execPath', 'execArgv']);
/** Callees and names that can carry spawn options; `onSpawn(...)` and the like are callbacks, not spawns. */
const SPAWNISH_NAME = /^(?!on[A-Z_])\w*(?:spawn|exec|fork|launch|daemon|start|run|child|process|pty|opt(?:ion)?s?)\w*$/i;

/**
 * Whether `a` and `b` lie in the two branches of one `if`/`else` (or `?:`), so that no run passes
 * both: `opts.detached = true` under `if (daemon)` does not reach the spawn under its `else`. Not
 * where a loop around that branching, within the same function, could run one branch and then the
 * other with the same object.
 */
function exclusiveBranches(a: ts.Node, b: ts.Node): boolean {
  const ancestorsOfA = new Set<ts.Node>();
  for (let at: ts.Node | undefined = a; at; at = at.parent) ancestorsOfA.add(at);
  let child: ts.Node = b;
  let common: ts.Node | undefined = b.parent;
  while (common && !ancestorsOfA.has(common)) {
    child = common;
    common = common.parent;
  }
  if (!common || common === a) return false;
  let aChild: ts.Node = a;
  while (aChild.parent !== common) aChild = aChild.parent as ts.Node;
  const branches = ts.isIfStatement(common) ? [common.thenStatement, common.elseStatement] : ts.isConditionalExpression(common) ? [common.whenTrue, common.whenFalse] : [];
  const split = aChild !== child && branches.includes(aChild as never) && branches.includes(child as never);
  if (!split) return false;
  for (let at = common.parent; at && !ts.isFunctionLike(at) && !ts.isSourceFile(at); at = at.parent) {
    if (ts.isIterationStatement(at, false)) return false;
  }
  return true;
}

/** Keys no spawn options have, that name or describe what an object is. */
const DESCRIPTOR_KEYS = new Set(['name', 'description']);

/** Whether an object literal names or describes something (`name`, `description`) or holds a function. */
function describesSomething(object: ts.ObjectLiteralExpression): boolean {
  return object.properties.some(
    (p) =>
      DESCRIPTOR_KEYS.has(propertyName(p.name) ?? '') ||
      ts.isMethodDeclaration(p) ||
      (ts.isPropertyAssignment(p) && (ts.isArrowFunction(unwrap(p.initializer)) || ts.isFunctionExpression(unwrap(p.initializer)))),
  );
}

/** `this.a`, `a.b.c`: names and `this` joined by dots, nothing computed or called. */
function isAccessPath(node: ts.Expression): boolean {
  let part: ts.Expression = node;
  while (ts.isPropertyAccessExpression(part)) part = part.expression;
  return ts.isIdentifier(part) || part.kind === SK.ThisKeyword;
}

/** The class a node is written in, or undefined. */
function enclosingClass(node: ts.Node): ts.ClassLikeDeclaration | undefined {
  for (let parent = node.parent; parent; parent = parent.parent) if (ts.isClassLike(parent)) return parent;
  return undefined;
}

function addTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Every name a binding (`x`, `{ x }`, `[x]`) binds. */
function boundNames(binding: ts.BindingName, into: (name: string) => void): void {
  if (ts.isIdentifier(binding)) into(binding.text);
  else for (const element of binding.elements) if (!ts.isOmittedExpression(element)) boundNames(element.name, into);
}

/**
 * The names a scope declares directly (its parameters, or the `let`/`const`/`var` statements of a
 * block, the loop's own declarations, a `catch`'s), each to its first declaration: built once per
 * scope, so that looking a name up does not read the scope's statements again.
 */
const scopeDeclarations = new WeakMap<ts.Node, Map<string, ts.Node>>();
function declaredIn(scope: ts.Node): Map<string, ts.Node> {
  let names = scopeDeclarations.get(scope);
  if (names) return names;
  const found = new Map<string, ts.Node>();
  const add = (declaration: ts.Node, binding: ts.BindingName) => boundNames(binding, (name) => {
    if (!found.has(name)) found.set(name, declaration);
  });
  if (ts.isFunctionLike(scope)) for (const parameter of scope.parameters) add(parameter, parameter.name);
  if (ts.isBlock(scope) || ts.isSourceFile(scope) || ts.isModuleBlock(scope) || ts.isCaseClause(scope) || ts.isDefaultClause(scope)) {
    for (const statement of scope.statements) {
      if (ts.isVariableStatement(statement)) for (const declaration of statement.declarationList.declarations) add(declaration, declaration.name);
    }
  }
  if ((ts.isForStatement(scope) || ts.isForOfStatement(scope) || ts.isForInStatement(scope)) && scope.initializer && ts.isVariableDeclarationList(scope.initializer)) {
    for (const declaration of scope.initializer.declarations) add(declaration, declaration.name);
  }
  if (ts.isCatchClause(scope) && scope.variableDeclaration) add(scope.variableDeclaration, scope.variableDeclaration.name);
  names = found;
  scopeDeclarations.set(scope, names);
  return names;
}

/**
 * The parameter or `let`/`const`/`var` declaration that `name` refers to at `use`, read through the
 * blocks and functions around it (a `var` in an inner block is not seen from outside it); undefined
 * for a name declared nowhere around it (a global, an import).
 */
function declaringNode(name: string, use: ts.Node): ts.Node | undefined {
  for (let at = use.parent; at; at = at.parent) {
    const declaration = declaredIn(at).get(name);
    if (declaration) return declaration;
  }
  return undefined;
}

/**
 * The expressions a function returns (an arrow's body, or its own `return`s, not those of functions
 * nested in it), in source order; iterative, since a body's depth is unbounded.
 */
const returnedMemo = new WeakMap<FunctionLike, ts.Expression[]>();
function returnedExpressions(fn: FunctionLike): ts.Expression[] {
  // Once a function: a file may call it (or name it) thousands of times.
  const known = returnedMemo.get(fn);
  if (known) return known;
  const found = collectReturned(fn);
  returnedMemo.set(fn, found);
  return found;
}
function collectReturned(fn: FunctionLike): ts.Expression[] {
  if (!fn.body) return [];
  if (!ts.isBlock(fn.body)) return [fn.body];
  const found: ts.Expression[] = [];
  const stack: ts.Node[] = [fn.body];
  const children: ts.Node[] = [];
  const push = (child: ts.Node): undefined => {
    children.push(child);
    return undefined;
  };
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (ts.isReturnStatement(node)) {
      if (node.expression) found.push(node.expression);
      continue;
    }
    if (node !== fn.body && ts.isFunctionLike(node)) continue;
    ts.forEachChild(node, push);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as ts.Node);
    children.length = 0;
  }
  return found;
}

function isLogical(kind: ts.SyntaxKind): boolean {
  return kind === SK.BarBarToken || kind === SK.QuestionQuestionToken || kind === SK.AmpersandAmpersandToken;
}

class JsFileAnalysis {
  private readonly bindings = new Map<string, Binding>();
  private readonly variables = new Map<string, ts.VariableDeclaration[]>();
  /** A held argument list's uses after its declaration (nameUses), by declaration. */
  private readonly nameUseMemo = new Map<ts.VariableDeclaration, { uses: number[]; pushes: number[] }>();
  /** Literal values of names (literalBindings), by name. */
  private readonly heldLiterals = new Map<string, string[]>();
  /** The programs each class's `this.` members hold, by class (heldProgram). */
  private memberPrograms: Map<ts.Node, Map<string, string>> | undefined;
  /** The file's own runner functions (findOwnRunners): name to the command parameter's position (-1: read two ways). */
  private readonly ownRunners = new Map<string, number>();
  /** The file's own runner methods, by class: name to the command parameter's position (-1: read two ways). */
  private readonly ownMethods = new Map<ts.Node, Map<string, number>>();
  /** calledFunctions' answer by name (a parameter of that name aside). */
  private readonly calledByName = new Map<string, FunctionLike[]>();
  /** joinedLists' answer by the name holding the lists. */
  private readonly joinedByName = new Map<string, Array<[ts.ArrayLiteralExpression, string]>>();
  /** How deep checkShellText follows returned text through calls (a chain of thousands is cut). */
  private returnDepth = 0;
  /** The same runners by their function, named or not (`module.exports = function (cmd) {...}`). */
  private readonly runnerFunctions = new Map<ts.Node, number>();
  /** Array literals whose first element is a name: an argument vector where the name holds a detaching program. */
  private readonly heldProgramVectors: ts.ArrayLiteralExpression[] = [];
  private readonly functions = new Map<string, FunctionLike>();
  /** How many function declarations the file has of each name (an own runner's name is declared once). */
  private readonly functionCounts = new Map<string, number>();
  /** Writes to a variable after its declaration: `o.detached = v`, `o = {...}`, `Object.assign(o, ...)`. */
  private readonly mutations = new Map<string, ts.Expression[]>();
  /** Text added to a name (`cmd += ' &'`), by name: read after a value, as the end of a command line. */
  private readonly appended = new Map<string, ts.Expression[]>();
  /** The same texts as a set, to tell them from the name's other sources in one step. */
  private readonly appendedTexts = new Set<ts.Expression>();
  /** Words pushed onto an array held in a name (`cmd.push('Start-Process')`), by name: read as its elements. */
  private readonly pushes = new Map<string, ts.Expression[]>();
  /** Names some write of which can set a detaching `detached` (someWriteDetaches), once asked. */
  private readonly detachingWrites = new Map<string, boolean>();
  /** The same for options held in a member (`this.spawnWith`), by the member's source text. */
  private readonly memberMutations = new Map<string, ts.Expression[]>();
  /** Values of names read as command text already (a name passed to several spawns is reported once). */
  private readonly shellChecked = new Set<ts.Expression>();
  /** Names whose held text was read already (checkShellText), whichever use it came from. */
  private readonly shellNames = new Set<string>();
  /** Names of parameters (identifiers) and of compound-assignment targets, anywhere in the file: never held false. */
  private readonly parameterNames = new Set<string>();
  private readonly calls: ts.CallExpression[] = [];
  private readonly taggedTemplates: ts.TaggedTemplateExpression[] = [];
  /** `new Deno.Command(program, options)`: Deno's spawn (checkDenoCommand). */
  private readonly denoCommands: ts.NewExpression[] = [];
  private readonly namesDenoCommand: boolean;
  /** Whether the text names ShellExecute and runas both: only then are its strings read as scripts. */
  private readonly namesElevation: boolean;
  /** Whether the text names systemd's StartTransientUnit: only then are calls looked at for it. */
  private readonly namesTransientUnit: boolean;
  /** holdsShellText's answer for a name: the same sources for every use of it. */
  private readonly heldShellAnswers = new Map<string, boolean>();
  /** String and template literals of such a file, read after the calls (checkElevatingScript). */
  private readonly scriptTexts: ts.Expression[] = [];
  /** Array literals whose first word is a detaching program's (`["systemd-run", ...]`), read after the calls. */
  private readonly programVectors: ts.ArrayLiteralExpression[] = [];
  private readonly typedDeclarations: ts.VariableDeclaration[] = [];
  private readonly detachedProperties: ts.ObjectLiteralElementLike[] = [];
  /** Source text of the expressions that hold a child handle (`child`, `this.proc`). */
  private readonly childHandles = new Set<string>();
  /** Source text of the members and names a spawn function is stored in (`this.run = deps.spawn ?? spawn`). */
  private readonly spawnMembers = new Set<string>();
  private readonly handleAssignments: Array<[string, ts.Expression]> = [];
  /** `export ...`, `module.exports = ...`, `exports.x = ...`: read only when another file imports this one. */
  private readonly exportNodes: ts.Node[] = [];
  private readonly findings: RawFinding[] = [];
  /** Whether some name is bound to a project module's export (not read until needed). */
  private hasProjectBindings = false;
  /** Set while a check that could report may read project modules. */
  private allowProject = false;
  /** Evidence nodes already tied to a spawn call, so they are not reported twice. */
  private readonly connected = new Set<ts.Node>();
  /** `x.detached` reads by scope (detachedReadsIn), and whether the text has any `.detached` at all. */
  private readonly detachedReads = new Map<ts.Node, Map<string, Map<ts.Node | undefined, ts.PropertyAccessExpression>>>();
  private readonly mentionsDetachedMember: boolean;
  /** Whether the file names a POSIX binding (checkSelfDetach), read at its first `setsid`/`setpgid` call. */
  private namesPosixBinding: boolean | undefined;
  /** Whether a helper's parameter is only read (onlyReads), by parameter. */
  private readonly readerAnswers = new Map<ts.ParameterDeclaration, boolean>();
  private readonly usesByScope = new Map<ts.Node, Map<string, ts.Identifier[]>>();

  constructor(
    private readonly sf: ts.SourceFile,
    private readonly context: ImportContext,
  ) {
    this.mentionsDetachedMember = sf.text.includes('.detached');
    this.namesElevation = /ShellExecute/i.test(sf.text) && /runas/i.test(sf.text);
    this.namesTransientUnit = sf.text.includes('StartTransientUnit');
    this.namesDenoCommand = sf.text.includes('Deno');
  }

  /** Collection and the facts every check relies on: handles, stored spawn functions, wrappers. */
  private prepare(): void {
    this.collect(this.sf);
    for (const [target, value] of this.handleAssignments) {
      if (this.isSpawnCall(value) || this.isSpawnNamedCall(value)) this.childHandles.add(target);
      else if (target.includes('.') && this.isSpawnFunction(value)) this.spawnMembers.add(target);
    }
    if (this.bindings.size > 0 || this.spawnMembers.size > 0) this.bindWrappers();
    if (this.bindings.size > 0 || this.spawnMembers.size > 0) this.findOwnRunners();
  }

  /**
   * The file's own command runners: functions and methods that hand one of their parameters, as
   * it is, to a spawn function as its command (`function sh(cmd) { return execSync(cmd, opts) }`,
   * a class's `run(command) { return spawn(command, { shell: true }) }`). What their callers pass
   * there is a command, read as a spawn's own. A function is known by a name declared once in the
   * file, a method (or an arrow held in a class field) by its class, called on `this` within it; a
   * parameter bound again in the function is none. Python's: python-own-runners.ts.
   */
  private findOwnRunners(): void {
    const rebound = new Map<ts.Node, Map<string, boolean>>();
    for (const call of this.calls) {
      const command = call.arguments[0] && unwrap(call.arguments[0]);
      if (!command || !ts.isIdentifier(command) || !this.isSpawnFunction(call.expression)) continue;
      const found = functionDeclaring(call, command.text);
      if (!found?.fn.body) continue;
      const { fn, index } = found;
      let names = rebound.get(fn);
      if (!names) rebound.set(fn, (names = new Map()));
      let again = names.get(command.text);
      if (again === undefined) names.set(command.text, (again = rebindsName((fn.body as ts.Node).getText(this.sf), command.text)));
      if (again) continue;
      const member = classMemberOf(fn);
      if (member) {
        let methods = this.ownMethods.get(member.owner);
        if (!methods) this.ownMethods.set(member.owner, (methods = new Map()));
        const previous = methods.get(member.name);
        methods.set(member.name, previous !== undefined && previous !== index ? -1 : index); // read two ways: neither
        continue;
      }
      if (ts.isMethodDeclaration(fn)) continue; // an object literal's method: called on the object, not followed
      const previousAt = this.runnerFunctions.get(fn);
      this.runnerFunctions.set(fn, previousAt !== undefined && previousAt !== index ? -1 : index);
      const name = functionName(fn);
      if (name === undefined || this.bindings.has(name) || this.parameterNames.has(name)) continue;
      const declarations = (this.variables.get(name)?.length ?? 0) + (this.functionCounts.get(name) ?? 0);
      if (declarations !== 1) continue;
      const previous = this.ownRunners.get(name);
      this.ownRunners.set(name, previous !== undefined && previous !== index ? -1 : index);
    }
  }

  /** The command parameter's position of a runner imported by name from a project module (`import { exec } from './utils/exec'`). */
  private importedRunner(name: string, call: ts.CallExpression): number | undefined {
    const binding = this.bindings.get(name);
    if (binding?.kind !== 'project' || (binding.member === '*' && !binding.require)) return undefined;
    // A parameter of that name is not the import.
    const callee = call.expression;
    const declaration = ts.isIdentifier(callee) ? declaringNode(name, callee) : undefined;
    if (declaration && ts.isParameter(declaration)) return undefined;
    // The module is read only for a call handing it something that could be a finding.
    if (!call.arguments.some((argument) => this.mayCarryCommand(argument))) return undefined;
    return this.withProject(() => projectModule(this.sf.fileName, binding.specifier, this.context)?.runners?.get(binding.member === '*' ? 'default' : binding.member));
  }

  /**
   * `args.join(' ')`: the lists joined (one written there, or those a name is declared or assigned),
   * each with what its words joined background, if anything; undefined for any other expression.
   */
  private joinedLists(expression: ts.Expression): Array<[ts.ArrayLiteralExpression, string]> | undefined {
    const node = unwrap(expression);
    if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression) || node.expression.name.text !== 'join' || node.arguments.length > 1) return undefined;
    const separator = node.arguments[0] ? commandText(node.arguments[0], 0) : ',';
    const owner = unwrap(node.expression.expression);
    if (separator === undefined) return undefined;
    const read = (lists: ts.ArrayLiteralExpression[]) => {
      const found: Array<[ts.ArrayLiteralExpression, string]> = [];
      for (const list of lists) {
        const construct = backgroundingIn(list.elements.map((element) => (ts.isSpreadElement(element) ? VALUE_MARK : (commandText(element, 0) ?? VALUE_MARK))).join(separator));
        if (construct) found.push([list, construct]);
      }
      return found;
    };
    if (ts.isArrayLiteralExpression(owner)) return read([owner]);
    if (!ts.isIdentifier(owner)) return undefined;
    // A name's lists are read once for a separator, however often it is joined.
    const key = `${separator}\0${owner.text}`;
    const known = this.joinedByName.get(key);
    if (known) return known;
    const lists = this.heldSources(owner.text).map((source) => source && unwrap(source)).filter((source): source is ts.ArrayLiteralExpression => source !== undefined && ts.isArrayLiteralExpression(source));
    if (lists.length === 0) return undefined;
    const found = read(lists);
    this.joinedByName.set(key, found);
    return found;
  }

  /**
   * A template whose spliced names hold literals (`command = "start"` on one branch, then
   * `` `${command} ${file}` ``): read with each literal in place (at most MAX_HELD_CHOICES texts),
   * for a name declared once in the file, in the template's own function.
   */
  private splicedConstruct(template: ts.TemplateExpression): string | undefined {
    const own = enclosingFunction(template);
    const choices = template.templateSpans.map((span) => {
      const value = unwrap(span.expression);
      if (!ts.isIdentifier(value) || (this.variables.get(value.text)?.length ?? 0) > 1) return [];
      const declaration = declaringNode(value.text, value);
      if (!declaration || !ts.isVariableDeclaration(declaration) || enclosingFunction(declaration) !== own) return [];
      return this.literalBindings(value.text);
    });
    if (choices.every((values) => values.length === 0)) return undefined;
    let texts = [template.head.text];
    template.templateSpans.forEach((span, index) => {
      const values = (choices[index] as string[]).length > 0 ? (choices[index] as string[]) : [VALUE_MARK];
      texts = texts.flatMap((text) => values.map((value) => text + value + span.literal.text)).slice(0, MAX_HELD_CHOICES);
    });
    for (const text of texts) {
      const construct = backgroundingIn(text);
      if (construct) return construct;
    }
    return undefined;
  }

  /** Whether an argument is, or holds, backgrounding text, or the result of a file's function that may return some. */
  private mayCarryCommand(argument: ts.Expression): boolean {
    const node = unwrap(argument);
    if (this.shellConstruct(node) !== undefined || this.holdsShellText(node)) return true;
    const sources = ts.isCallExpression(node) ? [node] : ts.isIdentifier(node) ? this.heldSources(node.text) : [];
    return sources.some((source) => {
      const value = source && unwrap(source);
      if (value === undefined || !ts.isCallExpression(value)) return false;
      if ((this.joinedLists(value)?.length ?? 0) > 0) return true;
      return ts.isIdentifier(unwrap(value.expression)) && this.calledFunctions(unwrap(value.expression) as ts.Identifier).length > 0;
    });
  }

  /** A call of one of the file's own runners: its command argument read as shell text, as a spawn's is. */
  private checkOwnRunnerCall(call: ts.CallExpression, callee: ts.Expression): void {
    let index: number | undefined;
    if (ts.isIdentifier(callee)) index = this.ownRunners.get(callee.text) ?? this.importedRunner(callee.text, call);
    else if (this.ownMethods.size > 0 && ts.isPropertyAccessExpression(callee) && callee.expression.kind === SK.ThisKeyword) {
      const owner = enclosingClass(call);
      index = owner && this.ownMethods.get(owner)?.get(callee.name.text);
    }
    if (index === undefined || index < 0) return;
    if (call.arguments.slice(0, index + 1).some((argument) => ts.isSpreadElement(argument))) return; // where the command falls is not known
    const command = call.arguments[index];
    if (command) this.checkShellText(command);
  }

  run(): RawFinding[] {
    this.reportParseErrors();
    this.prepare();
    for (const call of this.calls) this.checkCall(call);
    for (const tagged of this.taggedTemplates) this.checkTaggedTemplate(tagged);
    for (const command of this.denoCommands) this.checkDenoCommand(command);
    for (const declaration of this.typedDeclarations) this.checkTypedDeclaration(declaration);
    if (this.bindings.size > 0) this.checkLooseLiterals();
    for (const list of this.programVectors) this.checkProgramVector(list);
    for (const list of this.heldProgramVectors) {
      const first = list.elements[0] as ts.Identifier;
      if (this.literalBindings(first.text).some((program) => mayBeDetachingArgv(program, undefined))) this.checkProgramVector(list);
    }
    for (const script of this.scriptTexts) this.checkElevatingScript(script);
    return this.findings;
  }

  /** Whether a finding already covers a line (a spawn reported with the text read there). */
  private reportedOn(line: number): boolean {
    return this.findings.some((finding) => finding.spans.some(([first, last]) => first <= line && line <= last));
  }

  /**
   * Script text calling ShellExecute with "runas", written anywhere (react-native's VBScript,
   * written to a file and run): reported at the string unless a finding already covers its first
   * line (the same text handed to a spawn). Python: the same for its strings.
   */
  private checkElevatingScript(script: ts.Expression): void {
    const text = commandText(script, 0);
    if (text === undefined || !elevatingScriptIn(text)) return;
    const line = this.lineOf(script.getStart(this.sf));
    if (this.reportedOn(line)) return;
    this.report(script, 'shell-background', 'error', 'script text calls ShellExecute with the "runas" verb: the program it names starts elevated, outside the caller\'s tree and job', script);
  }

  /**
   * An argument vector of a program whose job is to detach, built anywhere (`["systemd-run",
   * "--unit", name, "--no-block", "--"].concat(cmd)`, handed to a framework's own spawn): reported
   * as the program run with those words would be, unless a finding already covers its line (a
   * spawn reported with it). A list of bare words (`["screen", "tmux"]`, names of programs) is data:
   * some element after the first must be an option, a path or a value. Python: enterArgumentVector.
   */
  private checkProgramVector(list: ts.ArrayLiteralExpression): void {
    const words = list.elements.map((element) => commandText(element, 0));
    if (!words.slice(1).some((word) => word === undefined || /^-|[\/\\]/.test(word))) return;
    const name = this.detachingWith(words, list.elements);
    if (!name) return;
    const line = this.lineOf(list.getStart(this.sf));
    if (this.reportedOn(line)) return;
    this.report(list, 'shell-background', 'error', `\`${name}\` starts the program away from its owner, which cannot end it`, list);
  }

  private reportParseErrors(): void {
    // parseDiagnostics is not in the public typings but is what tsc itself reports as syntax errors.
    const all = (this.sf as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
    const diagnostics = this.isScript() ? all.filter((d) => !this.sloppyModeAllows(d)) : all;
    const first = diagnostics[0];
    if (!first) return;
    const { line, character } = this.sf.getLineAndCharacterOfPosition(first.start);
    this.findings.push({
      rule: 'parse-error',
      severity: 'error',
      line: line + 1,
      column: character + 1,
      message: `cannot parse: ${ts.flattenDiagnosticMessageText(first.messageText, ' ')} (a detached spawn here could go unseen)`,
      spans: [],
    });
  }

  /**
   * A `.cjs` file, or a `.js`/`.jsx` file with no import or export, runs as a script (Node runs it as
   * CommonJS), where sloppy-mode syntax is valid. TypeScript's parser reads every file as strict.
   */
  private isScript(): boolean {
    if (/\.cjs$/i.test(this.sf.fileName)) return true;
    return /\.jsx?$/i.test(this.sf.fileName) && (this.sf as unknown as { externalModuleIndicator?: unknown }).externalModuleIndicator === undefined;
  }

  /**
   * Strict-mode-only complaints that sloppy mode accepts: octal literals (`0777`), leading-zero
   * decimals (`08`), and octal or `\8` escapes in a string literal (not in a template, where they
   * are errors in every mode).
   */
  private sloppyModeAllows(diagnostic: ts.DiagnosticWithLocation): boolean {
    if (![1121, 1487, 1488, 1489].includes(diagnostic.code)) return false;
    let node: ts.Node = this.sf;
    // Down to the innermost node holding the position, without recursion.
    for (;;) {
      let inner: ts.Node | undefined;
      ts.forEachChild(node, (child) => {
        if (child.pos <= diagnostic.start && diagnostic.start < child.end) inner = child;
        return inner !== undefined;
      });
      if (!inner) break;
      node = inner;
    }
    return ts.isStringLiteral(node) || ts.isNumericLiteral(node);
  }

  // --- collection: one walk over the file -------------------------------------------------------

  // Iterative: a file's depth is unbounded (a chain of a thousand calls, a long `+` of strings), and
  // a recursive walk over it overflows the stack. Children are pushed in reverse so that nodes are
  // visited in source order, which the "last declaration before the use" lookups rely on.
  private collect(root: ts.Node): void {
    const stack: ts.Node[] = [root];
    // One scratch array for every node's children, refilled from the start with a count: setting
    // `length = 0` after each node was a runtime call per node, a fifth of the walk's time.
    const children: ts.Node[] = [];
    let count = 0;
    let parent: ts.Node = root;
    const push = (child: ts.Node): undefined => {
      // Parent links, set here rather than by the parser's own extra pass over the tree.
      (child as { parent: ts.Node }).parent = parent;
      children[count++] = child;
      return undefined; // forEachChild stops at a truthy return
    };
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      this.collectNode(node);
      parent = node;
      count = 0;
      ts.forEachChild(node, push);
      for (let i = count - 1; i >= 0; i--) stack.push(children[i] as ts.Node);
    }
  }

  // One switch on the kind read once: a chain of ts.isX tests re-reads `kind` from nodes of many
  // shapes (a slow, megamorphic access) for every node of the file.
  private collectNode(node: ts.Node): void {
    switch (node.kind) {
      case SK.ImportDeclaration:
        this.collectImport(node as ts.ImportDeclaration);
        break;
      case SK.ImportEqualsDeclaration:
        this.collectImportEquals(node as ts.ImportEqualsDeclaration);
        break;
      case SK.VariableDeclaration:
        this.collectVariable(node as ts.VariableDeclaration);
        break;
      case SK.Parameter:
        this.collectParameter(node as ts.ParameterDeclaration);
        break;
      case SK.FunctionDeclaration: {
        const declaration = node as ts.FunctionDeclaration;
        if (declaration.name) {
          this.functions.set(declaration.name.text, declaration);
          this.functionCounts.set(declaration.name.text, (this.functionCounts.get(declaration.name.text) ?? 0) + 1);
        }
        if (hasExportModifier(declaration)) this.exportNodes.push(declaration);
        break;
      }
      case SK.VariableStatement:
        if (hasExportModifier(node as ts.VariableStatement)) this.exportNodes.push(node);
        break;
      case SK.ExportDeclaration:
      case SK.ExportAssignment:
        this.exportNodes.push(node);
        break;
      case SK.PropertyDeclaration: {
        // class C { run = deps.spawn ?? spawn; proc = spawn(...) }: read as `this.run`, `this.proc`.
        const property = node as ts.PropertyDeclaration;
        const name = propertyName(property.name);
        if (name !== undefined && property.initializer) this.handleAssignments.push([`this.${name}`, unwrap(property.initializer)]);
        break;
      }
      case SK.CallExpression:
        this.collectCall(node as ts.CallExpression);
        break;
      case SK.TaggedTemplateExpression:
        this.taggedTemplates.push(node as ts.TaggedTemplateExpression);
        break;
      case SK.NewExpression:
        if (this.namesDenoCommand && isDenoCommand((node as ts.NewExpression).expression)) this.denoCommands.push(node as ts.NewExpression);
        break;
      case SK.StringLiteral:
      case SK.NoSubstitutionTemplateLiteral:
      case SK.TemplateExpression:
        if (this.namesElevation) this.scriptTexts.push(node as ts.Expression);
        break;
      case SK.ArrayLiteralExpression: {
        // `["systemd-run", "--user", cmd]` built anywhere: read after the calls (checkProgramVector).
        const [first, , third] = (node as ts.ArrayLiteralExpression).elements;
        const text = (element: ts.Expression | undefined) => (element && (ts.isStringLiteral(element) || ts.isNoSubstitutionTemplateLiteral(element)) ? element.text : undefined);
        if (mayBeDetachingArgv(text(first), text(third))) this.programVectors.push(node as ts.ArrayLiteralExpression);
        // `[systemdRun, '--scope', …]`: a program held in a name, known once the declarations are (below).
        else if (first && ts.isIdentifier(first)) this.heldProgramVectors.push(node as ts.ArrayLiteralExpression);
        break;
      }
      case SK.BinaryExpression:
        if ((node as ts.BinaryExpression).operatorToken.kind === SK.EqualsToken) this.collectAssignment(node as ts.BinaryExpression);
        else if (isCompoundAssignment((node as ts.BinaryExpression).operatorToken.kind) && ts.isIdentifier(unwrap((node as ts.BinaryExpression).left))) {
          const name = (unwrap((node as ts.BinaryExpression).left) as ts.Identifier).text;
          this.parameterNames.add(name); // `x ||= true`: not held false
          // cmd += ' &': text added after what the name held, which reads as a value before it.
          if ((node as ts.BinaryExpression).operatorToken.kind === SK.PlusEqualsToken) {
            addTo(this.appended, name, (node as ts.BinaryExpression).right);
            this.appendedTexts.add((node as ts.BinaryExpression).right);
          }
        }
        break;
      case SK.PropertyAssignment:
      case SK.ShorthandPropertyAssignment:
        if (this.keyOf((node as ts.PropertyAssignment | ts.ShorthandPropertyAssignment).name) === 'detached') {
          this.detachedProperties.push(node as ts.PropertyAssignment | ts.ShorthandPropertyAssignment);
        }
        break;
    }
  }

  private collectImport(node: ts.ImportDeclaration): void {
    if (!ts.isStringLiteral(node.moduleSpecifier)) return;
    const clause = node.importClause;
    if (!clause || clause.isTypeOnly) return;
    if (this.isProjectSpecifier(node.moduleSpecifier.text)) return this.collectProjectImport(node.moduleSpecifier.text, clause);
    const shape = SPAWN_MODULES.get(node.moduleSpecifier.text);
    if (!shape) return;
    if (clause.name) this.bindModuleObject(clause.name.text, shape);
    const named = clause.namedBindings;
    if (named && ts.isNamespaceImport(named)) this.bindModuleObject(named.name.text, shape);
    if (named && ts.isNamedImports(named)) {
      for (const element of named.elements) {
        const imported = (element.propertyName ?? element.name).text;
        if (imported === 'default') this.bindModuleObject(element.name.text, shape);
        else if (shape.functions.has(imported)) this.bindings.set(element.name.text, { kind: 'function', pty: shape.pty, daemon: shape.daemon });
      }
    }
  }

  /** `import run, { spawn as s } from './proc.js'`: names bound, for now unread, to a project module's exports. */
  private collectProjectImport(specifier: string, clause: ts.ImportClause): void {
    const bind = (local: string, member: string) => this.bindProject(local, { kind: 'project', specifier, member, require: false });
    if (clause.name) bind(clause.name.text, 'default');
    const named = clause.namedBindings;
    if (named && ts.isNamespaceImport(named)) bind(named.name.text, '*');
    if (named && ts.isNamedImports(named)) {
      for (const element of named.elements) if (!element.isTypeOnly) bind(element.name.text, (element.propertyName ?? element.name).text);
    }
  }

  /** Whether a specifier of this file names a project module (one function, handed on as it is). */
  private readonly isProjectSpecifier = (specifier: string): boolean => isProjectSpecifier(this.sf.fileName, specifier, this.context.root);

  private bindProject(local: string, binding: Binding): void {
    this.bindings.set(local, binding);
    this.hasProjectBindings = true;
  }

  /**
   * What a binding stands for, reading a project module only when `allowProject` is set: most
   * imported names are never part of a finding, and reading their modules was most of the cost
   * of following imports.
   */
  private resolved(binding: Binding | undefined): Binding | undefined {
    if (binding?.kind !== 'project') return binding;
    if (!this.allowProject) return undefined;
    const shape = projectModule(this.sf.fileName, binding.specifier, this.context);
    if (!shape) return undefined;
    if (binding.member === '*') return binding.require && shape.callableDefault ? { kind: 'callable', shape } : { kind: 'namespace', shape };
    return shape.functions.has(binding.member) ? { kind: 'function' } : shape.modules?.get(binding.member);
  }

  /** Runs `check` with project modules readable. */
  private withProject<T>(check: () => T): T {
    if (this.allowProject || !this.hasProjectBindings) return check();
    this.allowProject = true;
    try {
      return check();
    } finally {
      this.allowProject = false;
    }
  }

  private collectImportEquals(node: ts.ImportEqualsDeclaration): void {
    const reference = node.moduleReference;
    if (ts.isExternalModuleReference(reference) && ts.isStringLiteral(reference.expression)) {
      const shape = SPAWN_MODULES.get(reference.expression.text);
      if (shape) this.bindModuleObject(node.name.text, shape);
    }
  }

  private bindModuleObject(name: string, shape: ModuleShape): void {
    this.bindings.set(name, shape.callableDefault ? { kind: 'callable', shape } : { kind: 'namespace', shape });
  }

  private collectVariable(node: ts.VariableDeclaration): void {
    if (node.type && ts.isTypeReferenceNode(node.type) && this.isSpawnOptionsType(node.type)) {
      this.typedDeclarations.push(node);
    } else if (node.initializer && (ts.isSatisfiesExpression(node.initializer) || ts.isAsExpression(node.initializer))) {
      const type = node.initializer.type;
      if (ts.isTypeReferenceNode(type) && this.isSpawnOptionsType(type)) this.typedDeclarations.push(node);
    }
    if (!node.initializer) return;
    const init = unwrap(node.initializer);
    const required = projectRequire(init, this.isProjectSpecifier);
    if (required) {
      // const lib = require('./proc')  /  const { launch } = require('./proc')
      if (ts.isIdentifier(node.name)) this.bindProject(node.name.text, { kind: 'project', specifier: required, member: '*', require: true });
      else if (ts.isObjectBindingPattern(node.name)) {
        for (const element of node.name.elements) {
          const imported = propertyName(element.propertyName ?? element.name);
          if (imported && ts.isIdentifier(element.name)) this.bindProject(element.name.text, { kind: 'project', specifier: required, member: imported, require: true });
        }
      }
    }
    if (ts.isIdentifier(node.name)) {
      const name = node.name.text;
      const list = this.variables.get(name) ?? [];
      list.push(node);
      this.variables.set(name, list);
      if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) this.functions.set(name, init);
      const module = required ? undefined : this.moduleObjectOf(init);
      if (module) this.bindings.set(name, module);
      else if (this.isPromisifiedSpawn(init)) this.bindings.set(name, { kind: 'function' });
      else this.bindFunction(name, init);
      this.handleAssignments.push([name, init]);
    } else if (ts.isObjectBindingPattern(node.name)) {
      // const { spawn, exec: run } = require('child_process')  /  = cp  /  = await import('execa')
      const module = required ? undefined : this.moduleObjectOf(init);
      if (!module) return;
      for (const element of node.name.elements) {
        const imported = propertyName(element.propertyName ?? element.name);
        if (!imported || !ts.isIdentifier(element.name)) continue;
        if (imported === 'default') this.bindModuleObject(element.name.text, module.shape);
        else if (module.shape.functions.has(imported)) this.bindings.set(element.name.text, { kind: 'function', pty: module.shape.pty, daemon: module.shape.daemon });
      }
    }
  }

  /**
   * A parameter whose default is a spawn function (`run: typeof spawn = spawn`, an injected
   * spawner for tests) is one on the default's path: bound as its default is, a project module's
   * export included (resolved only when a finding could hang on it).
   */
  private collectParameter(node: ts.ParameterDeclaration): void {
    if (ts.isIdentifier(node.name)) this.parameterNames.add(node.name.text);
    if (!node.initializer || !ts.isIdentifier(node.name)) return;
    const init = unwrap(node.initializer);
    const name = node.name.text;
    const bound = ts.isIdentifier(init) ? this.bindings.get(init.text) : undefined;
    if (bound?.kind === 'project') this.bindProject(name, bound);
    else if (bound) this.bindings.set(name, bound);
    else if (this.isSpawnFunction(init)) this.bindings.set(name, { kind: 'function' });
  }

  private collectCall(node: ts.CallExpression): void {
    this.calls.push(node);
    // Object.assign(opts, { detached: true }) changes `opts` in place.
    const callee = unwrap(node.expression);
    // args.push('Start-Process', '-Verb', 'runAs'): words added to an argument list held in a name.
    if (ts.isPropertyAccessExpression(callee) && callee.name.text === 'push' && ts.isIdentifier(unwrap(callee.expression))) {
      for (const word of node.arguments) addTo(this.pushes, (unwrap(callee.expression) as ts.Identifier).text, word);
    }
    const target = node.arguments[0];
    if (
      memberName(callee) === 'assign' &&
      ts.isPropertyAccessExpression(callee) &&
      ts.isIdentifier(callee.expression) &&
      callee.expression.text === 'Object' &&
      target &&
      ts.isIdentifier(unwrap(target))
    ) {
      this.addMutation((unwrap(target) as ts.Identifier).text, node);
    }
  }

  private collectAssignment(node: ts.BinaryExpression): void {
    const left = unwrap(node.left);
    const leftText = left.getText(this.sf);
    this.handleAssignments.push([leftText, unwrap(node.right)]);
    if (/^(?:module\.)?exports\b/.test(leftText)) this.exportNodes.push(node);
    if (ts.isIdentifier(left)) {
      this.addMutation(left.text, node.right);
      // let spawn; try { spawn = require('node-pty').spawn } catch {}: bound as a declaration would
      // be (a spawn function on some path is one), unless the name is already bound otherwise.
      if (node.operatorToken.kind === SK.EqualsToken && !this.bindings.has(left.text)) this.bindFunction(left.text, unwrap(node.right));
      return;
    }
    // opts.detached = v  /  opts['detached'] = v  /  opts.nodeOptions = {...}
    if ((ts.isPropertyAccessExpression(left) || ts.isElementAccessExpression(left)) && ts.isIdentifier(unwrap(left.expression))) {
      const key = this.memberKey(left);
      if (key === 'detached' || key === 'nodeOptions') this.addMutation((unwrap(left.expression) as ts.Identifier).text, node);
      return;
    }
    // The same on options held in a member (`this.spawnWith.detached = true`, then
    // `spawn(cmd, args, this.spawnWith)`), and the member's own assignments (`this.spawnWith = {...}`).
    if (ts.isPropertyAccessExpression(left) && isAccessPath(left)) {
      if (node.operatorToken.kind === SK.EqualsToken) addTo(this.memberMutations, leftText, node.right);
      const owner = unwrap(left.expression);
      const key = this.memberKey(left);
      if ((key === 'detached' || key === 'nodeOptions') && ts.isPropertyAccessExpression(owner) && isAccessPath(owner)) addTo(this.memberMutations, owner.getText(this.sf), node);
    } else if (ts.isElementAccessExpression(left)) {
      const owner = unwrap(left.expression);
      const key = this.memberKey(left);
      if ((key === 'detached' || key === 'nodeOptions') && ts.isPropertyAccessExpression(owner) && isAccessPath(owner)) addTo(this.memberMutations, owner.getText(this.sf), node);
    }
  }

  private addMutation(name: string, expression: ts.Expression): void {
    const list = this.mutations.get(name) ?? [];
    list.push(expression);
    this.mutations.set(name, list);
  }

  private isSpawnOptionsType(type: ts.TypeReferenceNode): boolean {
    const name = ts.isIdentifier(type.typeName) ? type.typeName.text : type.typeName.right.text;
    return SPAWN_OPTIONS_TYPE.test(name);
  }

  // --- what names and expressions stand for ------------------------------------------------------

  /** `require('m')`, `import('m')`, or a name bound to a spawn module's object. */
  private moduleObjectOf(expression: ts.Expression, depth = 0): Extract<Binding, { kind: 'namespace' | 'callable' }> | undefined {
    const node = unwrap(expression);
    if (ts.isIdentifier(node)) {
      const binding = this.resolved(this.bindings.get(node.text));
      return binding && binding.kind !== 'function' && binding.kind !== 'project' ? binding : undefined;
    }
    // `(await import('node:child_process')).default`: the CommonJS module object, the same functions.
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'default') {
      const owner = this.moduleObjectOf(node.expression);
      return owner?.kind === 'namespace' ? owner : undefined;
    }
    // `var Node = { child: require('child_process') }`, then `Node.child.exec(...)`: a module object
    // kept in a property of an object literal the file declares (sudo-prompt's).
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(unwrap(node.expression)) && depth < 8) {
      const holder = this.declarationOf((unwrap(node.expression) as ts.Identifier).text, node)?.initializer;
      const object = holder && unwrap(holder);
      if (object && ts.isObjectLiteralExpression(object)) {
        for (const property of object.properties) {
          if (ts.isPropertyAssignment(property) && this.keyOf(property.name) === node.name.text) return this.moduleObjectOf(property.initializer, depth + 1);
        }
      }
    }
    if (ts.isCallExpression(node) && node.arguments.length === 1) {
      // `createRequire(import.meta.url)('node:child_process')`: a require made on the spot.
      const isRequire = (ts.isIdentifier(node.expression) && node.expression.text === 'require') || isCreateRequireCall(unwrap(node.expression));
      const isImport = node.expression.kind === SK.ImportKeyword;
      // Node 20.16+: `process.getBuiltinModule('node:child_process')`, a require of built-ins only.
      const callee = unwrap(node.expression);
      const isBuiltin = ts.isPropertyAccessExpression(callee) && callee.name.text === 'getBuiltinModule' && ts.isIdentifier(callee.expression) && callee.expression.text === 'process';
      const specifier = node.arguments[0] && unwrap(node.arguments[0]);
      if (isBuiltin && specifier && ts.isStringLiteral(specifier)) {
        const shape = SPAWN_MODULES.get(specifier.text);
        return shape ? { kind: 'namespace', shape } : undefined;
      }
      if ((isRequire || isImport) && specifier && ts.isStringLiteral(specifier)) {
        if (this.isProjectSpecifier(specifier.text)) {
          const project = this.resolved({ kind: 'project', specifier: specifier.text, member: '*', require: isRequire });
          return project && project.kind !== 'function' && project.kind !== 'project' ? project : undefined;
        }
        const shape = SPAWN_MODULES.get(specifier.text);
        if (!shape) return undefined;
        // `import('cross-spawn')` yields a namespace whose default is the function; calling
        // properties of it still reaches a spawn, so both count as callable module objects.
        return shape.callableDefault ? { kind: 'callable', shape } : { kind: 'namespace', shape };
      }
      // `requireNativeModule<typeof pty>('node-pty')`, `getCoreNodeModule('node-pty')`: a loader of
      // its own (editor extensions load the editor's bundled node-pty so), named as one, handed a
      // PTY module's name alone. Only PTY modules: their names mean nothing else to a function.
      const loader = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
      if (!isRequire && !isImport && /require|load|import|module/i.test(loader) && specifier && ts.isStringLiteral(specifier)) {
        const shape = SPAWN_MODULES.get(specifier.text);
        if (shape?.pty) return { kind: 'namespace', shape };
      }
    }
    return undefined;
  }

  /** Whether `expression` evaluates to a function that starts a process. */
  private isSpawnFunction(expression: ts.Expression): boolean {
    const node = unwrap(expression);
    if (ts.isIdentifier(node)) {
      const binding = this.resolved(this.bindings.get(node.text));
      return binding?.kind === 'function' || binding?.kind === 'callable';
    }
    // A spawn function on some path is a spawn function: `deps.spawn ?? spawn`, `mock ? fake : spawn`.
    if (ts.isConditionalExpression(node)) return this.isSpawnFunction(node.whenTrue) || this.isSpawnFunction(node.whenFalse);
    if (ts.isBinaryExpression(node) && isLogical(node.operatorToken.kind)) {
      return this.isSpawnFunction(node.right) || (node.operatorToken.kind !== SK.AmpersandAmpersandToken && this.isSpawnFunction(node.left));
    }
    if (this.spawnMembers.size > 0 && ts.isPropertyAccessExpression(node) && this.spawnMembers.has(node.getText(this.sf))) return true;
    const name = memberName(node);
    if (name !== undefined && (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node))) {
      const owner = this.moduleObjectOf(node.expression);
      if (!owner) return false;
      return owner.shape.functions.has(name) || (owner.kind === 'callable' && name !== 'then');
    }
    // execa({ detached: true }) returns a spawn function bound to those options; `f()()()` is
    // followed by a loop, not recursion, since such a chain can be any length.
    if (ts.isCallExpression(node)) {
      let callee = unwrap(node.expression);
      while (ts.isCallExpression(callee)) callee = unwrap(callee.expression);
      return this.isSpawnFunction(callee);
    }
    return false;
  }

  /**
   * Binds `name` to the spawn function `init` stands for, if it is one, with what that function
   * always does: `require('node-pty').spawn` or `pty.spawn` is a PTY spawn under any name, as the
   * same member destructured would be.
   */
  private bindFunction(name: string, init: ts.Expression): void {
    if (!this.isSpawnFunction(init)) return;
    const pty = this.isPtyFunction(init);
    const daemon = this.isDaemonFunction(init);
    this.bindings.set(name, { kind: 'function', ...(pty ? { pty } : {}), ...(daemon ? { daemon } : {}) });
  }

  /** Whether `expression` is a PTY library's spawn (`pty.spawn`, `spawn` imported from node-pty), by name. */
  private isPtyFunction(expression: ts.Expression): boolean {
    const node = unwrap(expression);
    if (ts.isIdentifier(node)) {
      const binding = this.bindings.get(node.text);
      return binding?.kind === 'function' && binding.pty === true;
    }
    const name = memberName(node);
    if (name === undefined || !(ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node))) return false;
    const owner = this.moduleObjectOf(node.expression);
    return owner?.shape.pty === true && owner.shape.functions.has(name);
  }

  /** Whether `expression` is npm daemon's function: the module called (`require('daemon')()`, a default import) or its `daemon` member. */
  private isDaemonFunction(expression: ts.Expression): boolean {
    const node = unwrap(expression);
    if (ts.isIdentifier(node)) {
      const binding = this.bindings.get(node.text);
      return (binding?.kind === 'function' && binding.daemon === true) || (binding?.kind === 'callable' && binding.shape.daemon === true);
    }
    if (ts.isCallExpression(node)) return this.moduleObjectOf(node)?.shape.daemon === true;
    const name = memberName(node);
    if (name === undefined || !(ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node))) return false;
    const owner = this.moduleObjectOf(node.expression);
    return owner?.shape.daemon === true && owner.shape.functions.has(name);
  }

  /**
   * `x.spawn(file, args, { cols, rows, ... })`: node-pty's signature, whatever the module is called
   * or wherever it came from (a module chosen at run time, `ptyInfo.module.spawn`). Not a call the
   * imports already make a PTY spawn (reported as such), nor one of a known pipe-child spawn
   * (`child_process`, cross-spawn, ...: they ignore a terminal size).
   */
  private isPtyShape(call: ts.CallExpression, callee: ts.Expression): boolean {
    if (calleeName(call) !== 'spawn' || !(ts.isIdentifier(callee) || ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee))) return false;
    const options = call.arguments[2] && unwrap(call.arguments[2]);
    if (!options || !ts.isObjectLiteralExpression(options)) return false;
    let cols = false;
    let rows = false;
    for (const property of options.properties) {
      if (!ts.isPropertyAssignment(property) && !ts.isShorthandPropertyAssignment(property)) continue;
      const name = propertyName(property.name);
      if (name === 'cols') cols = true;
      else if (name === 'rows') rows = true;
    }
    return cols && rows && !this.isSpawnFunction(callee);
  }

  /** `promisify(exec)` / `util.promisify(cp.execFile)`. */
  private isPromisifiedSpawn(expression: ts.Expression): boolean {
    const node = unwrap(expression);
    if (!ts.isCallExpression(node) || node.arguments.length !== 1) return false;
    const callee = unwrap(node.expression);
    const name = ts.isIdentifier(callee) ? callee.text : memberName(callee);
    const argument = node.arguments[0];
    return name === 'promisify' && argument !== undefined && this.isSpawnFunction(argument);
  }

  /** Whether `expression` evaluates to a child handle on some path: a spawn call, or a choice between them. */
  private isSpawnCall(expression: ts.Expression): boolean {
    const node = unwrap(expression);
    if (ts.isConditionalExpression(node)) return this.isSpawnCall(node.whenTrue) || this.isSpawnCall(node.whenFalse);
    if (ts.isBinaryExpression(node) && isLogical(node.operatorToken.kind)) return this.isSpawnCall(node.right) || this.isSpawnCall(node.left);
    return ts.isCallExpression(node) && (this.isSpawnFunction(node.expression) || this.isHandleFunction(node.expression));
  }

  /**
   * A call of a spawn-named function (SPAWN_FAMILY_NAMES) by its name, or as a member of a module
   * object (`runner.exec(...)`: a name the file does not declare as a variable or parameter, so an
   * import), not of some value (`term.spawn(...)` on a terminal the file made).
   */
  private isSpawnNamedCall(expression: ts.Expression): boolean {
    const node = unwrap(expression);
    if (!ts.isCallExpression(node)) return false;
    const callee = unwrap(node.expression);
    if (ts.isIdentifier(callee)) return SPAWN_FAMILY_NAMES.has(callee.text);
    if (!ts.isPropertyAccessExpression(callee) || !SPAWN_FAMILY_NAMES.has(callee.name.text)) return false;
    const owner = unwrap(callee.expression);
    // `new Deno.Command(program, options).spawn()`, or on a name holding one: Deno's child.
    if (ts.isNewExpression(owner)) return callee.name.text === 'spawn' && isDenoCommand(owner.expression);
    if (callee.name.text === 'spawn' && this.namesDenoCommand && ts.isIdentifier(owner)) {
      const declarations = this.variables.get(owner.text) ?? [];
      const held = declarations.length === 1 ? declarations[0]?.initializer && unwrap(declarations[0].initializer) : undefined;
      if (held && ts.isNewExpression(held) && isDenoCommand(held.expression)) return true;
    }
    return ts.isIdentifier(owner) && !this.variables.has(owner.text) && !this.parameterNames.has(owner.text);
  }

  /** Functions whose result is a child handle, by function: known once asked (false while being asked, against cycles). */
  private readonly handleFunctions = new Map<FunctionLike, boolean>();

  /**
   * Whether calling `callee` yields a child handle it started: a function of this file that returns
   * one (`return spawn(...)`, or a variable bound to it), or such a function exported by a project
   * module imported by a relative path (read only while project modules may be read).
   */
  private isHandleFunction(callee: ts.Expression): boolean {
    const node = unwrap(callee);
    if (!ts.isIdentifier(node)) return false;
    const local = this.functions.get(node.text);
    if (local) return this.returnsHandle(local);
    const binding = this.bindings.get(node.text);
    if (binding?.kind !== 'project' || binding.member === '*' || !this.allowProject) return false;
    return projectModule(this.sf.fileName, binding.specifier, this.context)?.handles?.has(binding.member) === true;
  }

  private returnsHandle(fn: FunctionLike): boolean {
    const known = this.handleFunctions.get(fn);
    if (known !== undefined) return known;
    this.handleFunctions.set(fn, false);
    const isHandle = (expression: ts.Expression): boolean => {
      const value = unwrap(expression);
      if (this.isSpawnCall(value)) return true;
      const text = value.getText(this.sf);
      return this.childHandles.has(text) || (ts.isIdentifier(value) && this.handleAssignments.some(([target, assigned]) => target === text && this.isSpawnCall(assigned)));
    };
    let found = false;
    if (fn.body && !ts.isBlock(fn.body)) found = isHandle(fn.body);
    else if (fn.body) {
      const stack: ts.Node[] = [fn.body];
      for (let node = stack.pop(); node !== undefined && !found; node = stack.pop()) {
        if (ts.isReturnStatement(node)) {
          found = node.expression !== undefined && isHandle(node.expression);
          continue;
        }
        if (node !== fn.body && ts.isFunctionLike(node)) continue;
        ts.forEachChild(node, (child) => {
          stack.push(child);
        });
      }
    }
    this.handleFunctions.set(fn, found);
    return found;
  }

  /** Whether `expression` holds a child handle: a spawn call, a variable or member bound to one, or a library's `.nodeChildProcess`. */
  private isChildHandle(expression: ts.Expression): boolean {
    let node = unwrap(expression);
    // `child.on('error', h).once(...)`: an EventEmitter's listener methods return the child. Peeled
    // in a loop, so that a chain of any length does not run the analysis out of stack.
    while (ts.isCallExpression(node)) {
      const callee = unwrap(node.expression);
      const method = memberName(callee);
      if (method === undefined || !CHAINING_METHODS.has(method) || !(ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee))) break;
      node = unwrap(callee.expression);
    }
    const text = node.getText(this.sf);
    if (this.isSpawnCall(node) || this.isSpawnNamedCall(node) || this.childHandles.has(text)) return true;
    // A handle from a spawn function of the project's own modules, read only now that it is unref'd.
    if (this.hasProjectBindings && this.handleAssignments.some(([target, value]) => target === text && this.isSpawnCall(value))) return true;
    const name = memberName(node);
    if (name === undefined || !CHILD_MEMBERS.has(name) || !(ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node))) return false;
    // `.childProcess` says what it holds whatever it is a member of (child-process-promise's and
    // promisify-child-process's results, a project's own exec object's): `x.childProcess.unref()`.
    return OWN_NAME_CHILD_MEMBERS.has(name) || this.isChildHandle(node.expression);
  }

  /**
   * Functions of this file that pass their options through to a spawn call (one level: a wrapper
   * of a wrapper is not followed): a call of one with detaching options is a detached spawn.
   */
  private bindWrappers(): void {
    const wrappers: string[] = [];
    for (const call of this.calls) {
      if (!this.isSpawnFunction(call.expression)) continue;
      const fn = enclosingFunction(call);
      if (!fn || !passesThrough(fn, call)) continue;
      const name = functionName(fn);
      if (name !== undefined && this.functions.get(name) === fn && !this.bindings.has(name)) wrappers.push(name);
    }
    for (const name of wrappers) this.bindings.set(name, { kind: 'function' });
  }

  /** The spawn functions this module exports, for a file that imports it. */
  exportedSpawns(): ModuleShape | undefined {
    this.prepare();
    this.allowProject = true; // what this module exports is what was asked for
    const functions = new Set<string>();
    const handles = new Set<string>();
    const modules = new Map<string, Extract<Binding, { kind: 'namespace' | 'callable' }>>();
    let callableDefault = false;
    // A spawn module's object handed on under a name (coc.nvim's `util/node.ts`).
    const moduleAs = (name: string, value: ts.Expression | undefined) => {
      const whole = value && this.moduleObjectOf(value);
      if (whole) modules.set(name, whole);
    };
    const local = (name: string) => this.bindings.get(name)?.kind === 'function' || this.bindings.get(name)?.kind === 'callable';
    const returnsHandle = (name: string) => {
      const fn = this.functions.get(name);
      return fn !== undefined && this.returnsHandle(fn);
    };
    // `export async function exec(command) { return run(command, { env }) }`: its importers' calls read as a runner's.
    const runners = new Map<string, number>();
    const runnerAs = (exported: string, local: string) => {
      const at = this.ownRunners.get(local);
      if (at !== undefined && at >= 0) runners.set(exported, at);
    };
    for (const node of this.exportNodes) {
      if (ts.isExportDeclaration(node)) {
        if (node.isTypeOnly) continue;
        const from = node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier.text : undefined;
        const source = from === undefined ? undefined : this.isProjectSpecifier(from) ? projectModule(this.sf.fileName, from, this.context) : SPAWN_MODULES.get(from);
        if (from !== undefined && !source) continue;
        if (!node.exportClause) {
          for (const name of source?.functions ?? []) if (name !== 'default') functions.add(name); // export * from '...'
        } else if (ts.isNamedExports(node.exportClause)) {
          for (const element of node.exportClause.elements) {
            const imported = (element.propertyName ?? element.name).text;
            const isSpawn = source ? source.functions.has(imported) || (imported === 'default' && source.callableDefault) : local(imported);
            if (isSpawn) functions.add(element.name.text);
            if (source ? source.handles?.has(imported) : returnsHandle(imported)) handles.add(element.name.text);
            const runner = source ? source.runners?.get(imported) : undefined;
            if (runner !== undefined) runners.set(element.name.text, runner);
            else if (!source) runnerAs(element.name.text, imported);
            if (!source) {
              const held = this.variables.get(imported)?.[0]?.initializer;
              const bound = held ? undefined : this.resolved(this.bindings.get(imported));
              if (held) moduleAs(element.name.text, held);
              else if (bound?.kind === 'namespace' || bound?.kind === 'callable') modules.set(element.name.text, bound);
            }
          }
        }
      } else if (ts.isExportAssignment(node)) {
        if (this.isSpawnFunction(node.expression)) functions.add('default');
      } else if (ts.isFunctionDeclaration(node)) {
        const isDefault = node.modifiers?.some((m) => m.kind === SK.DefaultKeyword) === true;
        if (node.name && local(node.name.text)) functions.add(isDefault ? 'default' : node.name.text);
        if (node.name && returnsHandle(node.name.text)) handles.add(isDefault ? 'default' : node.name.text);
        if (node.name) runnerAs(isDefault ? 'default' : node.name.text, node.name.text);
      } else if (ts.isVariableStatement(node)) {
        for (const declaration of node.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name) && local(declaration.name.text)) functions.add(declaration.name.text);
          if (ts.isIdentifier(declaration.name) && returnsHandle(declaration.name.text)) handles.add(declaration.name.text);
          if (ts.isIdentifier(declaration.name)) runnerAs(declaration.name.text, declaration.name.text);
          if (ts.isIdentifier(declaration.name)) moduleAs(declaration.name.text, declaration.initializer);
          // export const { spawn, fork: run } = childProcess  /  = require('child_process'): a seam module
          if (ts.isObjectBindingPattern(declaration.name)) {
            for (const element of declaration.name.elements) {
              if (ts.isIdentifier(element.name) && local(element.name.text)) functions.add(element.name.text);
            }
          }
        }
      } else if (ts.isBinaryExpression(node)) {
        const target = unwrap(node.left).getText(this.sf);
        const value = unwrap(node.right);
        const member = /^(?:module\.)?exports\.(\w+)$/.exec(target)?.[1];
        if (member !== undefined) {
          if (this.isSpawnFunction(value)) functions.add(member);
          if (ts.isIdentifier(value) && returnsHandle(value.text)) handles.add(member);
          if (ts.isIdentifier(value)) runnerAs(member, value.text);
          moduleAs(member, value);
        } else if (target === 'module.exports') {
          if (this.isSpawnFunction(value)) callableDefault = true;
          const at = this.runnerFunctions.get(value) ?? (ts.isIdentifier(value) ? this.ownRunners.get(value.text) : undefined);
          if (at !== undefined && at >= 0) runners.set('default', at);
          // module.exports = require('child_process')  /  = cp: the module object handed on whole
          const whole = this.moduleObjectOf(value);
          if (whole) {
            for (const name of whole.shape.functions) if (name !== 'default') functions.add(name);
            if (whole.shape.callableDefault) callableDefault = true;
          }
          if (ts.isObjectLiteralExpression(value)) {
            for (const property of value.properties) {
              // module.exports = { ...cp, extra }
              const spread = ts.isSpreadAssignment(property) ? this.moduleObjectOf(property.expression) : undefined;
              for (const name of spread?.shape.functions ?? []) if (name !== 'default') functions.add(name);
              const name = propertyName(property.name);
              const init = ts.isPropertyAssignment(property) ? property.initializer : ts.isShorthandPropertyAssignment(property) ? property.name : undefined;
              if (name !== undefined && init && this.isSpawnFunction(init)) functions.add(name);
              if (name !== undefined && init && ts.isIdentifier(init) && returnsHandle(init.text)) handles.add(name);
              if (name !== undefined && init && ts.isIdentifier(init)) runnerAs(name, init.text);
            }
          }
        }
      }
    }
    const readers = this.exportedReaders();
    return functions.size > 0 || callableDefault || handles.size > 0 || modules.size > 0 || readers.size > 0 || runners.size > 0
      ? { functions, callableDefault, handles, ...(modules.size > 0 ? { modules } : {}), ...(readers.size > 0 ? { readers } : {}), ...(runners.size > 0 ? { runners } : {}) }
      : undefined;
  }

  /** The exported functions' parameters they only read, for a module whose text speaks of `detached` (the others are not asked). */
  private exportedReaders(): Map<string, number[]> {
    const readers = new Map<string, number[]>();
    if (!this.sf.text.includes('detached')) return readers;
    const add = (name: string, fn: FunctionLike | undefined) => {
      if (!fn || this.bindings.get(name)?.kind === 'function') return; // a spawn wrapper is no reader
      const indexes = fn.parameters.map((_, index) => index).filter((index) => this.onlyReads(fn, index, 0));
      if (indexes.length > 0) readers.set(name, indexes);
    };
    for (const node of this.exportNodes) {
      if (ts.isFunctionDeclaration(node) && node.name) add(node.modifiers?.some((m) => m.kind === SK.DefaultKeyword) ? 'default' : node.name.text, node);
      else if (ts.isVariableStatement(node)) {
        for (const declaration of node.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) add(declaration.name.text, this.functions.get(declaration.name.text));
        }
      } else if (ts.isExportDeclaration(node) && !node.moduleSpecifier && node.exportClause && ts.isNamedExports(node.exportClause)) {
        for (const element of node.exportClause.elements) add(element.name.text, this.functions.get((element.propertyName ?? element.name).text));
      }
    }
    return readers;
  }

  // --- constant keys and values -------------------------------------------------------------------

  /** A property's name, computed ones folded when constant (`['detach' + 'ed']`, `[k]` with `const k = 'detached'`). */
  private keyOf(name: ts.PropertyName | undefined): string | undefined {
    const plain = propertyName(name);
    if (plain !== undefined || !name || !ts.isComputedPropertyName(name)) return plain;
    return this.constantString(name.expression, 0);
  }

  /** The member name of `a.b`, `a['b']`, or `a[k]` with a constant `k`. */
  private memberKey(node: ts.Expression): string | undefined {
    const plain = memberName(node);
    if (plain !== undefined || !ts.isElementAccessExpression(node)) return plain;
    return this.constantString(node.argumentExpression, 0);
  }

  /** The string an expression always evaluates to: literals, `+` and templates of them, `const` names bound to them. */
  private constantString(expression: ts.Expression, depth: number): string | undefined {
    const node = unwrap(expression);
    if (depth > 8) return undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isTemplateExpression(node)) {
      let text = node.head.text;
      for (const span of node.templateSpans) {
        const part = this.constantString(span.expression, depth + 1);
        if (part === undefined) return undefined;
        text += part + span.literal.text;
      }
      return text;
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const left = this.constantString(node.left, depth + 1);
      const right = left === undefined ? undefined : this.constantString(node.right, depth + 1);
      return right === undefined ? undefined : (left as string) + right;
    }
    if (ts.isIdentifier(node)) {
      const declaration = this.declarationOf(node.text, node);
      const list = declaration?.parent;
      if (!declaration?.initializer || !list || !ts.isVariableDeclarationList(list) || (list.flags & ts.NodeFlags.Const) === 0) return undefined;
      return this.constantString(declaration.initializer, depth + 1);
    }
    return undefined;
  }

  /** Whether a `detached` value leaves the child in its owner's group: a falsy or refused literal, or a value provably false where it is read. */
  private inert(value: ts.Expression): boolean {
    return isFalsy(value) || this.provablyFalse(value) || this.heldFalse(value);
  }

  /**
   * `const DETACH = false` then `detached: DETACH`: a name every declaration and assignment of which
   * (at least one) is falsy, and that is no parameter. By name, file-wide, as the rest of the analysis.
   */
  private heldFalse(expression: ts.Expression): boolean {
    const value = unwrap(expression);
    if (!ts.isIdentifier(value) || this.parameterNames.has(value.text)) return false;
    const declarations = this.variables.get(value.text) ?? [];
    const writes = this.mutations.get(value.text) ?? [];
    if (declarations.length === 0) return false;
    return declarations.every((d) => d.initializer !== undefined && isFalsy(d.initializer)) && writes.every((w) => isFalsy(w));
  }

  /**
   * Whether `value` (a name or a member chain such as `options.detached`) is false where it is read:
   * inside `if (!X)`, the `else` of `if (X)`, the false arm of `X ? … : …`, after `if (X) return`/`throw`
   * in an enclosing block, or `X && …` never reaching a false arm. Compared by text.
   */
  private provablyFalse(expression: ts.Expression): boolean {
    const value = unwrap(expression);
    if (!ts.isIdentifier(value) && !ts.isPropertyAccessExpression(value)) return false;
    const text = value.getText(this.sf);
    const isX = (e: ts.Expression) => {
      const u = unwrap(e);
      return (ts.isIdentifier(u) || ts.isPropertyAccessExpression(u)) && u.getText(this.sf) === text;
    };
    const isNotX = (e: ts.Expression) => {
      const u = unwrap(e);
      return ts.isPrefixUnaryExpression(u) && u.operator === ts.SyntaxKind.ExclamationToken && isX(u.operand);
    };
    const exits = (statement: ts.Statement) => {
      const last = ts.isBlock(statement) ? statement.statements[statement.statements.length - 1] : statement;
      return last !== undefined && (ts.isReturnStatement(last) || ts.isThrowStatement(last) || ts.isContinueStatement(last) || ts.isBreakStatement(last));
    };
    let child: ts.Node = value;
    for (let at = value.parent; at && !ts.isSourceFile(at); child = at, at = at.parent) {
      if (ts.isIfStatement(at)) {
        if (child === at.thenStatement && isNotX(at.expression)) return true;
        if (child === at.elseStatement && isX(at.expression)) return true;
      } else if (ts.isConditionalExpression(at)) {
        if (child === at.whenTrue && isNotX(at.condition)) return true;
        if (child === at.whenFalse && isX(at.condition)) return true;
      } else if (ts.isBlock(at) || ts.isSourceFile(at)) {
        // An earlier `if (X) return;` in this block: X is false from there on.
        for (const statement of at.statements) {
          if (statement === child) break;
          if (ts.isIfStatement(statement) && !statement.elseStatement && isX(statement.expression) && exits(statement.thenStatement)) return true;
        }
      }
      if (ts.isFunctionLike(at)) break; // a parameter's value is not known across calls
    }
    return false;
  }

  /** The declaration `name` most likely refers to at `use`: the last one before it, else the first. */
  private declarationOf(name: string, use: ts.Node): ts.VariableDeclaration | undefined {
    const list = this.variables.get(name);
    if (!list) return undefined;
    let chosen = list[0];
    for (const declaration of list) if (declaration.pos < use.pos) chosen = declaration;
    return chosen;
  }

  /**
   * The node that sets a detaching `detached` in the options `expression` evaluates to, following
   * same-file variables, spreads, ternaries, Object.assign, option-builder functions and writes.
   */
  private detachingNode(expression: ts.Expression, seen: Set<ts.Node>, depth = 0): ts.Node | undefined {
    const node = unwrap(expression);
    if (depth > 16 || seen.has(node)) return undefined;
    seen.add(node);
    const next = (e: ts.Expression | undefined) => (e ? this.detachingNode(e, seen, depth + 1) : undefined);

    if (ts.isObjectLiteralExpression(node)) {
      // Later properties override earlier ones, so the last word about `detached` wins.
      let found: ts.Node | undefined;
      for (const property of node.properties) {
        if (ts.isSpreadAssignment(property)) {
          found = next(property.expression) ?? found;
          continue;
        }
        const key = this.keyOf(property.name);
        if (key === 'detached') {
          if (ts.isPropertyAssignment(property)) found = this.inert(property.initializer) ? undefined : property;
          else if (ts.isShorthandPropertyAssignment(property)) found = this.shorthandDetaches(property) ? property : undefined;
          else found = property; // a getter or method: not a literal false
        } else if (key === 'nodeOptions') {
          // tinyexec passes these through to child_process.
          if (ts.isPropertyAssignment(property)) found = next(property.initializer) ?? found;
          else if (ts.isShorthandPropertyAssignment(property)) found = next(property.name) ?? found;
        }
      }
      return found;
    }
    if (ts.isIdentifier(node)) {
      const declaration = this.declarationOf(node.text, node);
      let found = next(declaration?.initializer);
      // Most names are written only with what cannot detach (command text, counters): known once a
      // name, so that a thousand uses of a name written a thousand times are not a million checks.
      if (!this.someWriteDetaches(node.text)) return found;
      for (const write of this.mutations.get(node.text) ?? []) {
        // Not a write to another variable of that name (declared nearer the write: another
        // function's `options`), nor one on a branch this use is never on.
        if (this.declarationOf(node.text, write) !== declaration || exclusiveBranches(write, node)) continue;
        found = this.writeDetaches(write, seen, depth) ?? found;
      }
      return found;
    }
    if (ts.isPropertyAccessExpression(node) && isAccessPath(node)) {
      // Options in a member: its writes in the same class (or, outside classes, the same file)
      // that are not on a branch this use is never on.
      let found: ts.Node | undefined;
      for (const write of this.memberMutations.get(node.getText(this.sf)) ?? []) {
        if (enclosingClass(write) !== enclosingClass(node) || exclusiveBranches(write, node)) continue;
        found = this.writeDetaches(write, seen, depth) ?? found;
      }
      return found;
    }
    if (ts.isConditionalExpression(node)) return next(node.whenTrue) ?? next(node.whenFalse);
    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      if (
        op === SK.BarBarToken ||
        op === SK.QuestionQuestionToken ||
        op === SK.AmpersandAmpersandToken ||
        op === SK.CommaToken
      ) {
        return next(node.right) ?? (op === SK.CommaToken ? undefined : next(node.left));
      }
      return undefined;
    }
    if (ts.isCallExpression(node)) {
      const callee = unwrap(node.expression);
      if (memberName(callee) === 'assign' && ts.isPropertyAccessExpression(callee)) {
        let found: ts.Node | undefined;
        for (const argument of node.arguments) found = next(argument) ?? found;
        return found;
      }
      const builder = ts.isIdentifier(callee) ? this.functions.get(callee.text) : undefined;
      if (builder) return this.returnedDetaching(builder, seen, depth);
      if (ts.isArrowFunction(callee) || ts.isFunctionExpression(callee)) return this.returnedDetaching(callee, seen, depth);
    }
    return undefined;
  }

  private shorthandDetaches(property: ts.ShorthandPropertyAssignment): boolean {
    if (this.provablyFalse(property.name)) return false;
    const initializer = this.declarationOf(property.name.text, property)?.initializer;
    // An unknown value is not a literal false: it counts.
    return initializer === undefined || !isFalsy(initializer);
  }

  /** Whether any write of the name, wherever it is, can set a detaching `detached`: the writes' own filters only narrow this. */
  private someWriteDetaches(name: string): boolean {
    let known = this.detachingWrites.get(name);
    if (known === undefined) {
      this.detachingWrites.set(name, true); // against a cycle of names: "may", which only costs the full check
      known = (this.mutations.get(name) ?? []).some((write) => this.writeDetaches(write, new Set(), 0) !== undefined);
      this.detachingWrites.set(name, known);
    }
    return known;
  }

  private writeDetaches(write: ts.Expression, seen: Set<ts.Node>, depth: number): ts.Node | undefined {
    if (ts.isBinaryExpression(write)) {
      const key = this.memberKey(unwrap(write.left));
      if (key === 'detached') return this.inert(write.right) ? undefined : write;
      if (key === 'nodeOptions') return this.detachingNode(write.right, seen, depth + 1);
      return undefined;
    }
    return this.detachingNode(write, seen, depth + 1);
  }

  private returnedDetaching(fn: FunctionLike, seen: Set<ts.Node>, depth: number): ts.Node | undefined {
    for (const returned of returnedExpressions(fn)) {
      const found = this.detachingNode(returned, seen, depth + 1);
      if (found) return found;
    }
    return undefined;
  }

  /**
   * The file's functions a call by this name runs: one declared once and never assigned, or those
   * a name declared once is bound to (`let open = null; if (win) open = winOpen; else open = unixOpen`),
   * each itself declared once. None for a parameter's name, or a name bound to anything else.
   */
  private calledFunctions(callee: ts.Identifier): FunctionLike[] {
    const name = callee.text;
    const declaration = declaringNode(name, callee);
    if (declaration && ts.isParameter(declaration)) return [];
    // The rest is the same at every call of the name: found once.
    let found = this.calledByName.get(name);
    if (!found) this.calledByName.set(name, (found = this.functionsBoundTo(name)));
    return found;
  }

  private functionsBoundTo(name: string): FunctionLike[] {
    const own = this.onlyFunction(name);
    if (own) return [own];
    const declarations = this.variables.get(name);
    if (declarations?.length !== 1) return [];
    const found = new Set<FunctionLike>();
    for (const source of [declarations[0]?.initializer, ...(this.mutations.get(name) ?? [])]) {
      const value = source && unwrap(source);
      if (!value || value.kind === SK.NullKeyword || (ts.isIdentifier(value) && value.text === 'undefined')) continue;
      const fn = ts.isIdentifier(value) ? this.onlyFunction(value.text) : undefined;
      if (!fn) return [];
      found.add(fn);
    }
    return [...found];
  }

  /** The function a name is bound to, where the file binds that name once, to a function, and never again. */
  private onlyFunction(name: string): FunctionLike | undefined {
    const fn = this.functions.get(name);
    if (!fn || this.mutations.has(name) || this.bindings.has(name)) return undefined;
    if (ts.isFunctionDeclaration(fn)) return this.functionCounts.get(name) === 1 && !this.variables.has(name) ? fn : undefined;
    return this.variables.get(name)?.length === 1 ? fn : undefined;
  }

  // --- the checks ---------------------------------------------------------------------------------

  private checkCall(call: ts.CallExpression): void {
    const callee = unwrap(call.expression);
    if (memberName(callee) === 'unref' && call.arguments.length === 0 && (ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee))) {
      // In a tsd assertion (`expectError(child.unref())`) it is never run, as a spawn there is not.
      if (!inTypeOnlyCall(call) && !unrefAfterExit(call, callee.expression, this.sf) && !unrefBeforeKill(call, callee.expression, this.sf) && this.withProject(() => this.isChildHandle(callee.expression))) {
        this.report(ts.isPropertyAccessExpression(callee) ? callee.name : callee, 'js-unref-child', 'error', '`.unref()` on a child process lets the owner exit while the child keeps running', call);
      }
      return;
    }
    if (this.checkSelfDetach(call, callee)) return;
    if (this.namesTransientUnit && startsTransientUnit(call)) {
      this.report(call, 'shell-background', 'error', 'systemd\'s `StartTransientUnit` (over D-Bus, as systemd-run calls it) starts the unit\'s program under systemd, away from its owner, which cannot end it', call);
      return;
    }
    if (this.isDaemonFunction(callee)) {
      this.report(call, 'js-detached-spawn', 'error', 'npm\'s `daemon` package spawns with `detached` set (called as the module, it starts this script again so and ends this one): the child leads its own group and outlives its owner', call);
      return;
    }
    if (this.isPtyShape(call, callee)) {
      this.report(call, 'js-pty', 'error', '`spawn` with a terminal size (`cols` and `rows`: node-pty\'s signature) starts the child on a pseudo-terminal, in a new session of its own: a kill of the owner\'s group misses it', call);
    }
    if (!this.isSpawnFunction(callee)) {
      // A callee imported from the project is looked up only for a call that could be a finding.
      if (!this.hasProjectBindings || !this.couldReport(call) || !this.withProject(() => this.isSpawnFunction(callee))) {
        this.checkSpawnNamedMethod(call, callee);
        this.checkProjectRunner(call, callee);
        this.checkOwnRunnerCall(call, callee);
        return;
      }
    }
    if (inTypeOnlyCall(call)) {
      this.connectEvidence(call); // asserted not to compile, never run: neither an error nor a warning
      return;
    }
    if (REFUSES_DETACHED.has(calleeName(call) ?? '')) {
      this.connectEvidence(call); // throws on `detached: true`: no child is started with it
      for (const argument of call.arguments) this.checkShellText(argument);
      return;
    }
    if (this.isPtyFunction(callee)) {
      this.report(call, 'js-pty', 'error', 'node-pty\'s `spawn` starts the child on a pseudo-terminal, in a new session of its own: a kill of the owner\'s group misses it', call);
    }
    for (const argument of call.arguments) {
      const evidence = this.detachingNode(argument, new Set());
      if (evidence) {
        this.connected.add(evidence);
        const where = this.lineOf(evidence.getStart(this.sf));
        const callLine = this.lineOf(call.getStart(this.sf));
        const detail = where === callLine ? '' : ` (set on line ${where})`;
        this.report(call, 'js-detached-spawn', 'error', `spawn with \`detached\` set${detail}: the child leads its own group and outlives its owner`, call, evidence);
        return this.checkRest(call);
      }
    }
    const read = this.detachedReadOfOptions(call);
    if (read) {
      const where = this.lineOf(read.getStart(this.sf));
      this.report(call, 'js-detached-spawn', 'error', `spawn options that can carry \`detached\` from elsewhere (read as \`${read.getText(this.sf)}\` on line ${where}): a child started with it set outlives its owner`, call, read);
    }
    this.checkRest(call);
  }

  /**
   * Deno's spawn, `new Deno.Command(program, { args, detached })`, read as child_process' spawn of
   * the program and its `args`: its `detached` (Deno 2) makes the child outlive its owner, and its
   * command is read for shell text and detaching programs (PowerShell's `Start-Process` in `args`).
   */
  private checkDenoCommand(command: ts.NewExpression): void {
    const [program, options] = command.arguments ?? [];
    if (!program) return;
    const evidence = options && this.detachingNode(options, new Set());
    if (evidence) {
      this.connected.add(evidence);
      this.report(command, 'js-detached-spawn', 'error', '`new Deno.Command` with `detached` set: the child leads its own group and outlives its owner', command, evidence);
      return;
    }
    const settings = options && unwrap(options);
    const argsProperty = settings && ts.isObjectLiteralExpression(settings) ? settings.properties.find((p) => (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && this.keyOf(p.name) === 'args') : undefined;
    // `{ args: [...] }`, or `{ args }` naming a list held in a name (read as held text, checkShellText).
    const args = argsProperty && ts.isPropertyAssignment(argsProperty) ? argsProperty.initializer : argsProperty && ts.isShorthandPropertyAssignment(argsProperty) ? argsProperty.name : undefined;
    const before = this.findings.length;
    this.checkShellText(program);
    if (args) this.checkShellText(args);
    if (this.findings.length > before) return;
    const name = this.detachingArgv(program, args ?? undefined, undefined);
    if (name) this.report(command, 'shell-background', 'error', `\`${name}\` starts the program away from its owner, which cannot end it`, command);
  }

  /**
   * `this.processes.fork(main, args, options)` after `options.detached = …`: a method by a spawn's
   * name on an object the check cannot see into (a project's process wrapper, theia's), handed
   * options whose `detached` this file sets. A warning at the write, as for a loose `detached`
   * literal (one written in the call's own literal is that check's).
   */
  private checkSpawnNamedMethod(call: ts.CallExpression, callee: ts.Expression): void {
    if (!ts.isPropertyAccessExpression(callee) || !SPAWN_FAMILY_NAMES.has(callee.name.text)) return;
    for (const [index, argument] of call.arguments.entries()) {
      if (index === 0) continue;
      const evidence = this.detachingNode(argument, new Set());
      if (!evidence || this.connected.has(evidence) || ts.isPropertyAssignment(evidence) || ts.isShorthandPropertyAssignment(evidence)) continue;
      this.connected.add(evidence);
      this.report(evidence, 'js-detached-literal', 'warning', `\`detached\` set on options handed to \`.${callee.name.text}(…)\` of an object the check cannot follow; check where it goes`, evidence);
      return;
    }
  }

  /**
   * A project's own command runner, by its name (`this.spawnLog(program, args)`, `runCommand(…)`),
   * handed a program that leaves by itself (an elevation helper, a daemon): the program's own act,
   * whatever runs it. Python's: PROJECT_RUNNERS.
   */
  private checkProjectRunner(call: ts.CallExpression, callee: ts.Expression): void {
    const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
    if (name === undefined || !PROJECT_RUNNER.test(name)) return;
    const found = this.detachingCommandOf(call);
    if (found) {
      this.report(call, 'shell-background', 'error', `\`${found}\` starts the program away from its owner, which cannot end it`, call);
      return;
    }
    // Its command as shell text (`runCommand('nohup server &')`), as Python's runners are read.
    for (const argument of call.arguments) this.checkShellText(argument);
  }

  /**
   * `setsid()` or `setpgid(0, 0)` from a POSIX binding (`posix`, `posix-node`: Node has neither):
   * the process puts itself in a session or group of its own, as Python's `os.setsid()` does, and a
   * kill of its owner's group misses it (rancher-desktop's Electron main process).
   */
  private checkSelfDetach(call: ts.CallExpression, callee: ts.Expression): boolean {
    const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
    if (name !== 'setsid' && name !== 'setpgid') return false;
    const args = call.arguments.map((argument) => unwrap(argument).getText(this.sf));
    const self = (text: string | undefined) => text === '0' || text === 'process.pid';
    if (name === 'setsid' ? args.length !== 0 : !(args.length === 2 && self(args[0]) && self(args[1]))) return false;
    this.namesPosixBinding ??= POSIX_BINDING.test(this.sf.text); // once a file, however many such calls
    if (!this.namesPosixBinding) return false;
    this.report(call, 'js-detached-spawn', 'error', `\`${name}(${args.join(', ')})\` from a POSIX binding puts this process in a ${name === 'setsid' ? 'session' : 'group'} of its own: a kill of its owner's group misses it`, call);
    return true;
  }

  private checkRest(call: ts.CallExpression): void {
    for (const argument of call.arguments) this.checkShellText(argument);
    this.checkDetachingCommand(call);
  }

  /**
   * Options handed to a spawn by name whose `detached` the same function reads
   * (`const options = Object.assign({}, command.options); spawn(cmd, args, options);
   * this.isDetached = !!options.detached`): the code expects them to carry it, set by whoever
   * filled them (a caller, a configuration), and a child started with it outlives its owner. A
   * read that refuses it (`if (options.detached) throw …`), clears it or deletes it is none.
   */
  private detachedReadOfOptions(call: ts.CallExpression): ts.Node | undefined {
    if (!this.mentionsDetachedMember) return undefined;
    const named = call.arguments.map(unwrap).filter((argument, index): argument is ts.Identifier => index > 0 && ts.isIdentifier(argument));
    if (named.length === 0) return undefined;
    // The call's function, then each function around it (a callback's options are its maker's);
    // the file itself only for a call outside every function. A read counts only where its name
    // is the same variable as the argument (another block's `options` is another's).
    let inFunction = false;
    for (let at: ts.Node | undefined = call.parent; at; at = at.parent) {
      if (ts.isFunctionLike(at)) inFunction = true;
      else if (!ts.isSourceFile(at) || inFunction) continue;
      const reads = this.detachedReadsIn(at);
      for (const argument of named) {
        const byDeclaration = reads.get(argument.text);
        const same = byDeclaration?.get(declaringNode(argument.text, argument));
        if (same) return same;
      }
    }
    return undefined;
  }

  /**
   * The reads of `NAME.detached` taken as they are, within a function (or the file), by NAME and by
   * the declaration NAME refers to there (the first read of each): found once per scope.
   */
  private detachedReadsIn(scope: ts.Node): Map<string, Map<ts.Node | undefined, ts.PropertyAccessExpression>> {
    let reads = this.detachedReads.get(scope);
    if (reads) return reads;
    const found = new Map<string, Map<ts.Node | undefined, ts.PropertyAccessExpression>>();
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node) && node.name.text === 'detached' && ts.isIdentifier(node.expression) && this.readsForUse(node)) {
        const name = node.expression.text;
        let byDeclaration = found.get(name);
        if (!byDeclaration) found.set(name, (byDeclaration = new Map()));
        const declaration = declaringNode(name, node);
        if (!byDeclaration.has(declaration)) byDeclaration.set(declaration, node);
      }
      ts.forEachChild(node, visit);
    };
    visit(scope);
    reads = found;
    this.detachedReads.set(scope, reads);
    return reads;
  }

  /**
   * Whether a read of `x.detached` takes it as it is: not written, deleted, or refused by a throw
   * (`if (x.detached) throw …`; `if (!x.detached) throw …` requires it, a use).
   */
  private readsForUse(access: ts.PropertyAccessExpression): boolean {
    const { value, negated } = climbTest(access, false);
    const up = value.parent;
    if (!up) return true;
    if (ts.isDeleteExpression(up)) return false;
    if (ts.isBinaryExpression(up) && up.left === value && (up.operatorToken.kind === SK.EqualsToken || isCompoundAssignment(up.operatorToken.kind))) return false;
    if (ts.isIfStatement(up) && up.expression === value && !negated) {
      const then = ts.isBlock(up.thenStatement) ? up.thenStatement.statements[0] : up.thenStatement;
      if (then && ts.isThrowStatement(then)) return false;
    }
    return true;
  }

  /** `spawn('systemd-run', ['--user', 'server'])`: a program whose job is to detach, with its literal arguments. */
  private checkDetachingCommand(call: ts.CallExpression): void {
    const name = this.detachingCommandOf(call);
    // Shell text in an argument is reported as such already.
    if (name && !call.arguments.some((argument) => this.shellConstruct(argument))) {
      this.report(call, 'shell-background', 'error', `\`${name}\` starts the program away from its owner, which cannot end it`, call);
      return;
    }
    this.checkJoinedShellCommand(call);
  }

  /**
   * `spawn('start', [term, '-NoExit'], { shell: true })`: with `shell` set, Node joins the program
   * and its arguments into one command line for the shell, so they are read as one shell text (a
   * word that is not a literal reads as a value). Python's counterpart: a list handed to a runner
   * with `shell=True`.
   */
  private checkJoinedShellCommand(call: ts.CallExpression): void {
    const [program, args, options] = call.arguments;
    const list = args && unwrap(args);
    const settings = options && unwrap(options);
    if (!program || !list || !ts.isArrayLiteralExpression(list) || !settings || !ts.isObjectLiteralExpression(settings)) return;
    const shell = settings.properties.some((p) => ts.isPropertyAssignment(p) && this.keyOf(p.name) === 'shell' && unwrap(p.initializer).kind === SK.TrueKeyword);
    const first = this.literalText(program);
    if (!shell || first === undefined || call.arguments.some((argument) => this.shellConstruct(argument))) return;
    const text = [first, ...list.elements.map((element) => commandText(element, 0) ?? VALUE_MARK)].join(' ');
    const construct = backgroundingIn(text);
    if (construct) this.report(call, 'shell-background', 'error', `shell command starts a background process (${construct}) that outlives its owner`, call);
  }

  /**
   * The detaching command a call runs: a literal program and the words of its argument array, up
   * to the first one not known. A word built from a literal (`` `--port=${port}` ``, `'-p' + n`)
   * is known by its literal parts, as in shell text.
   */
  private detachingCommandOf(call: ts.CallExpression): string | undefined {
    const [program, args] = call.arguments;
    return this.detachingArgv(program, args, call);
  }

  /** detachingCommandOf's reading of a program and its argument list (a list held in a name only for a call's). */
  private detachingArgv(program: ts.Expression | undefined, args: ts.Expression | undefined, call: ts.CallExpression | undefined): string | undefined {
    const list = args && unwrap(args);
    // `spawn('supervisord')`, `spawn('nginx', [])`: a documented program alone.
    const alone = program && (!list || (ts.isArrayLiteralExpression(list) && list.elements.length === 0)) ? (this.literalText(program) ?? this.heldProgram(program)) : undefined;
    const lone = alone === undefined ? undefined : loneProgramIn(alone.trim());
    if (lone) return lone;
    if (program && list && ts.isIdentifier(list)) return call && this.heldArgumentsCommand(call, program, list);
    if (!program || !list || !ts.isArrayLiteralExpression(list)) return undefined;
    const words = [this.literalText(program), ...list.elements.map((element) => commandText(element, 0))];
    // Wine's loader running its start (`spawn('wine', ['start', '/unix', exe])`; the list alone is read for cmd's).
    if (words[0] !== undefined && /wine/i.test(words[0]) && startInArgv(words)) return 'wine start';
    // A program's own `--daemon` first among its arguments (`spawn('emacs', ['--daemon'])`): the
    // argument list alone does not show it follows a program.
    const found = this.detachingWith(words, [program, ...list.elements]) ?? daemonOptionIn([words[0] ?? VALUE_MARK, ...words.slice(1)]);
    if (found || !words.includes(undefined)) return found;
    // `spawn('sshfs', [remote, mountpoint])`: positional values held in names, read as values (a
    // name bound to literals is read as those, above); and the program held in a name or member
    // bound to its literal name alone (`this.mountproc = 'sshfs'`). Python's: checkDetachingCommand.
    const held = words[0] ?? this.heldProgram(program);
    if (held === undefined) return undefined;
    const values = words.slice(1).map((word, k) => {
      const element = unwrap(list.elements[k] as ts.Expression);
      return word ?? (isPlainValue(element) && !(ts.isIdentifier(element) && this.literalBindings(element.text).length > 0) ? VALUE_MARK : undefined);
    });
    return detachingCommandWithValues([held, ...values]);
  }

  /**
   * The program a name or `this.` member holds: a name declared once in the file and never
   * assigned after, or a member every assignment of which in its class is, one literal program
   * name or a lookup of one (`this.agent = which.sync('ssh-agent')`). Python's: heldProgram.
   */
  private heldProgram(expression: ts.Expression): string | undefined {
    const node = unwrap(expression);
    if (ts.isIdentifier(node)) {
      // Declared once in the file, never assigned after, and no parameter's or loop's name.
      const declarations = this.variables.get(node.text) ?? [];
      const initializer = declarations.length === 1 ? declarations[0]?.initializer : undefined;
      if (!initializer || (this.mutations.get(node.text) ?? []).length > 0 || this.parameterNames.has(node.text)) return undefined;
      const value = commandText(initializer, 0) ?? programFound(unwrap(initializer));
      return value !== undefined && PROGRAM_ALONE.test(value) ? value : undefined;
    }
    if (!ts.isPropertyAccessExpression(node) || node.expression.kind !== SK.ThisKeyword) return undefined;
    // Within its class: another class's member of the same name is another binding.
    let owner: ts.Node | undefined = node.parent;
    while (owner && !ts.isClassDeclaration(owner) && !ts.isClassExpression(owner)) owner = owner.parent;
    if (!owner) return undefined;
    // One read of a class's text for all its members: a class may run many.
    this.memberPrograms ??= new Map();
    let members = this.memberPrograms.get(owner);
    if (!members) this.memberPrograms.set(owner, (members = memberPrograms(owner.getText())));
    return members.get(node.name.text);
  }

  /**
   * Where a name is used after its declaration, and where as `name.push(`, in the file's text: found
   * once a declaration (a file handing one list to thousands of spawns read the text between for
   * each, 24 s for 20,000).
   */
  private nameUses(declaration: ts.VariableDeclaration, name: string): { uses: number[]; pushes: number[] } {
    const known = this.nameUseMemo.get(declaration);
    if (known) return known;
    const text = declaration.getSourceFile().text;
    const escapedName = name.replace(/\$/g, '\\$');
    const offsets = (pattern: string) => [...text.matchAll(new RegExp(pattern, 'g'))].map((match) => match.index as number).filter((at) => at > declaration.getEnd());
    const found = { uses: offsets(String.raw`(?<![\w$.])${escapedName}(?![\w$])`), pushes: offsets(String.raw`(?<![\w$.])${escapedName}(?=\s*\.\s*push\s*\()`) };
    this.nameUseMemo.set(declaration, found);
    return found;
  }

  /**
   * The detaching command of a literal program run with an argument list held in a name its scope
   * builds (`const args = ['-N', host]; args.push('-o', 'ControlPersist=300', '-M')`, then
   * `spawn('ssh', args)`): the declaration's elements and what is pushed between it and the call,
   * in the same function, in order; a spread or a value is an unknown word. With any unknown word
   * or push it is read for a flag or verb that is written only (detachingFlagIn), as Python's
   * built lists are.
   */
  private heldArgumentsCommand(call: ts.CallExpression, program: ts.Expression, name: ts.Identifier): string | undefined {
    const first = this.literalText(program) ?? this.heldProgram(program);
    if (first === undefined) return undefined;
    const scope = nearestScope(call);
    const declarations = (this.variables.get(name.text) ?? []).filter((d) => d.initializer && nearestScope(d) === scope && d.getStart() < call.getStart());
    if (declarations.length !== 1) return undefined;
    const declaration = declarations[0] as ts.VariableDeclaration;
    const initializer = unwrap(declaration.initializer as ts.Expression);
    if (!ts.isArrayLiteralExpression(initializer)) return undefined;
    const words: Array<string | undefined> = [first];
    // A name bound to literals elsewhere (`const stay = '-f'`) may be a flag: unknown, not a value.
    const wordOf = (element: ts.Expression) => (ts.isSpreadElement(element) ? undefined : (commandText(element, 0) ?? (isPlainValue(element) && !(ts.isIdentifier(element) && this.literalBindings(element.text).length > 0) ? VALUE_MARK : undefined)));
    for (const element of initializer.elements) words.push(wordOf(element));
    // Every use between the declaration and the call must be a push (`args.unshift(x)`, `args[0] = x`,
    // `addFlags(args)` change the list in ways not read): else the list is not read at all.
    const { uses, pushes } = this.nameUses(declaration, name.text);
    // Sorted offsets, all after the declaration: those before the call, by a binary search.
    const within = (offsets: number[]) => {
      let low = 0;
      let high = offsets.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if ((offsets[middle] as number) < call.getStart()) low = middle + 1;
        else high = middle;
      }
      return low;
    };
    if (within(uses) !== within(pushes)) return undefined;
    const pushed = (this.pushes.get(name.text) ?? []).filter((word) => nearestScope(word) === scope && word.getStart() > declaration.getEnd() && word.getStart() < call.getStart());
    pushed.sort((a, b) => a.getStart() - b.getStart());
    // A push in another block than the declaration's (a branch, a loop) may not happen: one unknown
    // word; for a missing flag, literal words pushed there are read as pushed (a foreground flag
    // among them keeps the program in front either way), as Python's built lists.
    const block = declaration.parent?.parent?.parent;
    const values = [...words];
    let merged = false;
    for (const word of pushed) {
      const inBlock = word.parent?.parent?.parent === block;
      merged ||= !inBlock;
      words.push(ts.isSpreadElement(word) || !inBlock ? undefined : commandText(word, 0));
      values.push(inBlock ? wordOf(word) : ts.isSpreadElement(word) ? undefined : commandText(word, 0));
    }
    if (words.length < 2) return undefined;
    const literalProgram = this.literalText(program) !== undefined;
    // A flag that is written, with unknown words or pushes; a missing one, where every word is known.
    const written = literalProgram && (pushed.length > 0 || words.includes(undefined)) ? detachingFlagIn(words) : undefined;
    return written ?? (literalProgram && pushed.length === 0 && !words.includes(undefined) ? detachingCommandIn(words) : detachingCommandWithValues(values, merged));
  }

  /**
   * The detaching command the words are, a word held in a name (`const opts = ns ? '-cdn' : '-cd'`,
   * then `['mnexec', opts, …]`) tried with each literal value the file binds the name to (either
   * branch of a conditional, with what `opts += 'n'` appends): any that detaches counts. Only for a
   * detaching program's words. Python: heldWordChoices.
   */
  private detachingWith(words: ReadonlyArray<string | undefined>, elements: ReadonlyArray<ts.Expression>): string | undefined {
    const name = detachingCommandIn(words);
    if (name) return name;
    // The program may be held too, as a literal or where `which` found it (`const exe = which.sync('cupsd')`).
    const first = elements[0] && unwrap(elements[0]);
    const found = first && programFound(first);
    const programs = words[0] !== undefined ? [words[0]] : found !== undefined ? [found] : first && ts.isIdentifier(first) ? this.literalBindings(first.text) : [];
    if (!programs.some((program) => mayBeDetachingArgv(program, undefined))) return undefined;
    let choices: Array<Array<string | undefined>> = [[]];
    let held = false;
    for (let k = 0; k < words.length; k++) {
      const element = elements[k] && unwrap(elements[k] as ts.Expression);
      const values = k === 0 ? programs.filter((program) => mayBeDetachingArgv(program, undefined)) : words[k] !== undefined ? [words[k]] : element && ts.isIdentifier(element) ? this.literalBindings(element.text) : [];
      if (values.length === 0) break;
      held ||= words[k] === undefined;
      choices = choices.flatMap((head) => values.map((value) => [...head, value])).slice(0, MAX_HELD_CHOICES);
    }
    if (!held) return undefined;
    for (const choice of choices) {
      const found = detachingCommandIn(choice);
      if (found) return found;
    }
    return undefined;
  }

  /** The literal values a name is declared or assigned (see detachingWith); none when it holds no literal. */
  private literalBindings(name: string): string[] {
    // Once a name: a planted file may declare it, and hand it on, thousands of times.
    const known = this.heldLiterals.get(name);
    if (known) return known;
    const found = this.collectLiteralBindings(name);
    this.heldLiterals.set(name, found);
    return found;
  }

  private collectLiteralBindings(name: string): string[] {
    const values: string[] = [];
    const suffixes: string[] = [];
    const sources = [...(this.variables.get(name) ?? []).map((d) => d.initializer), ...(this.mutations.get(name) ?? [])];
    for (const source of sources) {
      if (!source) continue;
      const node = unwrap(source);
      const branches = ts.isConditionalExpression(node) ? [node.whenTrue, node.whenFalse] : [node];
      const literals = branches.map((branch) => commandText(branch, 0) ?? programFound(branch)).filter((value): value is string => value !== undefined && !value.includes(VALUE_MARK));
      const parent = source.parent;
      if (parent && ts.isBinaryExpression(parent) && parent.right === source && parent.operatorToken.kind === SK.PlusEqualsToken) suffixes.push(...literals);
      else values.push(...literals);
    }
    return [...values, ...values.flatMap((value) => suffixes.map((suffix) => value + suffix))].slice(0, MAX_HELD_CHOICES);
  }

  private literalText(expression: ts.Expression): string | undefined {
    const node = unwrap(expression);
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    // A program named by a joined path (`path.join(bin, 'elevate.exe')`, `bin + '/elevate.exe'`,
    // `` `${bin}/elevate.exe` ``): a value's directory, then its literal name (Python's the same).
    if (!ts.isCallExpression(node) && !ts.isBinaryExpression(node) && !ts.isTemplateExpression(node)) return undefined;
    const text = commandText(node, 0);
    return text !== undefined && (ts.isCallExpression(node) || /^\uE000[^\s]*[\/\\][^\s\/\\\uE000]+$/.test(text)) ? text : undefined;
  }

  /** Ties a call's detaching options to it without a finding, so they are no warning either. */
  private connectEvidence(call: ts.CallExpression): void {
    for (const argument of call.arguments) {
      const evidence = this.detachingNode(argument, new Set());
      if (evidence) this.connected.add(evidence);
    }
  }

  private checkTaggedTemplate(tagged: ts.TaggedTemplateExpression): void {
    if (this.withProject(() => this.isSpawnFunction(tagged.tag))) this.checkShellText(tagged.template);
  }

  /** Whether a call, were its callee a spawn function, would be reported: detaching options or backgrounding text. */
  private couldReport(call: ts.CallExpression): boolean {
    return call.arguments.some((argument) => this.detachingNode(argument, new Set()) !== undefined || this.shellConstruct(argument) !== undefined || this.holdsShellText(argument)) || this.detachingCommandOf(call) !== undefined || this.detachedReadOfOptions(call) !== undefined;
  }

  /** Every literal a name is declared, assigned, pushed or appended (command text held in it). */
  private heldSources(name: string): Array<ts.Expression | undefined> {
    return [...(this.variables.get(name) ?? []).map((d) => d.initializer), ...(this.mutations.get(name) ?? []), ...(this.pushes.get(name) ?? []), ...(this.appended.get(name) ?? [])];
  }

  /**
   * Whether an argument is a name (or a list spreading one) that some literal it is declared,
   * assigned, pushed or appended holds backgrounding text: checkShellText's sources, one name deep.
   */
  private holdsShellText(expression: ts.Expression): boolean {
    const node = unwrap(expression);
    if (ts.isSpreadElement(node)) return this.holdsShellText(node.expression);
    if (ts.isArrayLiteralExpression(node)) return node.elements.some((element) => ts.isSpreadElement(element) && ts.isIdentifier(unwrap(element.expression)) && this.holdsShellText(element.expression));
    if (!ts.isIdentifier(node)) return false;
    const known = this.heldShellAnswers.get(node.text);
    if (known !== undefined) return known;
    const sources = this.heldSources(node.text);
    const holds = sources.some((source) => {
      if (!source) return false;
      if (!this.appendedTexts.has(source)) return this.shellConstruct(source) !== undefined;
      const text = commandText(source, 0);
      return text !== undefined && backgroundingIn(VALUE_MARK + text) !== undefined;
    });
    this.heldShellAnswers.set(node.text, holds);
    return holds;
  }

  private checkShellText(expression: ts.Expression, viaName = false, cmdScript = false): void {
    const node = unwrap(expression);
    // `[...adminCommand, args]`: the words of a list held in a name, spread into the argument list.
    if (ts.isSpreadElement(node)) {
      this.checkShellText(node.expression, viaName);
      return;
    }
    if (ts.isArrayLiteralExpression(node)) {
      const waited = this.startProcessWaited(node);
      // After cmd's `/c` or `/k` the words are cmd's script, where `&` runs commands in turn.
      // (cmd's: the list's first word, as spawn('cmd', ['/c', …]) passes it, or right after cmd.)
      let afterCmdFlag = false;
      node.elements.forEach((element, index) => {
        if (!(waited && this.shellConstruct(element) === 'Start-Process')) this.checkShellText(element, viaName, afterCmdFlag);
        const before = index === 0 ? undefined : node.elements[index - 1];
        if (/^\/[ck]$/i.test(commandText(element, 0) ?? '') && (index === 0 || (before !== undefined && CMD_PROGRAM.test(commandText(before, 0) ?? '')))) afterCmdFlag = true;
      });
      if (node.elements.some((element) => this.shellConstruct(element))) return;
      // `['/c', 'start', '""', url]`: cmd's start, one word to an element; a program's own `--daemon`.
      const start = this.argvStart(node) ?? daemonOptionIn(node.elements.map((element) => commandText(element, 0)));
      if (start) this.report(node, 'shell-background', 'error', `shell command starts a background process (${start}) that outlives its owner`, node);
      return;
    }
    // Command text held in a variable (`const cmd = 'server &'`, `args = ['-Command', 'Start-Process x']`
    // in a switch, `args.push('Start-Process')`): every literal it is declared, assigned or pushed,
    // one name deep, each reported once.
    if (ts.isIdentifier(node) && !viaName) {
      // The same sources for every use of the name: gathered once.
      if (this.shellNames.has(node.text)) return;
      this.shellNames.add(node.text);
      const sources = this.heldSources(node.text);
      for (const source of sources) {
        if (source && !this.shellChecked.has(source)) {
          this.shellChecked.add(source);
          if (this.appendedTexts.has(source)) {
            const text = commandText(source, 0);
            const construct = text === undefined ? undefined : backgroundingIn(VALUE_MARK + text);
            if (construct) this.report(source, 'shell-background', 'error', `shell command starts a background process (${construct}) that outlives its owner`, source);
          } else if (this.pushes.get(node.text)?.includes(source) && isDaemonOptionWord(commandText(source, 0) ?? '')) {
            // `args.push('--daemonize')`: a word after the program of the list held in the name.
            this.report(source, 'shell-background', 'error', "shell command starts a background process (a program's own --daemon option) that outlives its owner", source);
          } else this.checkShellText(source, true, cmdScript);
        }
      }
      return;
    }
    // `args.join(' ')`: a list's words (a held one's, as it is declared or assigned) joined into one command line.
    const joined = this.joinedLists(node);
    if (joined) {
      for (const [list, construct] of joined) {
        if (cmdScript && construct === BACKGROUND_AMPERSAND_NAME) continue;
        if (this.shellChecked.has(list)) continue;
        this.shellChecked.add(list);
        this.report(list, 'shell-background', 'error', `shell command starts a background process (${construct}) that outlives its owner`, list);
      }
      return;
    }
    // Command text one of the file's functions returns (`exec(openCommand(url))`, or its result held
    // in a name): each returned expression read as the command, reported where its words are.
    if (ts.isCallExpression(node) && ts.isIdentifier(unwrap(node.expression))) {
      const called = this.calledFunctions(unwrap(node.expression) as ts.Identifier);
      if (called.length > 0 && this.returnDepth >= MAX_RETURN_DEPTH) return; // a chain of calls: read this deep
      this.returnDepth++;
      try {
        for (const fn of called) {
          for (const returned of returnedExpressions(fn)) {
            if (this.shellChecked.has(returned)) continue;
            this.shellChecked.add(returned);
            this.checkShellText(returned, false, cmdScript);
          }
        }
      } finally {
        this.returnDepth--;
      }
      if (called.length > 0) return;
    }
    const construct = this.shellConstruct(node) ?? (ts.isTemplateExpression(node) ? this.splicedConstruct(node) : undefined);
    if (construct && !(cmdScript && construct === BACKGROUND_AMPERSAND_NAME)) {
      this.report(node, 'shell-background', 'error', `shell command starts a background process (${construct}) that outlives its owner`, node);
    }
  }

  /** The backgrounding construct in a literal command (a string, a template, or an array of them), if any. */
  private shellConstruct(expression: ts.Expression): string | undefined {
    const node = unwrap(expression);
    if (ts.isArrayLiteralExpression(node)) {
      const waited = this.startProcessWaited(node);
      for (const element of node.elements) {
        const construct = this.shellConstruct(element);
        if (construct && !(waited && construct === 'Start-Process')) return construct;
      }
      return this.argvStart(node) ?? daemonOptionIn(node.elements.map((element) => commandText(element, 0)));
    }
    const text = commandText(node, 0);
    return text === undefined ? undefined : backgroundingIn(text);
  }

  /** `['Start-Process', exe, '-Wait', '-NoNewWindow']`: one word to an element, a plain child waited for. */
  private startProcessWaited(list: ts.ArrayLiteralExpression): boolean {
    return startProcessWaitedInConsole(list.elements.map((element) => commandText(element, 0)));
  }

  /** cmd's `start` after `/c` or `/k` in an argument list, one word to an element. */
  private argvStart(list: ts.ArrayLiteralExpression): string | undefined {
    return startInArgv(list.elements.map((element) => this.literalText(element)));
  }

  private checkTypedDeclaration(declaration: ts.VariableDeclaration): void {
    if (!declaration.initializer) return;
    const evidence = this.detachingNode(declaration.initializer, new Set());
    if (!evidence || this.connected.has(evidence)) return;
    this.connected.add(evidence);
    this.report(evidence, 'js-detached-spawn', 'error', 'spawn options with `detached` set: a child started with them outlives its owner', declaration);
  }

  private checkLooseLiterals(): void {
    for (const property of this.detachedProperties) {
      if (this.connected.has(property)) continue;
      if (ts.isPropertyAssignment(property) && this.inert(property.initializer)) continue;
      if (ts.isShorthandPropertyAssignment(property) && !this.shorthandDetaches(property)) continue;
      if (!this.mayBeSpawnOptions(property)) continue;
      this.report(property, 'js-detached-literal', 'warning', '`detached` set in a file that spawns processes; not traced to a spawn call, check where it goes', property);
    }
  }

  /**
   * Whether the object holding this `detached` can be spawn options: it has another spawn-option
   * key, or it goes where options go (a spawn-like call, a name that says options, an export, a
   * function that builds options). A `detached` field of a data or log record
   * (`onSpawn({ pid, detached })`, `{ url, detached: frame.isDetached() }`) is none of these.
   */
  private mayBeSpawnOptions(property: ts.ObjectLiteralElementLike): boolean {
    let object: ts.Node = property.parent;
    if (!ts.isObjectLiteralExpression(object)) return false;
    // A record of a started child (it has a pid), or a value in a test expectation or type assertion.
    if (object.properties.some((p) => RECORD_KEYS.has(propertyName(p.name) ?? ''))) return false;
    if (inTypeOnlyCall(object) || this.inExpectation(object)) return false;
    const spawnKeys = object.properties.some((p) => SPAWN_OPTION_KEYS.has(propertyName(p.name) ?? ''));
    // Exported on its own, an object that names and describes something or holds functions (a
    // CLI's command definition: `{ name, description, func, detached: true }`) is that thing.
    const described = !spawnKeys && describesSomething(object);
    // Up through wrappers and enclosing objects it is spread or nested into.
    for (;;) {
      const up: ts.Node | undefined = object.parent;
      if (!up) return spawnKeys;
      if (ts.isParenthesizedExpression(up) || ts.isAsExpression(up) || ts.isSatisfiesExpression(up) || ts.isSpreadAssignment(up) || ts.isConditionalExpression(up) || (ts.isBinaryExpression(up) && isLogical(up.operatorToken.kind))) {
        object = up;
      } else if (ts.isPropertyAssignment(up) && up.initializer === object) {
        if (SPAWNISH_NAME.test(propertyName(up.name) ?? '')) return true;
        object = up.parent; // the enclosing object literal
      } else if (ts.isObjectLiteralExpression(up)) {
        object = up;
      } else break;
    }
    const up = object.parent;
    if (!up) return spawnKeys;
    if (ts.isCallExpression(up) || ts.isNewExpression(up)) {
      if (up.expression === object) return false;
      const name = calleeName(up);
      // Handed to a logger or a registry (`log.info({...})`, `records.set(id, {...})`): data, whatever its keys.
      if (name !== undefined && RECORD_CALLS.test(name)) return false;
      if (ts.isCallExpression(up) && this.onlyReadByHelper(up, object)) return false;
      return spawnKeys || (name !== undefined && SPAWNISH_NAME.test(name));
    }
    if (spawnKeys) return true;
    if (ts.isVariableDeclaration(up) && ts.isIdentifier(up.name)) {
      const statement = up.parent?.parent;
      return SPAWNISH_NAME.test(up.name.text) || (!described && statement !== undefined && ts.isVariableStatement(statement) && hasExportModifier(statement)) || this.passedToSpawnish(up.name.text);
    }
    if (ts.isBinaryExpression(up) && up.operatorToken.kind === SK.EqualsToken) {
      const target = unwrap(up.left);
      const name = ts.isIdentifier(target) ? target.text : memberName(target);
      return name !== undefined && (SPAWNISH_NAME.test(name) || this.passedToSpawnish(name));
    }
    if (ts.isReturnStatement(up) || ts.isArrowFunction(up)) {
      const fn = ts.isArrowFunction(up) ? up : enclosingFunction(up);
      const name = fn ? functionName(fn) : undefined;
      return name !== undefined && SPAWNISH_NAME.test(name);
    }
    if (ts.isExportAssignment(up)) return !described;
    return false;
  }

  /**
   * Whether `argument` of `call` goes to a helper (a function of this file, or one a project module
   * exports) that never hands that parameter on as it is, except to another such helper: it reads
   * members of it, and takes its `detached` only as a branch's test or into a `detached` of its own
   * (`if (options.detached)`, `{ detached: options.detached }`, `const detached = !!options.detached`
   * then `{ detached }`). The choice is then checked where the helper makes it (its spawn, or its
   * own literal), and a warning at every call of the helper would say the same thing again.
   */
  private onlyReadByHelper(call: ts.CallExpression, argument: ts.Node): boolean {
    return this.readerCall(call, call.arguments.indexOf(argument as ts.Expression), 0);
  }

  /** Whether the callee of `call` only reads its parameter `index` (see onlyReadByHelper). */
  private readerCall(call: ts.CallExpression, index: number, depth: number): boolean {
    const callee = unwrap(call.expression);
    if (index < 0 || !ts.isIdentifier(callee)) return false;
    const binding = this.bindings.get(callee.text);
    if (binding?.kind === 'project') {
      return this.withProject(() => projectModule(this.sf.fileName, binding.specifier, this.context)?.readers?.get(binding.member)?.includes(index) === true);
    }
    const fn = binding ? undefined : this.functions.get(callee.text);
    return fn !== undefined && this.onlyReads(fn, index, depth);
  }

  /** Whether `fn` only reads its parameter `index`, as onlyReadByHelper says; helpers it hands it to are followed a few deep. */
  private onlyReads(fn: FunctionLike, index: number, depth: number): boolean {
    const parameter = fn.parameters[index];
    if (!fn.body || !parameter || parameter.dotDotDotToken || !ts.isIdentifier(parameter.name) || depth > 3) return false;
    // Once per parameter: a helper called a thousand times is read once (a cycle of helpers reads as "no").
    const known = this.readerAnswers.get(parameter);
    if (known !== undefined) return known;
    this.readerAnswers.set(parameter, false);
    const answer = this.usesOnlyRead(fn.body, parameter.name.text, (use) => this.readAsMember(use, fn.body as ts.Node, depth));
    this.readerAnswers.set(parameter, answer);
    return answer;
  }

  /** Whether every use of `name` in `scope` passes `allowed`; a member's or a key's name (`x.options`, `{ options: 1 }`) is no use. */
  private usesOnlyRead(scope: ts.Node, name: string, allowed: (use: ts.Identifier) => boolean): boolean {
    return (this.identifierUses(scope).get(name) ?? []).every(allowed);
  }

  /** The identifiers used in a function's body, by name: gathered once per body, however many names are asked about. */
  private identifierUses(scope: ts.Node): Map<string, ts.Identifier[]> {
    let uses = this.usesByScope.get(scope);
    if (uses) return uses;
    const found = new Map<string, ts.Identifier[]>();
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node)) {
        const parent = node.parent;
        const named = parent && (ts.isPropertyAccessExpression(parent) || ts.isPropertyAssignment(parent)) && parent.name === node;
        if (!named) addTo(found, node.text, node);
        return;
      }
      ts.forEachChild(node, visit);
    };
    visit(scope);
    uses = found;
    this.usesByScope.set(scope, uses);
    return uses;
  }

  /** Whether a use of a parameter reads one of its members (its `detached` as detachedValueKept says), or hands it whole to a helper that only reads it. */
  private readAsMember(use: ts.Identifier, body: ts.Node, depth: number): boolean {
    const access = use.parent;
    if (access && ts.isCallExpression(access) && access.arguments.includes(use)) return this.readerCall(access, access.arguments.indexOf(use), depth + 1);
    // Spread into a literal handed to such a helper (`helper(p, { ...options, command })`), which does not set `detached` itself.
    const literal = access && ts.isSpreadAssignment(access) ? access.parent : undefined;
    if (literal && ts.isObjectLiteralExpression(literal) && literal.parent && ts.isCallExpression(literal.parent) && !literal.properties.some((p) => this.keyOf(p.name) === 'detached')) {
      return this.readerCall(literal.parent, literal.parent.arguments.indexOf(literal), depth + 1);
    }
    if (!access || !ts.isPropertyAccessExpression(access) || access.expression !== use) return false;
    if (access.name.text !== 'detached') return !(ts.isBinaryExpression(access.parent) && access.parent.left === access && access.parent.operatorToken.kind === SK.EqualsToken);
    return this.detachedValueKept(access, body, true);
  }

  /**
   * Whether a `detached` value read here goes only to a branch's test or into a `detached` of the
   * helper's own (a literal's property, or `{ detached }` shorthand); into a `const` once, whose
   * uses must do the same.
   */
  private detachedValueKept(read: ts.Node, body: ts.Node, mayHold: boolean): boolean {
    // Through `!`, parentheses and `&&`/`||` (`if (!detached && timeout > 0)`): a test is still a test.
    const { value, tested } = climbTest(read, true);
    const up = value.parent;
    if (!up) return false;
    if ((ts.isIfStatement(up) || ts.isWhileStatement(up)) && up.expression === value) return true;
    if (ts.isConditionalExpression(up) && up.condition === value) return true;
    if (tested) return false; // `detached && other` as a value goes wherever that value goes
    if (ts.isShorthandPropertyAssignment(up)) return up.name.text === 'detached';
    if (ts.isPropertyAssignment(up)) return up.initializer === value && this.keyOf(up.name) === 'detached';
    if (mayHold && ts.isVariableDeclaration(up) && up.initializer === value && ts.isIdentifier(up.name) && (up.parent.flags & ts.NodeFlags.Const) !== 0) {
      const held = up.name;
      return this.usesOnlyRead(body, held.text, (use) => use === held || this.detachedValueKept(use, body, false));
    }
    return false;
  }

  /** Whether `node` is inside the arguments of a test expectation (`toMatchObject(...)`, `expect.objectContaining(...)`), within its statement. */
  private inExpectation(node: ts.Node): boolean {
    for (let at = node.parent; at && !ts.isSourceFile(at); at = at.parent) {
      if ((ts.isCallExpression(at) || ts.isNewExpression(at)) && EXPECTATION_CALLS.test(calleeName(at) ?? '')) return true;
      if (ts.isStatement(at) || ts.isFunctionLike(at)) break;
    }
    return false;
  }

  /** Whether `name` is an argument of a spawn-like call somewhere in the file. */
  private passedToSpawnish(name: string): boolean {
    return this.calls.some((call) => {
      const callee = unwrap(call.expression);
      const calleeName = ts.isIdentifier(callee) ? callee.text : memberName(callee);
      return calleeName !== undefined && SPAWNISH_NAME.test(calleeName) && call.arguments.some((a) => ts.isIdentifier(unwrap(a)) && (unwrap(a) as ts.Identifier).text === name);
    });
  }

  private lineOf(position: number): number {
    return this.sf.getLineAndCharacterOfPosition(position).line + 1;
  }

  private report(at: ts.Node, rule: RawFinding['rule'], severity: RawFinding['severity'], message: string, span: ts.Node, evidence?: ts.Node): void {
    const start = this.sf.getLineAndCharacterOfPosition(at.getStart(this.sf));
    const spans: Array<[number, number]> = [[this.lineOf(span.getStart(this.sf)), this.lineOf(span.end)]];
    if (evidence) {
      const line = this.lineOf(evidence.getStart(this.sf));
      spans.push([Math.max(1, line - 1), this.lineOf(evidence.end)]);
    }
    this.findings.push({ rule, severity, line: start.line + 1, column: start.character + 1, message, spans });
  }
}
