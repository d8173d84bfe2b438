/**
 * A file's own command runners: functions of the file that hand one of their parameters, as it
 * is, to a command runner (bitbake's `def _shellcmd(self, command, cwd=None, nowait=False)` with
 * `subprocess.Popen(command, shell=True, ...)`). What a call of such a function passes for that
 * parameter is a command, read as the runner's own argument would be. Read from the text, before
 * parsing, because the calls decide which statements are parsed at all.
 *
 * Only what the text shows one way counts: a name defined or bound more than once in its scope, a
 * parameter bound again anywhere in the function (`cmd = shlex.split(cmd)`, a loop or comprehension
 * variable, a lambda's or a nested function's parameter), and a method called from outside its
 * class are not read.
 */

/** A function of the file that runs one of its parameters. */
export interface OwnRunner {
  /** Its parameter's position among the positional ones a caller writes (`self`/`cls` not counted), or -1 (keyword-only). */
  index: number;
  /** The parameter's name, for a caller that passes it by keyword. */
  parameter: string;
  /** A method: called as `self.name(...)`, `cls.name(...)` or `Class.name(...)` within its class. */
  method: boolean;
  /** For a method, the offsets of its class's text: only calls there are its. */
  classStart: number;
  classEnd: number;
  /** For a method, its class's name. */
  className: string;
  /** Whether the runner hands it to a shell (`shell=True`, `os.system`, `os.popen`). */
  shell: boolean;
  /** Whether the command alone may be a documented program (not for os.exec*, os.spawn*, posix_spawn, which take a path first). */
  alone: boolean;
}

/** A runner's call whose first argument is a bare name: `subprocess.Popen(command, ...)`, `run_cmd(cmd)`. */
const CALL_OF_NAME = /(?:([A-Za-z_]\w*)\s*\.\s*)?([A-Za-z_]\w*)\s*\(\s*([A-Za-z_]\w*)\s*([,)])/y;
/** Before a runner's name: an owner that is not a plain name (`a.b.`, `f().`). */
const LONG_OWNER = /(?:[\w)\]]\s*\.\s*[A-Za-z_]\w*|[)\]])\s*\.\s*$/;
/** Before a runner's owner (`subprocess` in `self.subprocess.Popen`): any owner. */
const ANY_OWNER = /[\w)\]]\s*\.\s*$/;
const BLOCK = /^([ \t]*)(?:(?:async[ \t]+)?(def)|(class))[ \t]+([A-Za-z_]\w*)[ \t]*([(:])/gm;
const SHELL_TRUE = /\bshell\s*=\s*True\b/;
/** Runners whose command is always shell text. */
const SHELL_RUNNERS = new Set(['system', 'popen', 'getoutput', 'getstatusoutput', 'create_subprocess_shell']);
/** Runners that take a path, then the words: their command alone is not a program's name. */
const PATH_FIRST = /^(?:exec\w*|spawn\w*|posix_spawnp?)$/;

interface Block {
  kind: 'def' | 'class';
  name: string;
  indent: number;
  /** Where its line starts. */
  start: number;
  /** Offsets of the parameter list's text, between its parentheses (a def's; a class's: its header's end). */
  paramsStart: number;
  paramsEnd: number;
  /** Where the body ends: the first later line (code) indented no deeper than the block (or the text's end). */
  end: number;
  /** The innermost block holding it. */
  parent: Block | undefined;
}

/** The offset of the `)` closing the `(` just before `from`, or -1 (strings and comments are not read: signatures seldom hold brackets in them). */
function closingParen(text: string, from: number, limit: number): number {
  let depth = 1;
  for (let i = from; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) depth++;
    else if (c === 41 || c === 93 || c === 125) {
      if (--depth === 0) return i;
    }
  }
  return -1;
}

/** By indentation: a line (code, not blank or a comment) indented no deeper than it. */
const DEDENTS = new Map<number, RegExp>();

/** Where a block's body ends: the first line after `from` (not blank, not a comment) indented no deeper than `indent`. */
function bodyEnd(text: string, from: number, indent: number): number {
  let dedent = DEDENTS.get(indent);
  if (!dedent) DEDENTS.set(indent, (dedent = new RegExp(String.raw`\n(?=[ \t]{0,${indent}}[^ \t\n\r#])`, 'g')));
  // A docstring's unindented line ends it early: a miss, never a wrong runner.
  dedent.lastIndex = from;
  const found = dedent.exec(text);
  return found ? found.index + 1 : text.length;
}

