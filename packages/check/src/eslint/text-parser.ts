// A stand-in ESLint parser for TypeScript files in projects without typescript-eslint: the rule
// reads the file's text, not ESLint's tree, so an empty program is all it needs. Other rules see
// nothing in such a file; a project that lints TypeScript with them uses typescript-eslint instead.

/** Line count and last line's length, for the empty program's location. */
function extent(code: string): { lines: number; lastColumn: number } {
  const lines = code.split(/\r\n|[\r\n\u2028\u2029]/);
  return { lines: lines.length, lastColumn: (lines[lines.length - 1] ?? '').length };
}

export const textOnlyParser = {
  meta: { name: 'proc-leash-check/text-only' },
  parseForESLint(code: string) {
    const { lines, lastColumn } = extent(code);
    return {
      ast: {
        type: 'Program',
        body: [],
        sourceType: 'module',
        range: [0, code.length],
        loc: { start: { line: 1, column: 0 }, end: { line: lines, column: lastColumn } },
        tokens: [],
        comments: [],
      },
      visitorKeys: { Program: [] },
    };
  },
};
