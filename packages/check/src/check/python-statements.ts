// The top-level statements of a Python file, found by a small tokenizer, so that the parser is
// given only the statements that can matter (python-ranges.ts). Python's own tokenizer decides
// where a statement ends: a newline outside brackets and strings, not escaped by a backslash. A
// top-level statement starts on a line whose first character is code at column 0; a line that is
// indented, blank or only a comment continues the statement before it, as do `else`, `elif`,
// `except` and `finally`, and a decorator belongs to the definition it decorates.
//
// The tokenizer knows strings with every prefix (raw, bytes, f-strings with their nested
// replacement fields, triple quotes), comments, brackets and backslash continuations. Whatever
// it is not sure of (an unterminated string or bracket, a form feed or a stray backslash at a
// line start, a byte-order mark, a lone carriage return, a t-string, ...) makes it answer
// `undefined`: the caller then parses the whole file, so an odd file costs time, never findings.

/** One top-level statement: offsets (UTF-16, as JavaScript strings and tree-sitter count) and rows. */
export interface Statement {
  start: number;
  /** Just past the statement's last line (its newline included): trailing comments are left out. */
  end: number;
  startRow: number;
  endRow: number;
  /** Column of `end` on `endRow`: 0 unless the file ends without a newline. */
  endColumn: number;
  /**
   * For a class (`class` at column 0, decorated or not): its body's logical lines, in order, each
   * where its line starts, with its indentation's width (python-ranges.ts parses only the members
   * that matter). Undefined for other statements, and for a class whose body is indented by tabs.
   */
  lines?: BodyLine[];
}

/** A logical line in a class's body. */
export interface BodyLine {
  /** Offset of the line's first character (its indentation's). */
  start: number;
  row: number;
  indent: number;
  /** Whether it is a decorator (`@…`): it belongs to the definition after it. */
  decorator: boolean;
}

/** Whether `text` holds a tab between `from` and `to` (an indentation: a few characters). */
function hasTab(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (text.charCodeAt(k) === TAB) return true;
  return false;
}

