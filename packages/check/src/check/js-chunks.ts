// The part of a JS/TS file the analyser needs, so that the TypeScript parser reads only that.
//
// A small exact tokenizer cuts the file into top-level chunks (one or more whole statements) and
// notes the names each chunk mentions. The chunks kept are a closure: every chunk holding a trigger
// (a `detached`, an `unref`, a string that could be shell backgrounding), then every chunk sharing
// a name with a kept one, to a fixpoint. The analyser follows data only through names, and without
// scopes (a variable of one function is found from another by its name), so sharing a name is the
// relation to close over (a property name only where the analyser compares it across statements:
// under `this.`, named by a string, assigned). Chunks that bind a spawn module or a project module,
// and the first chunk with module syntax, are kept as well: they change what the whole file means
// to the analyser (whether anything is bound, whether the file is a script) even when nothing
// refers to them. Everything else is blanked: line breaks kept, other characters dropped, except
// the spaces that keep a kept chunk's columns, so that every reported line and column is unchanged.
//
// Anything the tokenizer is unsure of (a lexical error, JSX, a `/` after `}`, a decorator at the
// top level, an escape in an identifier) means "parse the whole file". A syntax error that only a
// parser sees, inside a chunk that is blanked, is not reported: that chunk holds no trigger word
// and no name of a kept chunk, so no finding can hide in it (docs/check.md says so).

// The modules whose bindings the analyser follows, from the analyser itself: one list. (js-rules.ts
// imports this module too; both are read only when a file is chunked, long after both loaded.)
import { SPAWN_MODULES } from './js-rules.js';
import { isRelative } from './module-resolution.js';
import { PROGRAM_WORD_LIST, SHELL_WORD_LIST } from './shell.js';

/** Reserved words: never a variable's name (after a dot they are member names). */
const RESERVED = new Set([
  'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum',
  'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof', 'let', 'new', 'null',
  'return', 'super', 'switch', 'this', 'throw', 'true', 'try', 'typeof', 'var', 'void', 'while', 'with', 'yield',
]);
/** Reserved words after which an expression (so a regular expression) may start. */
const VALUE_WORDS = new Set(['this', 'super', 'null', 'true', 'false']);
/**
 * Words that are keywords in some positions and plain names in others (`type`, `from`, `as`,
 * `async`, ...): a keyword when followed on the same line by a word (other than an operator word),
 * a string, `{` or a private name; a name otherwise (`type = 1`, `opts.type`, `{ from }`).
 */
const CONTEXTUAL = new Set([
  'abstract', 'accessor', 'as', 'asserts', 'async', 'declare', 'from', 'get', 'global', 'implements', 'infer', 'interface',
  'is', 'keyof', 'module', 'namespace', 'of', 'out', 'override', 'package', 'private', 'protected', 'public', 'readonly',
  'satisfies', 'set', 'static', 'type', 'unique',
]);
/** Words that continue an expression: a contextual word followed by one of them is a name (`type in x`). */
const OPERATOR_WORDS = new Set(['in', 'instanceof', 'as', 'satisfies', 'of']);
/** Words that start a statement: after a line break that ends an expression, a new top-level chunk. */
const STARTERS = new Set(['import', 'export', 'const', 'let', 'var', 'function', 'class', 'if', 'for', 'try', 'switch', 'enum']);
/** Words before a parenthesis that make it a statement's head: `if (x) /re/` is a regular expression. */
const CONTROL_WORDS = new Set(['if', 'while', 'for', 'with']);

let sharedSpans = new Int32Array(1 << 14);

/** Thrown by the tokenizer when it cannot be sure: the file is parsed whole. */
class Unsure extends Error {}

// The previous token, as far as the next one's reading depends on it.
const P_NONE = 0; // start, punctuation, an operator: an expression may start (a `/` is a regular expression)
const P_VALUE = 1; // a name, a literal, `]`, `)`: an expression ends here (a `/` divides)
const P_CONTROL_PAREN = 2; // the `)` of `if (...)`: a statement follows
const P_BRACE = 3; // a `}` that is not a template's: unsure what follows
const P_KEYWORD = 4; // a reserved word that takes an operand (`return`, `typeof`, ...)

const B_PAREN = 1;
const B_BRACKET = 2;
const B_BRACE = 3;
const B_SUBSTITUTION = 4; // `${` in a template

interface Chunk {
  start: number;
  end: number;
  /** Its names: positions [from, to) in the tokenizer's list of name spans. */
  namesFrom: number;
  namesTo: number;
  /** `async` found to be a name after the chunk's other names were listed (`async(x)` called). */
  asyncIsName: boolean;
  seed: boolean;
  /** Binds a spawn module or a project module: kept, since bindings change how the file is read. */
  binds: boolean;
  /** `import`/`export` or `import.meta`: the file is a module. */
  module: boolean;
  lastIsSemicolon: boolean;
}

const isIdentStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36 || c > 127;
/** ASCII characters that go on a word (letters, digits, `_`, `$`); anything past ASCII does too. */
const IDENT_PART = new Uint8Array(128);
for (let c = 0; c < 128; c++) IDENT_PART[c] = isIdentStart(c) || (c >= 48 && c <= 57) ? 1 : 0;
const isIdentPart = (c: number) => c > 127 || IDENT_PART[c] === 1;
const isLineBreak = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;

