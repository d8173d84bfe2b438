/**
 * A file's own command runners: functions of the file that hand one of their parameters, as it
 * is, to a command runner (bitbake's `def _shellcmd(self, command, cwd=None, nowait=False)` with
 * `subprocess.Popen(command, shell=True, ...)`). What a call of such a function passes for that
 * parameter is a command, read as the runner's own argument would be. Read from the text, before
 * parsing, because the calls decide which statements are parsed at all.
 */

/** A function of the file that runs one of its parameters. */
export interface OwnRunner {
  /** Its parameter's position among the positional ones a caller writes (`self`/`cls` not counted). */
  index: number;
  /** The parameter's name, for a caller that passes it by keyword. */
  parameter: string;
  /** A method (its first parameter `self` or `cls`): called as `self.name(...)`. */
  method: boolean;
  /** Whether the runner hands it to a shell (`shell=True`, `os.system`, `os.popen`). */
  shell: boolean;
}

/** A runner's call whose first argument is a bare name: `subprocess.Popen(command, ...)`, `run_cmd(cmd)`. */
const CALL_OF_NAME = /(?:([A-Za-z_]\w*)\s*\.\s*)?([A-Za-z_]\w*)\s*\(\s*([A-Za-z_]\w*)\s*([,)])/y;
/** Before a runner's name: an owner that is not a plain name (`a.b.`, `f().`). */
const LONG_OWNER = /(?:[\w)\]]\s*\.\s*[A-Za-z_]\w*|[)\]])\s*\.\s*$/;
/** Before a runner's owner (`subprocess` in `self.subprocess.Popen`): any owner. */
const ANY_OWNER = /[\w)\]]\s*\.\s*$/;
const DEF = /^([ \t]*)(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(/gm;
const SHELL_TRUE = /\bshell\s*=\s*True\b/;
/** Runners whose command is always shell text. */
const SHELL_RUNNERS = new Set(['system', 'popen', 'getoutput', 'getstatusoutput', 'create_subprocess_shell']);

interface FunctionSpan {
  name: string;
  indent: number;
  /** Offsets of the parameter list's text, between its parentheses. */
  paramsStart: number;
  paramsEnd: number;
  /** Where the body ends: the first later line indented no deeper than the `def` (or the text's end). */
  end: number;
}

/** The offset of the `)` closing the `(` just before `from`, or -1 (strings and comments are not read: signatures seldom hold them). */
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

/** Every `def` of the text with its body's extent, in order of their starts. */
function functionSpans(text: string): FunctionSpan[] {
  const spans: FunctionSpan[] = [];
  DEF.lastIndex = 0;
  for (let match = DEF.exec(text); match; match = DEF.exec(text)) {
    const indent = (match[1] as string).length;
    const paramsStart = match.index + match[0].length;
    const paramsEnd = closingParen(text, paramsStart, Math.min(text.length, paramsStart + 4000));
    if (paramsEnd < 0) continue;
    // The body: from the line after the signature to the first line (not blank, not a comment)
    // indented no deeper than the def. A docstring's unindented line ends it early: a miss, never a wrong runner.
    let end = text.length;
    let line = text.indexOf('\n', paramsEnd);
    while (line >= 0 && line < text.length) {
      const start = line + 1;
      let i = start;
      while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
      const c = text[i];
      if (c !== undefined && c !== '\n' && c !== '\r' && c !== '#' && i - start <= indent) {
        end = start;
        break;
      }
      line = text.indexOf('\n', start);
    }
    spans.push({ name: match[2] as string, indent, paramsStart, paramsEnd, end });
  }
  return spans;
}

/**
 * The innermost function whose body holds `at`: walking back from the last `def` before it, the
 * first whose body reaches past it. A top-level `def` that does not reach it ends the walk (no
 * earlier function can), so the walk is short but in a class with very many methods.
 */
function innermostHolding(spans: readonly FunctionSpan[], at: number): FunctionSpan | undefined {
  let low = 0;
  let high = spans.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((spans[middle] as FunctionSpan).paramsEnd < at) low = middle + 1;
    else high = middle;
  }
  for (let i = low - 1; i >= 0; i--) {
    const span = spans[i] as FunctionSpan;
    if (span.end > at) return span;
    if (span.indent === 0) return undefined;
  }
  return undefined;
}

/** Whether `body` binds `name` again: an assignment starting a line, a loop, a `with … as`, a walrus. */
function rebinds(body: string, name: string): boolean {
  return new RegExp(String.raw`^[ \t]*${name}[ \t]*(?:[-+*/%|&^@]|//|>>|<<|\*\*)?=(?!=)|\bfor[ \t]+${name}[ \t]+in\b|\bas[ \t]+${name}\b|\b${name}[ \t]*:=`, 'm').test(body);
}

/** The parameters' names in order, as a caller passes them positionally (none after a bare `*` or `*args`). */
function positionalParameters(list: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let part = '';
  const parts: string[] = [];
  for (const c of list) {
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    if (c === ',' && depth === 0) {
      parts.push(part);
      part = '';
    } else part += c;
  }
  parts.push(part);
  for (const raw of parts) {
    const text = raw.replace(/#[^\n]*/g, '').trim();
    if (text === '' || text === '/') continue;
    if (text.startsWith('*')) break;
    const name = /^[A-Za-z_]\w*/.exec(text);
    if (!name) break;
    names.push(name[0]);
  }
  return names;
}

/**
 * The file's own runners by name, read from the runner calls at `calls` (offsets where a
 * runner's name or owner starts: RUNNER_CALLS' matches). A name defined twice with different
 * readings is left out.
 */
export function ownRunners(text: string, calls: readonly number[]): Map<string, OwnRunner> {
  const runners = new Map<string, OwnRunner>();
  let spans: FunctionSpan[] | undefined;
  const conflicting = new Set<string>();
  for (const at of calls) {
    CALL_OF_NAME.lastIndex = at;
    const call = CALL_OF_NAME.exec(text);
    if (!call) continue;
    // As the tree reads runners: a name with at most one owner, a plain name (`subprocess.Popen`,
    // `utils.RunCmd`), not `self.module.run_command` or `get().run_command`.
    const before = text.slice(Math.max(0, at - 200), at);
    if ((call[1] === undefined ? LONG_OWNER : ANY_OWNER).test(before)) continue;
    spans ??= functionSpans(text);
    const owner = innermostHolding(spans, at);
    if (!owner) continue;
    const parameters = positionalParameters(text.slice(owner.paramsStart, owner.paramsEnd));
    const method = parameters[0] === 'self' || parameters[0] === 'cls';
    const callerParameters = method ? parameters.slice(1) : parameters;
    const argument = call[3] as string;
    const index = callerParameters.indexOf(argument);
    // The parameter as it is: not bound again before the call (`cmd = shlex.split(cmd)`, `for cmd in …`).
    if (index < 0 || rebinds(text.slice(owner.paramsEnd, at), argument)) continue;
    const paren = text.indexOf('(', at);
    const close = closingParen(text, paren + 1, owner.end);
    const shell = SHELL_RUNNERS.has(call[2] as string) || (close > paren && SHELL_TRUE.test(text.slice(paren, close)));
    const previous = runners.get(owner.name);
    if (previous && (previous.index !== index || previous.method !== method)) conflicting.add(owner.name);
    else if (!previous || shell) runners.set(owner.name, { index, parameter: argument, method, shell });
  }
  for (const name of conflicting) runners.delete(name);
  return runners;
}

/** Offsets where the own runners are called (`name(` for a function, `self.name(`/`cls.name(` for a method), ascending. */
export function ownRunnerCalls(text: string, runners: ReadonlyMap<string, OwnRunner>): number[] {
  if (runners.size === 0) return [];
  const names = [...runners.keys()].join('|');
  const calls: number[] = [];
  const pattern = new RegExp(String.raw`(?<![\w.])(?:(self|cls)\s*\.\s*)?(${names})\s*\(`, 'g');
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const runner = runners.get(match[2] as string) as OwnRunner;
    // Not the definition itself (`def name(`).
    if (runner.method === (match[1] !== undefined) && !/\bdef\s+$/.test(text.slice(Math.max(0, match.index - 12), match.index))) calls.push(match.index);
  }
  return calls;
}
