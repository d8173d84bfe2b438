// Windows creation flags in Python, shared by the prefilter (checker.ts) and the analyser
// (python-rules.ts), so that both read an integer literal, and its detach bits, the same way.

/** DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_BREAKAWAY_FROM_JOB */
export const WINDOWS_FLAG_BITS = 0x8 | 0x200 | 0x1000000;

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

export function withoutHarmlessFlagKeywords(text: string): string {
  if (!text.includes('creationflags')) return text;
  return text.replace(FLAGS_KEYWORD, (keyword, value: string) => {
    for (const [token] of value.matchAll(NUMBER_TOKEN)) {
      const number = pythonInteger(token);
      if (number === undefined || (number & WINDOWS_FLAG_BITS) !== 0) return keyword;
    }
    return value;
  });
}