/** Cooked text of a string literal's or template part's raw text (only the escapes that change it). */
function cook(raw: string): string {
  if (!raw.includes('\\')) return raw;
  return raw.replace(/\\(?:x([0-9a-fA-F]{2})|u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4})|([0-7]{1,3})|(\r\n|[\s\S]))/g, (_, hex, brace, four, octal, other: string | undefined) => {
    if (hex) return String.fromCharCode(parseInt(hex, 16));
    if (brace) return String.fromCodePoint(Math.min(parseInt(brace, 16), 0x10ffff));
    if (four) return String.fromCharCode(parseInt(four, 16));
    if (octal) return String.fromCharCode(parseInt(octal, 8));
    if (other === undefined || isLineBreak(other.charCodeAt(0))) return '';
    return ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v' } as Record<string, string>)[other] ?? other;
  });
}

/**
 * A string's (or template part's) text that could matter: an option word, or shell backgrounding.
 * An `&` next to another (`a && b`) is never a background `&` (shell.ts), whatever the string is
 * joined to: only a lone one counts, so the `&&` of `exec('npm run build && npm test')` does not
 * make its statement, and everything sharing a name with it, worth parsing.
 */
const TRIGGER_TEXT = new RegExp(['detach', 'unref', '(?<!&)&(?!&)', ...SHELL_WORD_LIST, ...PROGRAM_WORD_LIST, 'setpg', 'runas', 'start-process', 'StartTransientUnit', String.raw`start\s`, '^/[ck]$'].join('|'), 'i');
/**
 * The same, searched in the whole raw text at once, in three cheaper passes than one
 * case-insensitive alternation: the words (`detached` and `unref` also make a chunk a trigger
 * wherever they are, a comment included: kept is always safe), `start` in any case, and a lone `&`.
 */
