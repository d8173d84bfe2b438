// Whether a position of source text lies inside a string literal, for the shell prefilter: a lone
// `&` on a line of a multi-line template or triple-quoted string has no quote on its own line.
//
// A forward scan from token to token that resumes where it stopped, so that asking about positions
// in increasing order costs one pass over the text at most. It reads just enough to know where
// strings are: comments, quotes, template substitutions (JS) and regular expression literals,
// these told from a division by the token before the `/`. The code between is skipped by regular
// expressions (native code from the first call): most files it runs on are TypeScript with an
// `A & B` type, and a scan a character at a time made their prefilter several times slower. A
// quote the scan misreads (a regular expression it took for a division) puts it in the wrong state
// until the next line break at worst, since a one-line string cannot cross one: this is a
// prefilter, and the analysers decide.
import type { Language } from './types.js';

const K_OTHER = 0; // a comment or a regular expression: no string
const K_STRING = 1;

/** Code up to the next character that can start a token (and braces, for template substitutions). */
const JS_CODE = /[^'"`/{}]*/y;
const PYTHON_CODE = /[^#'"]*/y;
/** The rest of a one-line string after its opening quote: up to its closing quote or a line break. */
const SINGLE = /(?:[^'\\\n\r]|\\(?:\r\n|[^]))*/y;
const DOUBLE = /(?:[^"\\\n\r]|\\(?:\r\n|[^]))*/y;
/** A template's text up to its closing backtick or the next `${`. */
const TEMPLATE = /(?:[^`\\$]|\\[^]|\$(?!\{))*/y;
/** The rest of a Python triple-quoted string after its opening quotes, closing quotes included when present. */
const TRIPLE_SINGLE = /(?:[^'\\]|\\[^]|'(?!''))*(?:''')?/y;
const TRIPLE_DOUBLE = /(?:[^"\\]|\\[^]|"(?!""))*(?:""")?/y;
/** The rest of a regular expression literal after its `/`: up to its closing `/` or a line break. */
const REGEX_BODY = /(?:[^/\\[\n\r]|\\[^\n\r]|\[(?:[^\]\\\n\r]|\\[^\n\r])*\]?)*/y;

const isWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c > 127;
const isBlank = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;
/** Words after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'instanceof', 'yield', 'await']);

export class StringScan {
  /** The last token read: a position p is inside it when start < p <= end (end is its closing character, or where it stopped). */
  private start = -1;
  private end = -1;
  private kind = K_OTHER;
  /** Where code resumes after that token. */
  private next = 0;
  /** JS: the brace depth inside each open template substitution, innermost last. */
  private readonly substitutions: number[] = [];
  private braces = 0;
  /** JS: the last comment read, [start, end]: a `/` after it is read by the token before it. */
  private commentStart = -1;
  private commentEnd = -1;

  constructor(
    private readonly text: string,
    private readonly language: Language,
  ) {}

  /** Whether `position` (not before the last one asked about) lies inside a string literal. */
  inString(position: number): boolean {
    while (this.end < position && this.next <= position) {
      if (this.language === 'python') this.tokenPython();
      else this.tokenJs();
    }
    return this.kind === K_STRING && this.start < position && position <= this.end;
  }

  private token(start: number, end: number, kind: number, next: number): void {
    this.start = start;
    this.end = end;
    this.kind = kind;
    this.next = next;
  }

  /** Skips with a sticky pattern from `at`; returns where it stopped. */
  private skip(pattern: RegExp, at: number): number {
    pattern.lastIndex = at;
    pattern.test(this.text);
    return pattern.lastIndex;
  }

  private tokenPython(): void {
    const { text } = this;
    const n = text.length;
    const i = this.skip(PYTHON_CODE, this.next);
    if (i >= n) return this.token(n, n, K_OTHER, n + 1);
    const c = text.charCodeAt(i);
    if (c === 35) {
      // # to the end of the line
      const lineEnd = text.indexOf('\n', i);
      const end = lineEnd < 0 ? n : lineEnd;
      return this.token(i, end, K_OTHER, end);
    }
    if (text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === c) {
      const end = this.skip(c === 39 ? TRIPLE_SINGLE : TRIPLE_DOUBLE, i + 3);
      return this.token(i + 2, end - 1, K_STRING, end);
    }
    const end = this.skip(c === 39 ? SINGLE : DOUBLE, i + 1);
    return this.token(i, end, K_STRING, end + 1);
  }

  private tokenJs(): void {
    const { text } = this;
    const n = text.length;
    let i = this.next;
    for (;;) {
      i = this.skip(JS_CODE, i);
      if (i >= n) return this.token(n, n, K_OTHER, n + 1);
      const c = text.charCodeAt(i);
      if (c === 123) {
        if (this.substitutions.length > 0) this.braces++;
        i++;
      } else if (c === 125) {
        if (this.substitutions.length > 0 && this.braces === 0) {
          this.braces = this.substitutions.pop() as number;
          return this.templatePart(i);
        }
        if (this.braces > 0) this.braces--;
        i++;
      } else if (c === 96) return this.templatePart(i);
      else if (c === 39 || c === 34) {
        const end = this.skip(c === 39 ? SINGLE : DOUBLE, i + 1);
        return this.token(i, end, K_STRING, end + 1);
      } else if (text.charCodeAt(i + 1) === 47) {
        // a line comment
        let end = i + 2;
        while (end < n && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++;
        this.commentStart = i;
        this.commentEnd = end - 1;
        return this.token(i, end, K_OTHER, end);
      } else if (text.charCodeAt(i + 1) === 42) {
        const close = text.indexOf('*/', i + 2);
        const end = close < 0 ? n : close + 1;
        this.commentStart = i;
        this.commentEnd = end;
        return this.token(i, end, K_OTHER, end + 1);
      } else if (this.regexMayStart(i)) {
        const end = this.skip(REGEX_BODY, i + 1);
        return this.token(i, end, K_OTHER, end + 1);
      } else i++; // a division
    }
  }

  /** A template's text from its backtick or a substitution's `}` at `open`, to its closing backtick or the next `${`. */
  private templatePart(open: number): void {
    const end = this.skip(TEMPLATE, open + 1);
    if (this.text.charCodeAt(end) === 36) {
      // `${`: code again, inside a substitution
      this.substitutions.push(this.braces);
      this.braces = 0;
      return this.token(open, end, K_STRING, end + 2);
    }
    return this.token(open, end, K_STRING, end + 1);
  }

  /** Whether the `/` at `at` starts a regular expression: it does unless the token before it ends a value. */
  private regexMayStart(at: number): boolean {
    const { text } = this;
    let k = at - 1;
    while (k >= 0 && isBlank(text.charCodeAt(k))) k--;
    if (k >= this.commentStart && k <= this.commentEnd) {
      k = this.commentStart - 1; // the comment right before it: the token before that one
      while (k >= 0 && isBlank(text.charCodeAt(k))) k--;
    }
    if (k < 0) return true;
    const c = text.charCodeAt(k);
    if (isWordChar(c)) {
      let start = k;
      while (start > 0 && isWordChar(text.charCodeAt(start - 1))) start--;
      return BEFORE_REGEX.has(text.slice(start, k + 1));
    }
    // `)`, `]`, a string's or template's end, a regular expression's end: a value; anything else an operator.
    return !(c === 41 || c === 93 || c === 39 || c === 34 || c === 96 || c === 47);
  }
}
