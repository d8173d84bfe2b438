// Whether a position of source text lies inside a string literal, for the shell prefilter: a lone
// `&` on a line of a multi-line template or triple-quoted string has no quote on its own line.
//
// A forward scan that resumes where it stopped, so that asking about positions in increasing order
// costs one pass over the text at most. It reads just enough to know where strings are: comments,
// quotes, template substitutions (JS) and regular expression literals, these by the token before
// the `/`. A quote the scan misreads (a regular expression it took for a division) puts it in the
// wrong state until the next line break at worst, since a one-line string cannot cross one: this
// is a prefilter, and the analysers decide.
import type { Language } from './types.js';

const S_CODE = 0;
const S_LINE_COMMENT = 1;
const S_BLOCK_COMMENT = 2;
const S_STRING = 3; // one-line: ends at its quote, or (invalid code) at a line break
const S_TEMPLATE = 4; // JS template text
const S_TRIPLE = 5; // Python triple-quoted
const S_REGEX = 6;

const isWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c > 127;
/** Words after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'instanceof', 'yield', 'await']);

export class StringScan {
  private at = 0;
  private state = S_CODE;
  private quote = 0;
  /** JS: brace depth inside each open template substitution, innermost last. */
  private readonly substitutions: number[] = [];
  private braces = 0;
  /** JS: whether a `/` here divides (the last token ended a value). */
  private afterValue = false;
  private inClass = false;

  constructor(
    private readonly text: string,
    private readonly language: Language,
  ) {}

  /** Whether `position` (not before the last one asked about) lies inside a string literal. */
  inString(position: number): boolean {
    if (this.language === 'python') this.scanPython(position);
    else this.scanJs(position);
    return this.state === S_STRING || this.state === S_TEMPLATE || this.state === S_TRIPLE;
  }

  private scanPython(to: number): void {
    const { text } = this;
    let i = this.at;
    let state = this.state;
    while (i < to) {
      const c = text.charCodeAt(i);
      if (state === S_CODE) {
        if (c === 35) state = S_LINE_COMMENT;
        else if (c === 39 || c === 34) {
          this.quote = c;
          if (text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === c) {
            state = S_TRIPLE;
            i += 2;
          } else state = S_STRING;
        }
      } else if (state === S_LINE_COMMENT) {
        if (c === 10 || c === 13) state = S_CODE;
      } else if (c === 92) i += text.charCodeAt(i + 1) === 13 && text.charCodeAt(i + 2) === 10 ? 2 : 1; // an escape (a CRLF continues the line)
      else if (state === S_STRING) {
        if (c === this.quote || c === 10 || c === 13) state = S_CODE;
      } else if (c === this.quote && text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === c) {
        state = S_CODE;
        i += 2;
      }
      i++;
    }
    this.at = Math.max(i, this.at);
    this.state = state;
  }

  private scanJs(to: number): void {
    const { text } = this;
    let i = this.at;
    while (i < to) {
      const c = text.charCodeAt(i);
      switch (this.state) {
        case S_CODE:
          i = this.codeJs(i, c);
          continue;
        case S_LINE_COMMENT:
          if (c === 10 || c === 13 || c === 0x2028 || c === 0x2029) this.state = S_CODE;
          break;
        case S_BLOCK_COMMENT:
          if (c === 42 && text.charCodeAt(i + 1) === 47) {
            this.state = S_CODE;
            i++;
          }
          break;
        case S_STRING:
          if (c === 92) i += text.charCodeAt(i + 1) === 13 && text.charCodeAt(i + 2) === 10 ? 2 : 1;
          else if (c === this.quote || c === 10 || c === 13) {
            this.state = S_CODE;
            this.afterValue = true;
          }
          break;
        case S_TEMPLATE:
          if (c === 92) i++;
          else if (c === 96) {
            this.state = S_CODE;
            this.afterValue = true;
          } else if (c === 36 && text.charCodeAt(i + 1) === 123) {
            this.substitutions.push(this.braces);
            this.braces = 0;
            this.state = S_CODE;
            this.afterValue = false;
            i++;
          }
          break;
        case S_REGEX:
          if (c === 92) i++;
          else if (c === 10 || c === 13) this.state = S_CODE; // not a regular expression after all
          else if (c === 91) this.inClass = true;
          else if (c === 93) this.inClass = false;
          else if (c === 47 && !this.inClass) {
            this.state = S_CODE;
            this.afterValue = true;
          }
          break;
      }
      i++;
    }
    this.at = Math.max(i, this.at);
  }

  /** One step in code at `i`: returns where to go on. */
  private codeJs(i: number, c: number): number {
    const { text } = this;
    if (c === 32 || c === 9 || c === 10 || c === 13) return i + 1;
    if (isWordChar(c)) {
      let j = i + 1;
      while (j < text.length && isWordChar(text.charCodeAt(j))) j++;
      this.afterValue = !BEFORE_REGEX.has(text.slice(i, j));
      return j;
    }
    if (c === 39 || c === 34) {
      this.quote = c;
      this.state = S_STRING;
    } else if (c === 96) this.state = S_TEMPLATE;
    else if (c === 47) {
      const next = text.charCodeAt(i + 1);
      if (next === 47) this.state = S_LINE_COMMENT;
      else if (next === 42) {
        this.state = S_BLOCK_COMMENT;
        return i + 2;
      } else if (!this.afterValue) {
        this.state = S_REGEX;
        this.inClass = false;
      } else this.afterValue = false;
    } else if (c === 123) {
      this.braces++;
      this.afterValue = false;
    } else if (c === 125) {
      if (this.braces === 0 && this.substitutions.length > 0) {
        this.braces = this.substitutions.pop() as number;
        this.state = S_TEMPLATE;
      } else {
        this.braces = Math.max(0, this.braces - 1);
        this.afterValue = false; // a block's end more often than an object's: a `/` after it starts a regular expression
      }
    } else this.afterValue = c === 41 || c === 93;
    return i + 1;
  }
}