const AMPERSAND = 38;
const TRIGGER_WORDS = new RegExp(['detach', 'unref', 'setpg', '[Rr][Uu][Nn][Aa][Ss]', 'StartTransientUnit', ...SHELL_WORD_LIST, ...PROGRAM_WORD_LIST].join('|'), 'g');
const TRIGGER_START = /start[\s\\-]/gi; // a backslash: `start\t/b` in the source
/** cmd's `/c` or `/k` as a string of its own: an argument list's `start` may follow (`['/c', 'start', '""', url]`). */
const TRIGGER_CMD_FLAG = /(?<=['"`])\/[ck](?=['"`])/gi;
const PTY_SIZE = /\bcols\b/g;

/**
 * Words read as text (keywords, contextual words, `require`), by length and first character: any
 * other word is a name, known without making a string of it (most words of a file are names).
 */
const WORD_LIST = [...new Set([...RESERVED, ...CONTEXTUAL, 'require'])];
const F_RESERVED = 1;
const F_CONTEXTUAL = 2;
const F_VALUE = 4;
const F_STARTER = 8;
const F_CONTROL = 16;
const WORD_FLAGS = WORD_LIST.map((word) => (RESERVED.has(word) ? F_RESERVED : 0) | (CONTEXTUAL.has(word) ? F_CONTEXTUAL : 0) | (VALUE_WORDS.has(word) ? F_VALUE : 0) | (STARTERS.has(word) ? F_STARTER : 0) | (CONTROL_WORDS.has(word) ? F_CONTROL : 0));
const WORDS_BY_SHAPE: Array<number[] | undefined> = [];
WORD_LIST.forEach((word, index) => (WORDS_BY_SHAPE[word.length * 128 + word.charCodeAt(0)] ??= []).push(index));

/** Which of WORD_LIST the word at [start, end) is, or -1: compared by character, no string made. */
function wordAt(text: string, start: number, end: number, first: number): number {
  const length = end - start;
  if (length > 10 || first > 127) return -1;
  const candidates = WORDS_BY_SHAPE[length * 128 + first];
  if (candidates === undefined) return -1;
  search: for (const index of candidates) {
    const word = WORD_LIST[index] as string;
    for (let k = 1; k < length; k++) if (word.charCodeAt(k) !== text.charCodeAt(start + k)) continue search;
    return index;
  }
  return -1;
}
/** What a word that is surely a name reads as: no keyword set holds it. */
const NAME = ' ';

class Tokenizer {
  private i = 0;
  private readonly n: number;
  private prev = P_NONE;
  private prevWord = ''; // the previous token when it is a word, else ''
  private prevFlags = 0; // its F_ flags when it is a reserved word (read only then)
  private prevPrevWord = ''; // the word before a `(` that is the previous token
  private prevIsOpenParen = false;
  private prevIsDot = false;
  private prevIsOpenBracket = false;
  /** The `.` before a member came after `this`, `super` or `import`. */
  private dotAfterKeyword = false;
  private newlineBefore = false;
  /** In a top-level `import` declaration before its specifier string: no statement ends there. */
  private inImportClause = false;
  private readonly stack: number[] = [];
  /** For each open `(`: whether it is a statement head, and whether `async` came right before it. */
  private readonly parenControl: boolean[] = [];
  private readonly parenAsync: Array<number | undefined> = [];
  /** A contextual word waiting for the next token to say whether it is a name. */
  private pendingWord: string | undefined;
  private pendingStart = -1;
  /** A `)` closing `async (...)`: the next token says whether it was an arrow's parameters. */
  private asyncParenChunk = -1;
  readonly chunks: Chunk[] = [];
  private current: Chunk;
  /** Name spans, [start, end) pairs, in source order (one buffer for every file: a file is read at a time). */
  spans = sharedSpans;
  spanCount = 0;
  /** Positions of TRIGGER_TEXT in the whole text; strings are read in order, so one cursor walks it. */
  private readonly triggers: number[] = [];
  /** Positions of `detached` and `unref`: a chunk holding one is a trigger. */
  readonly sourceTriggers: number[] = [];
  private trigger = 0;

  constructor(
    private readonly text: string,
    private readonly jsx: boolean,
    private readonly isProjectSpecifier: (specifier: string) => boolean,
  ) {
    this.n = text.length;
    const { triggers } = this;
    for (const match of text.matchAll(TRIGGER_WORDS)) {
      triggers.push(match.index);
      const first = text.charCodeAt(match.index);
      if (first === 100 /* d */ ? text.charCodeAt(match.index + 1) === 101 /* detach, not disown or daemonize */ : first === 117 /* u */) this.sourceTriggers.push(match.index);
    }
    for (const match of text.matchAll(TRIGGER_START)) triggers.push(match.index);
    for (const match of text.matchAll(TRIGGER_CMD_FLAG)) triggers.push(match.index);
    // A terminal size (`{ cols, rows }`) makes a spawn a PTY spawn (js-rules.ts, isPtyShape): a
    // chunk holding `cols` is kept, wherever it is (kept is always safe).
    for (const match of text.matchAll(PTY_SIZE)) this.sourceTriggers.push(match.index);
    for (let at = text.indexOf('&'); at >= 0; at = text.indexOf('&', at + 1)) {
      // A pair (or longer run) is skipped whole: two adjacent characters are in the same string part.
      if (text.charCodeAt(at + 1) === AMPERSAND) {
        while (text.charCodeAt(at + 1) === AMPERSAND) at++;
        continue;
      }
      triggers.push(at);
    }
    triggers.sort((a, b) => a - b);
    this.current = this.newChunk(0);
  }

  private newChunk(start: number): Chunk {
    if (this.chunks.length > 0) {
      this.current.namesTo = this.spanCount;
      this.current.end = this.lastEndBefore;
    }
    const chunk: Chunk = { start, end: start, namesFrom: this.spanCount, namesTo: this.spanCount, asyncIsName: false, seed: false, binds: false, module: false, lastIsSemicolon: false };
    this.chunks.push(chunk);
    return chunk;
  }

  private addName(start: number, end: number): void {
    if (this.spanCount * 2 + 2 > this.spans.length) {
      const grown = new Int32Array(this.spans.length * 2);
      grown.set(this.spans);
      this.spans = grown;
      sharedSpans = grown;
    }
    this.spans[this.spanCount * 2] = start;
    this.spans[this.spanCount * 2 + 1] = end;
    this.spanCount++;
  }

  /** Ends the current chunk before the token at `at`, if it holds anything. */
  private boundary(at: number): void {
    // The token at `at` is being read: the chunk holds something before it unless it starts there.
    if (this.current.start !== at) this.current = this.newChunk(at);
  }

  /** Whether a string or template part at [start, end) could be a trigger. */
  private triggerIn(start: number, end: number, escaped: boolean): boolean {
    const { triggers } = this;
    while (this.trigger < triggers.length && (triggers[this.trigger] as number) < start) this.trigger++;
    if (this.trigger < triggers.length && (triggers[this.trigger] as number) < end) return true;
    return escaped && TRIGGER_TEXT.test(cook(this.text.slice(start, end)));
  }

  private get chunkIndex(): number {
    return this.chunks.length - 1;
  }

  run(): Chunk[] {
    const { text, n } = this;
    if (text.startsWith('#!')) {
      while (this.i < n && !isLineBreak(text.charCodeAt(this.i))) this.i++;
    }
    this.current.start = this.i;
    for (;;) {
      this.skipTrivia();
      if (this.i >= n) break;
      this.token();
    }
    if (this.stack.length > 0) throw new Unsure('unclosed bracket');
    this.settlePending(-1, '', false);
    this.current.namesTo = this.spanCount;
    this.current.end = this.lastEndBefore;
    if (this.chunkEmpty) this.chunks.pop();
    return this.chunks;
  }

  private skipTrivia(): void {
    const { text, n } = this;
    let i = this.i;
    let newline = false;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9) i++;
      else if (c === 10 || c === 13) {
        newline = true;
        i++;
      } else if (c === 47) {
        const next = text.charCodeAt(i + 1);
        if (next === 47) {
          i += 2;
          while (i < n && !isLineBreak(text.charCodeAt(i))) i++;
        } else if (next === 42) {
          const close = text.indexOf('*/', i + 2);
          if (close < 0) throw new Unsure('unclosed comment');
          for (let k = i; k < close; k++) if (isLineBreak(text.charCodeAt(k))) newline = true;
          i = close + 2;
        } else break;
      } else if (c === 11 || c === 12 || c === 0xfeff || c === 0xa0) i++;
      else if (c === 0x2028 || c === 0x2029) {
        newline = true;
        i++;
      } else if (c > 127 && /\s/.test(text.charAt(i))) i++;
      else break;
    }
    this.i = i;
    this.newlineBefore = newline;
  }

  /** Settles a contextual word read before the token now starting: keyword or name. */
  private settlePending(kind: number, word: string, sameLine: boolean): void {
    // kind: 1 word, 2 string, 3 `{`, 4 `#`, 0 anything else, -1 end of input
    const keyword = sameLine && ((kind === 1 && !OPERATOR_WORDS.has(word)) || kind === 2 || kind === 3 || kind === 4);
    if (this.pendingWord !== undefined) {
      // Still in the word's chunk: a boundary is decided after this.
      if (!keyword) this.addName(this.pendingStart, this.pendingStart + this.pendingWord.length);
      this.pendingWord = undefined;
    }
  }

  private lastEndBefore = 0;
  /** No token read yet in the current chunk (it starts at its first token). */
  private chunkEmpty = true;

  /** `import`/`export` at the top level, or `import.meta` anywhere: module syntax. */
  private moduleKeyword(word: string): void {
    if (word === 'export') {
      if (this.stack.length === 0) this.current.module = true;
      return;
    }
    this.skipTrivia();
    const next = this.text.charCodeAt(this.i);
    // `import.meta` anywhere; `import x`, `import {`, `import '...'` at the top level; not `import(...)`.
    if (next === 46 || (next !== 40 && this.stack.length === 0)) this.current.module = true;
    if (next !== 46 && next !== 40 && this.stack.length === 0) this.inImportClause = true;
    this.newlineBefore = false;
  }

  private word(start: number, c: number, sameLine: boolean): void {
    const { text } = this;
    if (c === 92) throw new Unsure('escape in an identifier');
    const n = this.n;
    let j = start + 1;
    while (j < n && isIdentPart(text.charCodeAt(j))) j++;
    if (j < n && text.charCodeAt(j) === 92) throw new Unsure('escape in an identifier');
    if (c === 35 && j === start + 1) throw new Unsure('a lone #');
    const index = wordAt(text, start, j, c);
    const word = index < 0 ? NAME : (WORD_LIST[index] as string);
    const flags = index < 0 ? 0 : (WORD_FLAGS[index] as number);
    this.i = j;
    this.settle(c === 35 ? 4 : 1, word, sameLine);
    this.beforeToken(start, word, flags);
    const afterDot = this.prevIsDot;
    if (afterDot || c === 35) {
      // A member name links chunks only where the analyser compares it across statements: under
      // `this.` (or `super.`), whose object is no name (`this.proc = spawn()` ... `this.proc.unref()`),
      // and where it is assigned (`o.opts = {...}` is looked up by the name `opts`). Elsewhere its
      // object's name links already: `state.child` goes with `state`.
      if (c === 35 || this.dotAfterKeyword || this.assignmentFollows(j)) this.addName(start, j);
      this.setPrev(P_VALUE, '');
    } else if (flags & F_RESERVED) {
      if (word === 'import' || word === 'export') this.moduleKeyword(word);
      this.setPrev(flags & F_VALUE ? P_VALUE : P_KEYWORD, word);
      this.prevFlags = flags;
    } else if (flags & F_CONTEXTUAL) {
      this.pendingWord = word;
      this.pendingStart = start;
      this.setPrev(P_VALUE, word);
    } else {
      if (!(word === 'require' && this.peekOpenParen())) this.addName(start, j);
      this.setPrev(P_VALUE, word);
    }
    this.lastEndBefore = j;
  }

  private token(): void {
    const { text } = this;
    const start = this.i;
    const c = text.charCodeAt(start);
    const sameLine = !this.newlineBefore;
    // A chunk starts at its first token: the comments before it lie between chunks.
    if (this.chunkEmpty) {
      this.current.start = start;
      this.chunkEmpty = false;
    }

    // A word: a name, a keyword, or a contextual word.
    if (isIdentStart(c) || c === 92 /* \ */ || c === 35 /* # */) {
      this.word(start, c, sameLine);
      return;
    }

    this.settle(c === 39 || c === 34 ? 2 : c === 123 ? 3 : 0, '', sameLine);
    this.beforeToken(start, '', 0);

    if (c === 39 || c === 34) {
      this.stringToken(start, c);
      return;
    }
    if (c === 96 /* ` */) {
      this.i = start + 1;
      this.templatePart(this.prevIsOpenBracket);
      return;
    }
    if ((c >= 48 && c <= 57) || (c === 46 && text.charCodeAt(start + 1) >= 48 && text.charCodeAt(start + 1) <= 57)) {
      this.numberToken(start, c);
      return;
    }
    if (c === 47 /* / */) {
      if (this.prev === P_BRACE) throw new Unsure('`/` after `}`');
      if (this.prev === P_VALUE && CONTEXTUAL.has(this.prevWord)) throw new Unsure('`/` after a contextual word (`of /re/`?)');
      if (this.prev === P_VALUE) {
        // Division, `/=`.
        this.i = start + (text.charCodeAt(start + 1) === 61 ? 2 : 1);
        this.finish(this.i, P_NONE);
        return;
      }
      this.i = this.regexEnd(start);
      this.finish(this.i, P_VALUE);
      return;
    }
    this.punctuator(start, c, sameLine);
  }

  private stringToken(start: number, quote: number): void {
    const j = this.stringEnd(start, quote);
    this.inImportClause = false;
    // `this['proc']`, `o['opts'] = ...`: a member named by a string is a name like `.proc`.
    if (this.prevIsOpenBracket) this.addName(start + 1, j - 1);
    if (this.triggerIn(start + 1, j - 1, this.escaped)) this.current.seed = true;
    // A module specifier after `from`, `require(`, `import(` or `import`: a binding, or not.
    if (this.prevWord === 'from' || this.prevWord === 'import' || (this.prevIsOpenParen && (this.prevPrevWord === 'require' || this.prevPrevWord === 'import'))) {
      const value = cook(this.text.slice(start + 1, j - 1));
      if (SPAWN_MODULES.has(value) || this.isProjectSpecifier(value)) this.current.binds = true;
      // A PTY library's (or npm daemon's) every call is a finding: its binding is a trigger, followed to its uses.
      const shape = SPAWN_MODULES.get(value);
      if (shape?.pty || shape?.daemon) this.current.seed = true;
    }
    this.i = j;
    this.finish(j, P_VALUE);
  }

  private numberToken(start: number, c: number): void {
    const { text } = this;
    const member = this.prevIsOpenBracket; // `this[0]`: a member named by a number
    let j = start + 1;
    for (;;) {
      const d = text.charCodeAt(j);
      if (isIdentPart(d) || d === 46) j++;
      // An exponent's sign (`1e-7`), not in a hexadecimal number (`0x1e-7` subtracts).
      else if ((d === 43 || d === 45) && (text.charCodeAt(j - 1) | 32) === 101 && !(c === 48 && (text.charCodeAt(start + 1) | 32) === 120)) j++;
      else break;
    }
    if (member) this.addName(start, j);
    this.i = j;
    this.finish(j, P_VALUE);
  }

  private punctuator(start: number, c: number, sameLine: boolean): void {
    const { text } = this;
    switch (c) {
      case 40: {
        // (
        this.parenControl.push(this.prev === P_KEYWORD && ((this.prevFlags & F_CONTROL) !== 0 || (this.prevWord === 'await' && this.prevPrevWord === 'for')));
        this.parenAsync.push(this.prevWord === 'async' && this.pendingAsyncIsThis ? this.chunkIndex : undefined);
        this.pendingAsyncIsThis = false;
        this.stack.push(B_PAREN);
        const before = this.prevWord; // for `require(` and `import(`
        this.i++;
        this.finish(this.i, P_NONE);
        this.prevPrevWord = before;
        this.prevIsOpenParen = true;
        return;
      }
      case 41: {
        if (this.stack.pop() !== B_PAREN) throw new Unsure('unbalanced )');
        const control = this.parenControl.pop() === true;
        const asyncChunk = this.parenAsync.pop();
        this.i++;
        this.finish(this.i, control ? P_CONTROL_PAREN : P_VALUE);
        if (asyncChunk !== undefined) this.asyncParenChunk = asyncChunk;
        return;
      }
      case 91:
        this.stack.push(B_BRACKET);
        this.i++;
        this.finish(this.i, P_NONE);
        this.prevIsOpenBracket = true;
        return;
      case 93:
        if (this.stack.pop() !== B_BRACKET) throw new Unsure('unbalanced ]');
        this.i++;
        this.finish(this.i, P_VALUE);
        return;
      case 123:
        this.stack.push(B_BRACE);
        this.i++;
        this.finish(this.i, P_NONE);
        return;
      case 125: {
        const open = this.stack.pop();
        if (open === B_SUBSTITUTION) {
          this.i++;
          this.templatePart();
          return;
        }
        if (open !== B_BRACE) throw new Unsure('unbalanced }');
        this.i++;
        this.finish(this.i, P_BRACE);
        return;
      }
      case 59: // ;
        this.inImportClause = false;
        this.i++;
        this.finish(this.i, P_NONE);
        if (this.stack.length === 0) {
          this.current.lastIsSemicolon = true;
          this.current = this.newChunk(this.i);
          this.chunkEmpty = true;
        }
        return;
      case 64: // @
        if (this.stack.length === 0) throw new Unsure('a decorator at the top level');
        this.i++;
        this.finish(this.i, P_NONE);
        return;
      case 60: // <
        if (text.startsWith('<!--', start)) throw new Unsure('an HTML comment');
        if (this.prev === P_VALUE) {
          // An operator after a value, read whole: `<<`, `<=`, `<<=` (the second `<` of `a << b` is no JSX).
          let j = start + 1;
          while (text.charCodeAt(j) === 60 || text.charCodeAt(j) === 61) j++;
          this.i = j;
          this.finish(j, P_NONE);
          return;
        }
        if (this.jsx) throw new Unsure('JSX');
        break;
      case 46: // . ?. ...
        if (text.startsWith('...', start)) {
          this.i += 3;
          this.finish(this.i, P_NONE);
          return;
        }
        this.dotAfterKeyword = this.prevWord === 'this' || this.prevWord === 'super' || this.prevWord === 'import' || this.prevWord === 'new';
        this.i++;
        this.finish(this.i, P_NONE);
        this.prevIsDot = true;
        return;
      case 63: // ?
        if (text.charCodeAt(start + 1) === 46 && !(text.charCodeAt(start + 2) >= 48 && text.charCodeAt(start + 2) <= 57)) {
          this.dotAfterKeyword = this.prevWord === 'this' || this.prevWord === 'super';
          this.i += 2;
          this.finish(this.i, P_NONE);
          this.prevIsDot = true;
          return;
        }
        break;
      case 33: // ! : a non-null assertion right after a value (`a! / b`) ends a value; `!=` and `!x` do not
        if (this.prev === P_VALUE && sameLine && text.charCodeAt(start + 1) !== 61) {
          this.i++;
          this.finish(this.i, P_VALUE);
          return;
        }
        break;
      case 43: // + ++
      case 45: // - --
        if (text.charCodeAt(start + 1) === c) {
          this.i += 2;
          // Postfix after a value (`a++ / 2` divides), prefix otherwise.
          this.finish(this.i, this.prev === P_VALUE ? P_VALUE : P_NONE);
          return;
        }
        break;
    }
    if (c === 61 && text.charCodeAt(start + 1) === 62) {
      // =>: settles `async (...) =>`.
      this.i += 2;
      this.finish(this.i, P_NONE);
      return;
    }
    // Any other punctuator: one character at a time is enough for what is read here.
    if (c <= 32 || c === 127) throw new Unsure('a control character');
    this.i++;
    this.finish(this.i, P_NONE);
  }

  private pendingAsyncIsThis = false;
  private escaped = false;

  /** Bookkeeping before any token: settle `async (...)`, and decide a chunk boundary. */
  private beforeToken(start: number, word: string, flags: number): void {
    const { text } = this;
    if (this.asyncParenChunk >= 0) {
      // `async (...) =>` is an arrow: `async` was a keyword; `async (...)` anything else was a call.
      const arrow = text.charCodeAt(start) === 61 && text.charCodeAt(start + 1) === 62;
      if (!arrow) (this.chunks[this.asyncParenChunk] as Chunk).asyncIsName = true;
      this.asyncParenChunk = -1;
    }
    // `from` on its own line goes on an `import`/`export` (`import { spawn }\n  from 'x'`): never a
    // cut before it; a statement that does begin with `from` only stays with the one before.
    if (this.stack.length !== 0 || !this.newlineBefore || word === '' || word === 'from') return;
    // `import * as a\nb from 'x'` is one broken statement, not two: never a cut before the specifier.
    if (this.inImportClause) return;
    // A line break after a complete expression, then a word that cannot continue it: a new statement
    // (automatic semicolon insertion). Not after a contextual word (`x as\nconst` goes on), nor
    // before a reserved word that continues a statement (`else`, `while` of `do`, `catch`, `in`).
    const endsStatement = this.prev === P_BRACE || (this.prev === P_VALUE && !this.prevIsDot && !CONTEXTUAL.has(this.prevWord));
    if (endsStatement && (flags & F_STARTER || !(flags & F_RESERVED))) this.boundaryBefore(start);
  }

  private boundaryBefore(start: number): void {
    this.boundary(start);
  }

  /** Called when a token starts: settles a pending contextual word. */
  private settle(kind: number, word: string, sameLine: boolean): void {
    if (this.pendingWord === undefined) return;
    const wasAsync = this.pendingWord === 'async';
    if (this.pendingWord !== undefined) {
      if (wasAsync && kind === 0 && sameLine && this.text.charCodeAt(this.i) === 40) {
        // `async (`: a keyword if an arrow follows the parameters, found when they close.
        this.pendingAsyncIsThis = true;
        this.pendingWord = undefined;
        return;
      }
      this.settlePending(kind, word, sameLine);
    }
  }

  private setPrev(kind: number, word: string): void {
    this.prevPrevWord = this.prevIsOpenParen ? this.prevPrevWord : this.prevWord;
    this.prev = kind;
    this.prevWord = word;
    this.prevIsOpenParen = false;
    this.prevIsOpenBracket = false;
    this.prevIsDot = false;
  }

  private finish(end: number, kind: number): void {
    this.prevIsOpenBracket = false;
    this.prev = kind;
    this.prevWord = '';
    this.prevIsOpenParen = false;
    this.prevIsDot = false;
    this.lastEndBefore = end;
  }

  /** Whether a plain `=` (not `==`, `=>`) comes next after `at`, past blanks and comments. */
  private assignmentFollows(at: number): boolean {
    const { text, n } = this;
    let k = at;
    while (k < n) {
      const c = text.charCodeAt(k);
      if (c === 32 || c === 9 || isLineBreak(c)) k++;
      else if (c === 47 && text.charCodeAt(k + 1) === 42) {
        const close = text.indexOf('*/', k + 2);
        if (close < 0) return true; // unclosed: the tokenizer gives up anyway
        k = close + 2;
      } else if (c === 47 && text.charCodeAt(k + 1) === 47) {
        while (k < n && !isLineBreak(text.charCodeAt(k))) k++;
      } else break;
    }
    return text.charCodeAt(k) === 61 && text.charCodeAt(k + 1) !== 61 && text.charCodeAt(k + 1) !== 62;
  }

  private peekOpenParen(): boolean {
    let j = this.i;
    while (j < this.n && (this.text.charCodeAt(j) === 32 || this.text.charCodeAt(j) === 9)) j++;
    return this.text.charCodeAt(j) === 40;
  }

  private stringEnd(start: number, quote: number): number {
    const { text, n } = this;
    this.escaped = false;
    for (let j = start + 1; j < n; j++) {
      const c = text.charCodeAt(j);
      if (c === quote) return j + 1;
      if (c === 92) {
        this.escaped = true;
        j++;
        if (text.charCodeAt(j) === 13 && text.charCodeAt(j + 1) === 10) j++;
      } else if (c === 10 || c === 13) break;
    }
    throw new Unsure('unterminated string');
  }

  /** Reads a template from just after its opening backtick or a substitution's `}`, up to its end or the next `${`. */
  private templatePart(memberName = false): void {
    const { text, n } = this;
    const start = this.i;
    let escaped = false;
    for (let j = start; j < n; j++) {
      const c = text.charCodeAt(j);
      if (c === 92) {
        escaped = true;
        j++;
        continue;
      }
      if (c === 96 || (c === 36 && text.charCodeAt(j + 1) === 123)) {
        if (this.triggerIn(start, j, escaped)) this.current.seed = true;
        if (c === 96) {
          if (memberName) this.addName(start, j); // this[`proc`]
          this.i = j + 1;
          this.finish(this.i, P_VALUE);
        } else {
          this.i = j + 2;
          this.stack.push(B_SUBSTITUTION);
          this.finish(this.i, P_NONE);
        }
        return;
      }
    }
    throw new Unsure('unterminated template');
  }

  private regexEnd(start: number): number {
    const { text, n } = this;
    let inClass = false;
    for (let j = start + 1; j < n; j++) {
      const c = text.charCodeAt(j);
      if (isLineBreak(c)) break;
      if (c === 92) j++;
      else if (c === 91) inClass = true;
      else if (c === 93) inClass = false;
      else if (c === 47 && !inClass) {
        let k = j + 1;
        while (k < n && isIdentPart(text.charCodeAt(k))) k++; // flags
        return k;
      }
    }
    throw new Unsure('unterminated regular expression');
  }
}

