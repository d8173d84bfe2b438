// What the JSON and TOML readers hand to the rest: each server of a config file, with the exact
// text spans of its command and args, so that every change is a splice that leaves the rest of
// the file (comments, key order, indentation) byte for byte as it was.

/** A string value in the file: where it is, what it says, and how it is written there. */
export interface Token {
  start: number;
  end: number;
  value: string;
  raw: string;
}

/** Replace `length` characters at `offset` by `content`. */
export interface Edit {
  offset: number;
  length: number;
  content: string;
}

export type ServerKind = 'stdio' | 'remote' | 'unsupported';

/** One server entry of a config file. */
export interface ServerSite {
  name: string;
  /** Where it sits in the file, for people: `mcpServers.everything`, `projects./x.mcpServers.db`. */
  where: string;
  kind: ServerKind;
  /** Why it is remote or unsupported (`type "http"`, `url`, `no command`). */
  reason?: string;
  command?: Token;
  /** open: just after `[`; close: just after `]`. */
  args?: { items: Token[]; open: number; close: number };
  /** The edit that adds an args list (text given) to a server that has none. */
  addArgs?: (arrayText: string) => Edit;
  /** Where such an added list starts (for undo to find it again). */
  argsAddedAt?: number;
  /** The edit that removes the args key whole (undo of a server that had none), where the format allows. */
  argsRemoval?: Edit;
}

/** A parsed config file: its servers and how the format writes a string. */
export interface ParsedConfig {
  sites: ServerSite[];
  quote(value: string): string;
  /** Values not to show (env, headers): masked in diffs. */
  secrets: { start: number; end: number }[];
}

/** A file that does not parse: the first problem, 1-based. */
export class ConfigSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

/** 1-based line and column of `offset` in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** `text` with `edits` applied (they must not overlap). */
export function applyEdits(text: string, edits: readonly Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.offset - a.offset);
  let result = text;
  for (const edit of sorted) result = result.slice(0, edit.offset) + edit.content + result.slice(edit.offset + edit.length);
  return result;
}

/** A byte-order mark stays in the file but is parsed as a space, so that offsets stay exact. */
export function withoutByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? ` ${text.slice(1)}` : text;
}