/** `class` as a statement's keyword. */
const CLASS_KEYWORD = /class(?=[ \t(:\\])/y;

/** Raised inside the tokenizer where it is unsure; caught at the top, never seen by callers. */
class Unsure extends Error {}

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;
const SPACE = 32;
const TAB = 9;
const HASH = 35;
const BACKSLASH = 92;
const AT = 64;
const COLON = 58;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const SINGLE_QUOTE = 39;
const DOUBLE_QUOTE = 34;

// Runs of characters each scanner can skip at once: a native regular expression skips them far
// faster than a loop over characters, which matters most before the JIT has warmed up.
const PLAIN_CODE = /[^\n\r#\\'"()[\]{}]+/y;
const PLAIN_FIELD = /[^\n\r#\\'"()[\]{}:]+/y;
const PLAIN_FORMAT_SPEC = /[^\n\r\\'"{}]+/y;
const INDENTATION = /[ \t]+/y;
/** String content up to a character that can end it or needs a look, by quote and formatting. */
const PLAIN_STRING: Record<number, RegExp> = { [SINGLE_QUOTE]: /[^'\\\n\r]+/y, [DOUBLE_QUOTE]: /[^"\\\n\r]+/y };
const PLAIN_FSTRING: Record<number, RegExp> = { [SINGLE_QUOTE]: /[^'\\\n\r{}]+/y, [DOUBLE_QUOTE]: /[^"\\\n\r{}]+/y };
const CLOSER: Record<number, number> = { 41: 40, 93: 91, 125: 123 };
/** CPython's tokenizer allows 150 nested f-strings (MAXFSTRINGLEVEL); deeper is unsure. */
const MAX_FIELD_DEPTH = 150;

/** Header words that continue the compound statement above them at column 0. */
const CONTINUATION = /(?:else|elif|except|finally)(?![\w\u0080-\uffff])/y;
/** String prefixes Python knows (any case); `f` makes a formatted string. */
const STRING_PREFIX = /^(?:[rbu]|br|rb|f|fr|rf)$/i;
const TEMPLATE_PREFIX = /^(?:t|tr|rt)$/i;
const isWordCharacter = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
/** A byte-order mark, a NUL, a replacement character (undecodable bytes) or a lone CR: parse whole. */
const oddText = (text: string): boolean =>
  text.charCodeAt(0) === 0xfeff || text.includes('\0') || text.includes('\uFFFD') || (text.includes('\r') && /\r(?!\n)/.test(text));

export function topLevelStatements(text: string): Statement[] | undefined {
  if (oddText(text)) return undefined;
  try {
    return new StatementScanner(text).scan();
  } catch (error) {
    if (error instanceof Unsure) return undefined;
    throw error;
  }
}

class StatementScanner {
  private i = 0;
  private row = 0;
  /** Offset of the current physical line's first character. */
  private lineStart = 0;
  private readonly statements: Statement[] = [];
  /** Replacement fields open around the offset: f-strings nested in f-strings, or in format specs. */
  private fieldDepth = 0;

  constructor(private readonly text: string) {}

  scan(): Statement[] {
    const text = this.text;
    const length = text.length;
    let current: Statement | undefined;
    let afterDecorator = false;
    while (this.i < length) {
      const c = text.charCodeAt(this.i);
      if (c === NEWLINE || c === CARRIAGE_RETURN) {
        this.skipNewline();
        continue;
      }
      if (c === HASH) {
        this.skipComment();
        continue;
      }
      let continues: boolean;
      if (c === SPACE || c === TAB) {
        this.skip(INDENTATION);
        const next = text.charCodeAt(this.i);
        if (this.i >= length || next === NEWLINE || next === CARRIAGE_RETURN || next === HASH) continue; // blank or comment line
        if (!current) throw new Unsure(); // indented code before any statement
        continues = true;
        const lines = current.lines;
        if (lines) {
          if (hasTab(text, this.lineStart, this.i)) current.lines = undefined;
          else {
            // Only the body's own level is kept; a line less indented than the first is odd: no members.
            const indent = this.i - this.lineStart;
            const level = lines[0]?.indent ?? indent;
            // `else:`, `elif …:`, `except …:`, `finally:` continue the compound statement above them.
            CONTINUATION.lastIndex = this.i;
            if (indent === level && !(lines.length > 0 && CONTINUATION.test(text))) lines.push({ start: this.lineStart, row: this.row, indent, decorator: next === AT });
            else if (indent < level) current.lines = undefined;
          }
        }
      } else if (c < SPACE || c === BACKSLASH) {
        throw new Unsure(); // a form feed, another control character, or a line that starts by continuing
      } else {
        CONTINUATION.lastIndex = this.i;
        const decorated = afterDecorator;
        continues = afterDecorator || CONTINUATION.test(text);
        if (continues && !current) throw new Unsure();
        afterDecorator = c === AT;
        CLASS_KEYWORD.lastIndex = this.i;
        // The class a decorator (or none) leads: its body's lines are noted from here on.
        if (current && decorated && !afterDecorator) current.lines = CLASS_KEYWORD.test(text) ? [] : undefined;
      }
      if (!continues) {
        current = { start: this.i, end: this.i, startRow: this.row, endRow: this.row, endColumn: 0 };
        CLASS_KEYWORD.lastIndex = this.i;
        if (CLASS_KEYWORD.test(text)) current.lines = [];
        this.statements.push(current);
      }
      this.scanLogicalLine();
      const statement = current as Statement;
      statement.end = this.i;
      statement.endRow = this.row;
      statement.endColumn = this.i - this.lineStart;
    }
    return this.statements;
  }

  /** Moves past the run of characters `pattern` (sticky) matches at the current offset, if any. */
  private skip(pattern: RegExp): void {
    pattern.lastIndex = this.i;
    if (pattern.test(this.text)) this.i = pattern.lastIndex;
  }

  private skipNewline(): void {
    if (this.text.charCodeAt(this.i) === CARRIAGE_RETURN) this.i++; // always before \n: see oddText
    this.i++;
    this.row++;
    this.lineStart = this.i;
  }

  private skipComment(): void {
    const end = this.text.indexOf('\n', this.i);
    this.i = end < 0 ? this.text.length : end;
    if (this.text.charCodeAt(this.i - 1) === CARRIAGE_RETURN) this.i--;
  }

  /** Scans code up to and past the newline that ends the logical line (or to the end of the text). */
  private scanLogicalLine(): void {
    const text = this.text;
    const length = text.length;
    const brackets: number[] = [];
    while (this.i < length) {
      this.skip(PLAIN_CODE);
      if (this.i >= length) break;
      const c = text.charCodeAt(this.i);
      if (c === NEWLINE || c === CARRIAGE_RETURN) {
        this.skipNewline();
        if (brackets.length === 0) return;
      } else if (c === HASH) {
        this.skipComment();
      } else if (c === BACKSLASH) {
        this.skipContinuation();
      } else if (c === SINGLE_QUOTE || c === DOUBLE_QUOTE) {
        this.scanString();
      } else {
        this.bracket(c, brackets);
      }
    }
    if (brackets.length > 0) throw new Unsure();
  }

  /** A backslash outside strings must end its line, joining the next one to it. */
  private skipContinuation(): void {
    this.i++;
    const c = this.text.charCodeAt(this.i);
    if (c !== NEWLINE && c !== CARRIAGE_RETURN) throw new Unsure();
    this.skipNewline();
  }

  private bracket(c: number, brackets: number[]): void {
    const opener = CLOSER[c];
    if (opener === undefined) brackets.push(c);
    else if (brackets.pop() !== opener) throw new Unsure();
    this.i++;
  }

  /** Scans a string literal from its opening quote to past its closing one. */
  private scanString(): void {
    const text = this.text;
    const quote = text.charCodeAt(this.i);
    const formatted = this.prefixIsFormatted();
    const triple = text.charCodeAt(this.i + 1) === quote && text.charCodeAt(this.i + 2) === quote;
    this.i += triple ? 3 : 1;
    const plain = (formatted ? PLAIN_FSTRING : PLAIN_STRING)[quote] as RegExp;
    const length = text.length;
    while (this.i < length) {
      this.skip(plain);
      if (this.i >= length) break;
      const c = text.charCodeAt(this.i);
      if (c === quote) {
        if (!triple) {
          this.i++;
          return;
        }
        if (text.charCodeAt(this.i + 1) === quote && text.charCodeAt(this.i + 2) === quote) {
          this.i += 3;
          return;
        }
        this.i++;
      } else if (c === BACKSLASH) {
        const next = text.charCodeAt(this.i + 1);
        // In an f-string a backslash does not escape a brace, and `\N{...}` holds braces of its own.
        if (formatted && (next === OPEN_BRACE || next === CLOSE_BRACE || next === 78 /* N */)) throw new Unsure();
        this.i++;
        if (next === NEWLINE || next === CARRIAGE_RETURN) this.skipNewline();
        else this.i++;
      } else if (c === NEWLINE || c === CARRIAGE_RETURN) {
        if (!triple) throw new Unsure(); // unterminated
        this.skipNewline();
      } else if (formatted && c === OPEN_BRACE) {
        if (text.charCodeAt(this.i + 1) === OPEN_BRACE) this.i += 2;
        else {
          this.i++;
          this.scanReplacementField(triple);
        }
      } else if (formatted && c === CLOSE_BRACE) {
        if (text.charCodeAt(this.i + 1) !== CLOSE_BRACE) throw new Unsure();
        this.i += 2;
      } else {
        this.i++;
      }
    }
    throw new Unsure();
  }

  /**
   * As in Python's tokenizer, the whole word just before the quote is the string's prefix if it is
   * one (`rb`, `F`, ...); any other word is a name of its own (`return"x"`), and the string has no
   * prefix. A t-string (Python 3.14) or a word in another script is left to the parser.
   */
  private prefixIsFormatted(): boolean {
    const text = this.text;
    let start = this.i;
    while (start > 0 && isWordCharacter(text.charCodeAt(start - 1))) start--;
    if (start > 0 && text.charCodeAt(start - 1) >= 128) throw new Unsure();
    if (start === this.i) return false;
    const word = text.slice(start, this.i);
    if (TEMPLATE_PREFIX.test(word)) throw new Unsure();
    return STRING_PREFIX.test(word) && (word.includes('f') || word.includes('F'));
  }

  /** Scans an f-string's `{expression!conversion:format}` from past its `{` to past its `}`. */
  private scanReplacementField(triple: boolean): void {
    // Each nested f-string or format spec is a call deeper (they are rare and shallow): past
    // Python's own limit the file is no Python anyway, and is left to the parser, not the stack.
    if (++this.fieldDepth > MAX_FIELD_DEPTH) throw new Unsure();
    const text = this.text;
    const length = text.length;
    const brackets: number[] = [];
    while (this.i < length) {
      this.skip(PLAIN_FIELD);
      if (this.i >= length) break;
      const c = text.charCodeAt(this.i);
      if (c === CLOSE_BRACE && brackets.length === 0) {
        this.i++;
        this.fieldDepth--;
        return;
      }
      if (c === COLON && brackets.length === 0) {
        this.i++;
        this.scanFormatSpec();
        this.fieldDepth--;
        return;
      }
      if (c === SINGLE_QUOTE || c === DOUBLE_QUOTE) this.scanString();
      else if (c === NEWLINE || c === CARRIAGE_RETURN) {
        if (!triple) throw new Unsure();
        this.skipNewline();
      } else if (c === HASH || c === BACKSLASH) throw new Unsure();
      else if (c === COLON) this.i++; // inside brackets: a slice, a lambda, a dict
      else this.bracket(c, brackets);
    }
    throw new Unsure();
  }

  /** A format spec is text with nested replacement fields, up to past the field's closing `}`. */
  private scanFormatSpec(): void {
    const text = this.text;
    const length = text.length;
    while (this.i < length) {
      this.skip(PLAIN_FORMAT_SPEC);
      if (this.i >= length) break;
      const c = text.charCodeAt(this.i);
      if (c === CLOSE_BRACE) {
        this.i++;
        return;
      }
      if (c === OPEN_BRACE) {
        this.i++;
        this.scanReplacementField(false);
      } else if (c === NEWLINE || c === CARRIAGE_RETURN || c === BACKSLASH || c === SINGLE_QUOTE || c === DOUBLE_QUOTE) {
        throw new Unsure();
      } else {
        this.i++;
      }
    }
    throw new Unsure();
  }
}