/** Below this share of the text blanked, the file is parsed whole: the saving would not pay for the copy. */
const MIN_BLANKED_SHARE = 0.2;

/** Whether the TypeScript parser reads `<` at an expression's start as JSX for this file. */
const jsxFor = (path: string) => !/\.[mc]?ts$/i.test(path);

/**
 * The text to parse instead of `text`: the relevant chunks in place, the rest blanked, or
 * undefined when the whole file is to be parsed (the tokenizer was unsure, or little would be blanked).
 * `isProjectSpecifier` says which specifiers name the project's own modules, as the analyser
 * reads them (relative ones, and bare ones the project's config maps to its files).
 */
export function relevantText(text: string, path: string, minBlankedShare = MIN_BLANKED_SHARE, isProjectSpecifier: (specifier: string) => boolean = isRelative): string | undefined {
  const tokenizer = new Tokenizer(text, jsxFor(path), isProjectSpecifier);
  let chunks: Chunk[];
  try {
    chunks = tokenizer.run();
  } catch (error) {
    if (error instanceof Unsure) return undefined;
    throw error;
  }
  const keep = closure(text, chunks, tokenizer, minBlankedShare > 0 ? text.length * (1 - minBlankedShare) : text.length, /\.[cm]?tsx?$/i.test(path));
  if (!keep || keep.every(Boolean)) return undefined;
  return blankExcept(text, chunks, keep);
}

