// Windows creation flags in Python, shared by the prefilter (checker.ts) and the analyser
// (python-rules.ts), so that both read an integer literal, and its detach bits, the same way.

/** DETACHED_PROCESS | CREATE_NEW_CONSOLE | CREATE_NEW_PROCESS_GROUP | CREATE_BREAKAWAY_FROM_JOB: a new console (as cmd's `start` without /b) leaves the caller's console and its Ctrl-C as a new process group does. */
export const WINDOWS_FLAG_BITS = 0x8 | 0x10 | 0x200 | 0x1000000;

/** The value of a Python integer literal's text (`0x8`, `0o10`, `1_000`, `8L`), or undefined. */
export function pythonInteger(literal: string): number | undefined {
  const text = literal.replace(/_/g, '').toLowerCase().replace(/l$/, '');
  const value = /^0o/.test(text) ? parseInt(text.slice(2), 8) : /^0b/.test(text) ? parseInt(text.slice(2), 2) : Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** Digit-led tokens of an expression's text: every integer literal in it is one. */
const NUMBER_TOKEN = /(?<![\w.])\d\w*/g;

/**
 * `creationflags=VALUE` keyword arguments whose value can hold no detach bit, for the prefilter:
 * names, dotted names, `|` and integer literals without a detach bit, up to the `,` or `)` that ends
 * the argument on the same line (`creationflags=flags`, `creationflags=subprocess.CREATE_NO_WINDOW`).
 * The analyser reports a creation flag only as an integer literal with a detach bit in the value
 * or as a flag's name (DETACHED_PROCESS, ...), which the prefilter still sees: the keyword alone is
 * taken out, the value's names are left. Anything else (a call, a conditional, a line break) keeps it.
 */
const FLAGS_KEYWORD = /\bcreationflags[ \t]*=[ \t]*([\w.][\w.| \t]*?)[ \t]*(?=[,)])/g;

/**
 * `FLAGS = 0x8 | 0x200`, `self.flags |= 0x00000008`: a name (or dotted name) assigned, or or-ed,
 * an expression of names, integers, `|`, `+` and parentheses on one line.
 */
const FLAG_ASSIGNMENT = /^[ \t]*([A-Za-z_][\w.]*)[ \t]*\|?=[ \t]*([\w.|+() \t]+?)[ \t]*(?:#[^\n]*)?$/gm;

/**
 * Names that hold creation flags with a detach bit somewhere in the file (by the line of their
 * first such assignment), read from the text so that the prefilter and the analyser agree, whatever
 * statements are parsed. A flag cleared (`flags &= ~0x8`, `x & ~0x8`) is no such assignment.
 */
export function flagVariables(text: string): Map<string, number> {
  const names = new Map<string, number>();
  if (!text.includes('creationflags')) return names;
  for (const match of text.matchAll(FLAG_ASSIGNMENT)) {
    const [, name, value] = match as unknown as [string, string, string];
    if (names.has(name)) continue;
    for (const [token] of value.matchAll(NUMBER_TOKEN)) {
      const number = pythonInteger(token);
      if (number !== undefined && (number & WINDOWS_FLAG_BITS) !== 0) {
        names.set(name, text.slice(0, match.index).split('\n').length);
        break;
      }
    }
  }
  return names;
}

export function withoutHarmlessFlagKeywords(text: string): string {
  if (!text.includes('creationflags')) return text;
  const variables = flagVariables(text);
  return text.replace(FLAGS_KEYWORD, (keyword, value: string) => {
    for (const name of value.split(/[|\s]+/)) if (variables.has(name)) return keyword;
    for (const [token] of value.matchAll(NUMBER_TOKEN)) {
      const number = pythonInteger(token);
      if (number === undefined || (number & WINDOWS_FLAG_BITS) !== 0) return keyword;
    }
    return value;
  });
}