/** Every `def` and `class` of the text with its body's extent and the block holding it, in order of their starts. */
function blocksOf(text: string): Block[] {
  const blocks: Block[] = [];
  const open: Block[] = [];
  BLOCK.lastIndex = 0;
  for (let match = BLOCK.exec(text); match; match = BLOCK.exec(text)) {
    const indent = (match[1] as string).length;
    const paramsStart = match.index + match[0].length;
    const paramsEnd = match[5] === '(' ? closingParen(text, paramsStart, Math.min(text.length, paramsStart + 4000)) : paramsStart;
    if (paramsEnd < 0) continue;
    while (open.length > 0 && (open[open.length - 1] as Block).end <= match.index) open.pop();
    const block: Block = { kind: match[2] ? 'def' : 'class', name: match[4] as string, indent, start: match.index, paramsStart, paramsEnd, end: bodyEnd(text, paramsEnd, indent), parent: open[open.length - 1] };
    blocks.push(block);
    open.push(block);
  }
  return blocks;
}

/**
 * The innermost function whose body holds `at`: the last block starting before it, or the nearest
 * of its outer blocks that reaches past it (a block holding `at` holds every block that starts
 * between the two): a walk as long as the nesting, however many blocks the file has.
 */
function innermostFunction(blocks: readonly Block[], at: number): Block | undefined {
  let low = 0;
  let high = blocks.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((blocks[middle] as Block).paramsEnd < at) low = middle + 1;
    else high = middle;
  }
  for (let block = blocks[low - 1]; block; block = block.parent) if (block.end > at) return block.kind === 'def' ? block : undefined;
  return undefined;
}

/** The parameters' names as written (strings and comments taken out), and how many a caller passes by position. */
function parametersOf(list: string): { names: string[]; positional: number } {
  const text = list.replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|#[^\n]*/g, (found) => (found.startsWith('#') ? '' : "''"));
  const names: string[] = [];
  let positional = -1;
  let depth = 0;
  let part = '';
  const parts: string[] = [];
  for (const c of text) {
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    if (c === ',' && depth === 0) {
      parts.push(part);
      part = '';
    } else part += c;
  }
  parts.push(part);
  for (const raw of parts) {
    const written = raw.trim();
    if (written === '' || written === '/') continue;
    if (written.startsWith('*')) {
      // `*args` or a bare `*`: what follows is keyword-only; `**kwargs` ends the list.
      if (positional < 0) positional = names.length;
      if (written.startsWith('**')) break;
      continue;
    }
    const name = /^[A-Za-z_]\w*/.exec(written);
    if (!name) break;
    names.push(name[0]);
  }
  return { names, positional: positional < 0 ? names.length : positional };
}

/** Whether `body` binds `name` again anywhere: an assignment (a tuple's too), a loop or comprehension, a `with … as`, a walrus, a lambda's or a nested function's parameter. */
function rebinds(body: string, name: string): boolean {
  const target = String.raw`(?:[\w.*]+[ \t]*,[ \t]*)*${name}(?:[ \t]*,[ \t]*[\w.*]+)*[ \t]*(?::[^=\n]+)?(?:[-+*/%|&^@]|//|>>|<<|\*\*)?=(?!=)`;
  return new RegExp(
    String.raw`(?:^|[;:])[ \t]*\(?${target}|\bfor\b[^\n:]*?\b${name}\b[^\n:]*?\bin\b|\bas[ \t]+${name}\b|\b${name}[ \t]*:=|\blambda\b[^:\n]*\b${name}\b|\bdef[ \t]+\w+[ \t]*\([^)]*\b${name}\b|\b(?:global|nonlocal)\b[^\n]*\b${name}\b`,
    'm',
  ).test(body);
}

/** Before a name, what binds it: a statement's start (an assignment follows), `as`, `class`, `for`, `def`, or an import's line. */
const BINDING_BEFORE = /(?:^|[;:])[ \t]*$|\b(?:as|class|for|def|global|nonlocal)[ \t]+$|^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b[^\n]*$/;
/** After a name at a statement's start: an assignment (annotated or augmented). */
const ASSIGNED_AFTER = /^[ \t]*(?::[^=\n]+)?(?:[-+*/%|&^@]|\/\/|>>|<<|\*\*)?=(?!=)/;