/** The chunk holding position `at`, or -1 (between chunks: a comment). */
function chunkAt(chunks: Chunk[], at: number): number {
  let low = 0;
  let high = chunks.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const chunk = chunks[middle] as Chunk;
    if (at < chunk.start) high = middle - 1;
    else if (at >= chunk.end) low = middle + 1;
    else return middle;
  }
  return -1;
}

const NAMESPACE_ALIAS = /^import\s+(?:type\s+)?[\w$]+\s*=\s*(?!require\s*\()/;

/** A name as a regular expression: a member named by a string (`this['a-b']`) may hold anything. */
const escapeName = (name: string) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * TypeScript's primitive type names: in a .ts file nearly every chunk names one in an annotation,
 * and following them would keep everything. They are followed only where the file may bind one
 * as a value (`const number = ...`, `{ a: string } = x`, `import { x as string }`, `o.string = `);
 * a name nothing binds is never looked up by the analyser, so it links nothing.
 */
const TYPE_WORDS = new Set(['string', 'number', 'boolean', 'any', 'unknown', 'never', 'object', 'symbol', 'bigint']);
function mayBindTypeWord(text: string, word: string): boolean {
  const binding = new RegExp(
    `(?:\\b(?:const|let|var|using|function|class|import|catch\\s*\\(|assign\\s*\\()\\s*|[,{[]\\s*|\\.\\s*|\\.\\.\\.\\s*)${word}\\b` +
      `|(?<![:|&]\\s*)\\b${word}\\s*=(?![=>])|\\bas\\s+${word}\\s*[,}]|\\b(?:const|let|var)\\s*[{[][^}=]*:\\s*${word}\\b`,
  );
  return binding.test(text);
}

/** Whether a name span of `chunk` starts at `at` (spans are in source order). */
function isNameAt(tokenizer: Tokenizer, chunk: Chunk, at: number): boolean {
  const { spans } = tokenizer;
  let low = chunk.namesFrom;
  let high = chunk.namesTo - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const start = spans[middle * 2] as number;
    if (at < start) high = middle - 1;
    else if (at > start) low = middle + 1;
    else return true;
  }
  return false;
}

