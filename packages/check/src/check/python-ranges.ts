// Which parts of a Python file the parser is given: the top-level statements (python-statements.ts)
// that hold a trigger, as tree-sitter ranges. Positions in the tree stay those of the whole file.
import type { Statement } from './python-statements.js';

interface Point {
  row: number;
  column: number;
}
/** tree-sitter's Range: offsets and columns in UTF-16 code units, rows counted by `\n`. */
export interface Range {
  startIndex: number;
  endIndex: number;
  startPosition: Point;
  endPosition: Point;
}

/** The top-level statements chosen for parsing: those holding at least one offset of interest. */
export class StatementSelection {
  /**
   * The chosen statements as ranges for the parser, in order. Statements chosen one after the
   * other share a range, with the blank and comment lines between them: the parser reads each
   * range's start several times, so fewer ranges are fewer reads.
   */
  readonly ranges: Range[] = [];
  /** Where each chosen statement starts. */
  readonly starts: number[] = [];
  private readonly chosen: Uint8Array;

  /** `offsets` ascending. */
  constructor(
    private readonly statements: Statement[],
    offsets: number[],
  ) {
    this.chosen = new Uint8Array(statements.length);
    let next = 0;
    statements.forEach((statement, index) => {
      while (next < offsets.length && (offsets[next] as number) < statement.start) next++;
      if (next === offsets.length || (offsets[next] as number) >= statement.end) return;
      this.chosen[index] = 1;
      this.starts.push(statement.start);
      const last = this.ranges[this.ranges.length - 1];
      if (last && index > 0 && this.chosen[index - 1] === 1) {
        last.endIndex = statement.end;
        last.endPosition = { row: statement.endRow, column: statement.endColumn };
        return;
      }
      this.ranges.push({
        startIndex: statement.start,
        endIndex: statement.end,
        startPosition: { row: statement.startRow, column: 0 },
        endPosition: { row: statement.endRow, column: statement.endColumn },
      });
    });
  }

  /** Whether `offset` lies in a statement left out of the parse (not in a comment between statements). */
  leftOut(offset: number): boolean {
    let low = 0;
    let high = this.statements.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.statements[middle] as Statement).end <= offset) low = middle + 1;
      else high = middle;
    }
    return low < this.statements.length && (this.statements[low] as Statement).start <= offset && this.chosen[low] === 0;
  }
}

/** The most text handed to the parser at a time: its runtime copies it into a 10 KB buffer. */
const MOST_READ = 5000;

/**
 * The parser's input: text from `index` to the end of the range holding it. Handing it the whole
 * rest of the file, as it does for a string, copies up to 5 000 characters, one at a time in
 * JavaScript, at every jump to the next range: as much copying as parsing the whole file.
 */
export function readerWithin(text: string, ranges: Range[]): (index: number) => string {
  let hint = 0;
  return (index) => {
    while (hint > 0 && (ranges[hint] as Range).startIndex > index) hint--;
    while (hint < ranges.length - 1 && (ranges[hint] as Range).endIndex <= index) hint++;
    const range = ranges[hint] as Range;
    const end = range.startIndex <= index && index < range.endIndex ? range.endIndex : index + 1;
    return text.slice(index, Math.min(end, index + MOST_READ));
  };
}

/**
 * An import statement at the start of a line: `from MODULE import NAMES` or `import NAMES`. An
 * unclosed `(` takes the rest of the text (generous, and linear: a scan to the end per such line
 * was quadratic).
 */
const IMPORT_LINE = /^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b[ \t]*(\([^)]*\)?|[^\n]*)|import\b([^\n]*))/gm;
const NAME = /[A-Za-z_]\w*/g;
const ALIASED_MODULE = /([\w.]+)[ \t]+as[ \t]+([A-Za-z_]\w*)/g;

/**
 * Local names that imports probably bind to a watched module or to a name in one (`import
 * subprocess as sp`, `from os import system`): their uses can matter wherever they are, so the
 * statements holding them are parsed too. A guess read from the text, generous where unsure; the
 * analysis checks afterwards that every name it did bind had all its uses parsed.
 */
export function guessBoundNames(text: string, watchedModules: ReadonlySet<string>): Set<string> {
  const names = new Set<string>();
  IMPORT_LINE.lastIndex = 0;
  for (let match = IMPORT_LINE.exec(text); match; match = IMPORT_LINE.exec(text)) {
    const [, module, fromNames, importNames] = match;
    if (module !== undefined) {
      if (!watchedModules.has(module.split('.')[0] as string)) continue;
      for (const name of (fromNames as string).replace(/#[^\n]*/g, '').match(NAME) ?? []) if (name !== 'as') names.add(name);
    } else {
      for (const [, name, alias] of (importNames as string).matchAll(ALIASED_MODULE)) {
        if (watchedModules.has((name as string).split('.')[0] as string)) names.add(alias as string);
      }
    }
  }
  return names;
}