/**
 * The names among `names` the text binds otherwise than by their one `def` (another `def`, an
 * assignment, an import, a class, a loop): one pass over their occurrences, each read where it
 * stands.
 */
function namesBoundOtherwise(text: string, names: readonly string[]): Set<string> {
  const bound = new Set<string>();
  const defs = new Map<string, number>();
  const pattern = new RegExp(String.raw`(?<![\w.])(?:${names.join('|')})(?!\w)`, 'g');
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const name = match[0];
    const lineStart = text.lastIndexOf('\n', match.index - 1) + 1;
    const before = text.slice(Math.max(lineStart, match.index - 200), match.index);
    if (/\bdef[ \t]+$/.test(before)) {
      defs.set(name, (defs.get(name) ?? 0) + 1);
      continue;
    }
    if (!BINDING_BEFORE.test(before)) continue;
    if (/[;:][ \t]*$|^[ \t]*$/.test(before) ? ASSIGNED_AFTER.test(text.slice(match.index + name.length, match.index + name.length + 200)) : true) bound.add(name);
  }
  for (const name of names) if ((defs.get(name) ?? 0) !== 1) bound.add(name);
  return bound;
}

/** How many times each function is defined in its scope: `name` for a function, `Class.name` for a method (a class's nested functions count as functions). */
function countDefinitions(blocks: readonly Block[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const block of blocks) {
    if (block.kind !== 'def') continue;
    const key = block.parent?.kind === 'class' ? `${block.parent.name}.${block.name}` : block.name;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/**
 * The function of the text whose body holds `at`, keyed by its name (`.name` for a method), where
 * the file defines that key once: what a plain call (a method: one on `self`/`cls`) runs.
 */
export function functionsDefinedOnce(text: string): (at: number) => string | undefined {
  const blocks = blocksOf(text);
  // A method is keyed `.name` (called on `self`/`cls`), a function `name` (called plainly); a name
  // imported (`from x import name`) is not the file's function.
  const keyOf = (block: Block) => (block.parent?.kind === 'class' ? `.${block.name}` : block.name);
  const keys = new Map<string, number>();
  for (const block of blocks) if (block.kind === 'def') keys.set(keyOf(block), (keys.get(keyOf(block)) ?? 0) + 1);
  const imported = new Map<string, boolean>();
  const isImported = (name: string) => {
    let known = imported.get(name);
    if (known === undefined) imported.set(name, (known = new RegExp(String.raw`\bimport\b[^\n]*\b${name}\b`).test(text)));
    return known;
  };
  return (at) => {
    const block = innermostFunction(blocks, at);
    if (!block || keys.get(keyOf(block)) !== 1) return undefined;
    if (block.parent?.kind !== 'class' && isImported(block.name)) return undefined;
    return keyOf(block);
  };
}

/** The decorators written on the lines just above a block (its indentation's). */
function decoratorsAbove(text: string, start: number): string {
  let decorators = '';
  for (let end = start - 1; end > 0; ) {
    const from = text.lastIndexOf('\n', end - 1) + 1;
    const line = text.slice(from, end).trim();
    if (!line.startsWith('@')) break;
    decorators += `${line}\n`;
    end = from - 1;
  }
  return decorators;
}

/**
 * The file's own runners by name (a method's by `Class.name`), read from the runner calls at
 * `calls` (offsets where a runner's name or owner starts: RUNNER_CALLS' matches).
 */
export function ownRunners(text: string, calls: readonly number[]): Map<string, OwnRunner> {
  const runners = new Map<string, OwnRunner>();
  let blocks: Block[] | undefined;
  let definitions: Map<string, number> | undefined;
  const conflicting = new Set<string>();
  const judged = new Set<string>();
  for (const at of calls) {
    CALL_OF_NAME.lastIndex = at;
    const call = CALL_OF_NAME.exec(text);
    if (!call) continue;
    // As the tree reads runners: a name with at most one owner, a plain name (`subprocess.Popen`,
    // `utils.RunCmd`), not `self.module.run_command` or `get().run_command`.
    const before = text.slice(Math.max(0, at - 200), at);
    if ((call[1] === undefined ? LONG_OWNER : ANY_OWNER).test(before)) continue;
    blocks ??= blocksOf(text);
    const owner = innermostFunction(blocks, at);
    if (!owner) continue;
    const argument = call[3] as string;
    // Once a function and name: a function running its parameter 20,000 times reads its body once.
    const key = `${owner.start}:${argument}`;
    if (judged.has(key)) continue;
    judged.add(key);
    const classBlock = owner.parent?.kind === 'class' ? owner.parent : undefined;
    const { names, positional } = parametersOf(text.slice(owner.paramsStart, owner.paramsEnd));
    const decorators = classBlock ? decoratorsAbove(text, owner.start) : '';
    const skipsFirst = classBlock !== undefined && !/@staticmethod\b/.test(decorators) && (names[0] === 'self' || names[0] === 'cls' || /@classmethod\b/.test(decorators));
    const callerNames = skipsFirst ? names.slice(1) : names;
    const found = callerNames.indexOf(argument);
    if (found < 0 || rebinds(text.slice(owner.paramsEnd, owner.end), argument)) continue;
    const index = found < (skipsFirst ? positional - 1 : positional) ? found : -1;
    const name = classBlock ? `${classBlock.name}.${owner.name}` : owner.name;
    definitions ??= countDefinitions(blocks);
    if ((definitions.get(name) ?? 0) > 1 || conflicting.has(name) || runners.has(name)) {
      runners.delete(name); // read two ways: neither
      conflicting.add(name);
      continue;
    }
    const paren = text.indexOf('(', at);
    const close = closingParen(text, paren + 1, owner.end);
    const runner = call[2] as string;
    runners.set(name, {
      index,
      parameter: argument,
      method: classBlock !== undefined,
      classStart: classBlock?.start ?? 0,
      classEnd: classBlock?.end ?? text.length,
      className: classBlock?.name ?? '',
      shell: SHELL_RUNNERS.has(runner) || (close > paren && SHELL_TRUE.test(text.slice(paren, close))),
      alone: !(call[1] === 'os' && PATH_FIRST.test(runner)),
    });
  }
  // A function's name bound otherwise in the file (an assignment, an import, a loop's, another def).
  if (runners.size > 0) {
    const functions = [...runners.keys()].filter((key) => !key.includes('.'));
    const otherwise = functions.length > 0 ? namesBoundOtherwise(text, functions) : undefined;
    if (otherwise) for (const name of otherwise) runners.delete(name);
  }
  return runners;
}

/** The methods among the runners, by their own name (ownRunnerAt), built once a map. */
const methodsByName = new WeakMap<ReadonlyMap<string, OwnRunner>, Map<string, OwnRunner[]>>();

/** The runner a call at `at` of `name` (`name(`, or `self.name(`, `cls.name(`, `Class.name(` within its class) is, if any. */
export function ownRunnerAt(runners: ReadonlyMap<string, OwnRunner>, owner: string | undefined, name: string, at: number): OwnRunner | undefined {
  if (owner === undefined) {
    const runner = runners.get(name);
    return runner && !runner.method ? runner : undefined;
  }
  let methods = methodsByName.get(runners);
  if (!methods) {
    methods = new Map();
    for (const [key, runner] of runners) if (runner.method) methods.set(key.slice(key.lastIndexOf('.') + 1), [...(methods.get(key.slice(key.lastIndexOf('.') + 1)) ?? []), runner]);
    methodsByName.set(runners, methods);
  }
  for (const runner of methods.get(name) ?? []) {
    if (at >= runner.classStart && at < runner.classEnd && (owner === 'self' || owner === 'cls' || owner === runner.className)) return runner;
  }
  return undefined;
}

/** Offsets where the own runners are called, ascending. */
export function ownRunnerCalls(text: string, runners: ReadonlyMap<string, OwnRunner>): number[] {
  if (runners.size === 0) return [];
  const names = [...new Set([...runners.keys()].map((key) => key.slice(key.lastIndexOf('.') + 1)))].join('|');
  const calls: number[] = [];
  const pattern = new RegExp(String.raw`(?<!\w)(?:${names})(?=\s*\()`, 'g');
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const before = text.slice(Math.max(0, match.index - 100), match.index);
    // `owner.name(`: its owner, a plain name; `name(`: not the definition itself (`def name(`).
    const owner = /(?<![\w.])([A-Za-z_]\w*)\s*\.\s*$/.exec(before);
    if (!owner && (/\.\s*$/.test(before) || /\bdef\s+$/.test(before))) continue;
    const at = owner ? match.index - owner[0].length : match.index;
    if (ownRunnerAt(runners, owner?.[1], match[0], at)) calls.push(at);
  }
  return calls;
}