/** A character that, before a name, makes it part of a longer word (or a private name's `#`). */
const WORD_BEFORE = /[\w$#]/;
/** Rounds of whole-text searches before the closure switches to an index of the names (see closure). */
const SEARCH_ROUNDS = 4;
/** Names searched for in one round at most: a longer alternation is tried name by name at each position. */
const SEARCH_NAMES = 64;

/** Every name the tokenizer read, to the chunks it was read in (`async` where a chunk calls it too). */
function nameIndex(text: string, chunks: Chunk[], tokenizer: Tokenizer): Map<string, number[]> {
  const index = new Map<string, number[]>();
  const note = (name: string, at: number) => {
    const list = index.get(name);
    if (list === undefined) index.set(name, [at]);
    else if (list[list.length - 1] !== at) list.push(at);
  };
  chunks.forEach((chunk, at) => {
    for (let k = chunk.namesFrom; k < chunk.namesTo; k++) note(text.slice(tokenizer.spans[k * 2], tokenizer.spans[k * 2 + 1]), at);
    if (chunk.asyncIsName) note('async', at);
  });
  return index;
}

/**
 * The chunks to keep. Names are followed a round at a time: the new names of the chunks kept so
 * far are searched for in the whole text at once (a regular expression of them), and every chunk
 * where one is found at a name the tokenizer read is kept (a match in a comment or a string is not).
 * Most files settle in two or three such rounds. One that does not (a long chain of statements each
 * naming the one before, or rounds of hundreds of names) would make this quadratic, so after
 * SEARCH_ROUNDS rounds, or at a round with more than SEARCH_NAMES names, the rest is followed
 * through an index of every name the tokenizer read (name to chunks), built once: linear. The
 * index finds a name only where the tokenizer read exactly that name; the search also where one
 * begins with it (`a` in `this['a-b']`), which keeps more, never less than the analyser needs.
 */
function closure(text: string, chunks: Chunk[], tokenizer: Tokenizer, maxKept: number, typeScript: boolean): boolean[] | undefined {
  const keep = chunks.map(() => false);
  let kept = 0;
  let fresh: number[] = [];
  const add = (index: number) => {
    if (index < 0 || keep[index]) return;
    keep[index] = true;
    kept += (chunks[index] as Chunk).end - (chunks[index] as Chunk).start;
    fresh.push(index);
  };
  for (const at of tokenizer.sourceTriggers) add(chunkAt(chunks, at));
  chunks.forEach((chunk, index) => {
    if (chunk.seed) add(index);
  });
  const followed = new Set<string>();
  /** The names of `fresh` not followed yet (`async` where a chunk calls it), minus type words nothing binds. */
  const newNames = (): string[] => {
    const names: string[] = [];
    for (const index of fresh) {
      const chunk = chunks[index] as Chunk;
      for (let k = chunk.namesFrom; k < chunk.namesTo; k++) {
        const name = text.slice(tokenizer.spans[k * 2], tokenizer.spans[k * 2 + 1]);
        if (name !== '' && !followed.has(name)) {
          followed.add(name);
          if (!(typeScript && TYPE_WORDS.has(name) && !mayBindTypeWord(text, name))) names.push(name);
        }
      }
      if (chunk.asyncIsName && !followed.has('async')) {
        followed.add('async');
        names.push('async');
      }
    }
    fresh = [];
    return names;
  };
  let index: Map<string, number[]> | undefined;
  for (let round = 0; fresh.length > 0 && kept <= maxKept; round++) {
    const names = newNames();
    if (names.length === 0) break;
    if (index === undefined && round < SEARCH_ROUNDS && names.length <= SEARCH_NAMES) {
      // The name's start is tested here, not by a lookbehind in the expression: an expression that
      // starts with one is tried at every position, while one that starts with the names skips to
      // their first characters. A match that does not start a word is passed over one character
      // on, so the positions tried are the same.
      const pattern = new RegExp(`(?:${names.map(escapeName).join('|')})(?![\\w$])`, 'g');
      for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
        if (match.index > 0 && WORD_BEFORE.test(text.charAt(match.index - 1))) {
          pattern.lastIndex = match.index + 1;
          continue;
        }
        const at = chunkAt(chunks, match.index);
        // Only where the tokenizer read a name: not in a comment, a string, or a keyword's place.
        if (at >= 0 && !keep[at] && (isNameAt(tokenizer, chunks[at] as Chunk, match.index) || (match[0] === 'async' && (chunks[at] as Chunk).asyncIsName))) add(at);
      }
    } else {
      index ??= nameIndex(text, chunks, tokenizer);
      for (const name of names) for (const at of index.get(name) ?? []) add(at);
    }
  }
  if (kept > maxKept) return undefined;
  // Kept for what they change about the whole file, not for their names: a chunk holding a name
  // of a kept one is already kept, so these add no data flow (see the header).
  chunks.forEach((chunk, index) => {
    if (chunk.binds) keep[index] = true;
  });
  // `import a = N.b` (a TypeScript namespace alias) is no module syntax: the first chunk that is.
  const firstModule = chunks.findIndex((chunk) => chunk.module && !NAMESPACE_ALIAS.test(text.slice(chunk.start, chunk.end)));
  if (firstModule >= 0 && !chunks.some((chunk, index) => keep[index] && chunk.module)) keep[firstModule] = true;
  return keep;
}

