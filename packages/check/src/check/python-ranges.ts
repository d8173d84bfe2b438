// Which parts of a Python file the parser is given: the top-level statements (python-statements.ts)
// that hold a trigger, as tree-sitter ranges. Positions in the tree stay those of the whole file.
import type { BodyLine, Statement } from './python-statements.js';

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

/** A stretch of a statement given to the parser: offsets, and where it starts and ends. */
interface Part {
  start: number;
  end: number;
  startRow: number;
  endRow: number;
  endColumn: number;
}

/**
 * The top-level statements chosen for parsing: those holding at least one offset of interest. A
 * class is given with only its members that hold one (and its header), when it has two members or
 * more and some hold none: a class is most of a large file, and its methods are parsed alone as
 * well as together. A member is a logical line at the body's level with all the lines under it; a
 * decorator belongs to the definition after it.
 */
export class StatementSelection {
  /**
   * The chosen statements (or their parts) as ranges for the parser, in order. Parts that follow
   * one another share a range, as do statements chosen one after the other, with the blank and
   * comment lines between them: the parser reads each range's start several times, so fewer ranges
   * are fewer reads.
   */
  readonly ranges: Range[] = [];
  /** Where each chosen statement starts. */
  readonly starts: number[] = [];
  private readonly chosen: Uint8Array;
  /** The parts kept of a class given in part, by its statement's index. */
  private readonly partsOf = new Map<number, Part[]>();

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
      const parts = membersHolding(statement, offsets, next);
      if (parts) this.partsOf.set(index, parts);
      const whole = [{ start: statement.start, end: statement.end, startRow: statement.startRow, endRow: statement.endRow, endColumn: statement.endColumn }];
      (parts ?? whole).forEach((part, k) => {
        const last = this.ranges[this.ranges.length - 1];
        // The statement before, chosen and given to its end (its comment lines after it with it).
        const follows = k === 0 ? index > 0 && this.chosen[index - 1] === 1 && last?.endIndex === (statements[index - 1] as Statement).end : last?.endIndex === part.start;
        if (last && follows) {
          last.endIndex = part.end;
          last.endPosition = { row: part.endRow, column: part.endColumn };
          return;
        }
        this.ranges.push({
          startIndex: part.start,
          endIndex: part.end,
          startPosition: { row: part.startRow, column: 0 },
          endPosition: { row: part.endRow, column: part.endColumn },
        });
      });
    });
  }

  /** Whether `offset` lies in a statement, or a class's member, left out of the parse (not in a comment between statements). */
  leftOut(offset: number): boolean {
    let low = 0;
    let high = this.statements.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.statements[middle] as Statement).end <= offset) low = middle + 1;
      else high = middle;
    }
    if (low >= this.statements.length || (this.statements[low] as Statement).start > offset) return false;
    if (this.chosen[low] === 0) return true;
    const parts = this.partsOf.get(low);
    if (parts === undefined) return false;
    // The last part starting at or before the offset (parts ascend): a search, not a scan, since a
    // class may keep thousands of members and a file use a watched name thousands of times.
    let first = 0;
    let last = parts.length;
    while (first < last) {
      const middle = (first + last) >>> 1;
      if ((parts[middle] as Part).start <= offset) first = middle + 1;
      else last = middle;
    }
    const part = parts[first - 1];
    return part === undefined || offset >= part.end;
  }
}

/**
 * A class's header and those of its members that hold an offset (from `offsets[from]` on), or
 * undefined where the class is given whole: not a class, fewer than two members, or all or none of
 * its members holding one.
 */
function membersHolding(statement: Statement, offsets: number[], from: number): Part[] | undefined {
  const lines = statement.lines;
  if (!lines || lines.length < 2) return undefined;
  const members: BodyLine[] = [];
  let afterDecorator = false;
  for (const line of lines) {
    if (!afterDecorator) members.push(line);
    afterDecorator = line.decorator;
  }
  if (members.length < 2) return undefined;
  const first = members[0] as BodyLine;
  const parts: Part[] = [{ start: statement.start, end: first.start, startRow: statement.startRow, endRow: first.row, endColumn: 0 }];
  let at = from;
  let kept = 0;
  members.forEach((member, k) => {
    const after = members[k + 1];
    const end = after ? after.start : statement.end;
    while (at < offsets.length && (offsets[at] as number) < member.start) at++;
    if (at === offsets.length || (offsets[at] as number) >= end) return;
    kept++;
    parts.push({ start: member.start, end, startRow: member.row, endRow: after ? after.row : statement.endRow, endColumn: after ? 0 : statement.endColumn });
  });
  return kept === 0 || kept === members.length ? undefined : parts;
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