const NOT_LINE_BREAKS = /[^\n\r\u2028\u2029]+/g;
// Three searches for one character each, several times faster than one character class: a text
// without a character beyond Latin-1 does not even look for the last two.
const hasOtherLineBreaks = (text: string) => text.includes('\r') || text.includes('\u2028') || text.includes('\u2029');

/** `text` with every chunk not kept, and everything between chunks, blanked; line breaks and the kept chunks' columns stay. */
function blankExcept(text: string, chunks: Chunk[], keep: boolean[]): string {
  const parts: string[] = [];
  let at = 0; // end of what has been written, in `text`
  let pendingSemicolon = false;
  // Most files break lines with `\n` alone: their gaps' breaks are counted, not matched.
  const onlyNewlines = !hasOtherLineBreaks(text);
  const blank = (from: number, to: number) => {
    if (from >= to) return;
    let breaks: string;
    if (onlyNewlines) {
      let count = 0;
      for (let at = text.indexOf('\n', from); at >= 0 && at < to; at = text.indexOf('\n', at + 1)) count++;
      breaks = '\n'.repeat(count);
    } else breaks = text.slice(from, to).replace(NOT_LINE_BREAKS, '');
    if (breaks === '') {
      parts.push((pendingSemicolon ? ';' : ' ') + ' '.repeat(to - from - 1));
    } else {
      let lastBreak = to - 1;
      while (!isLineBreak(text.charCodeAt(lastBreak))) lastBreak--;
      parts.push(pendingSemicolon ? ';' : '', breaks, ' '.repeat(to - lastBreak - 1));
    }
    pendingSemicolon = false;
  };
  for (let k = 0; k < chunks.length; k++) {
    if (!keep[k]) continue;
    const chunk = chunks[k] as Chunk;
    blank(at, chunk.start);
    if (pendingSemicolon) parts.push(';'); // adjacent kept chunks on one line cannot happen without a `;` between
    pendingSemicolon = false;
    parts.push(text.slice(chunk.start, chunk.end));
    at = chunk.end;
    // A kept statement ended by a line break (no `;`) must not run on into the next kept one.
    pendingSemicolon = !chunk.lastIsSemicolon;
  }
  blank(at, text.length);
  return parts.join('');
}
