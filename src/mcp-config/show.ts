// What reaches the terminal from a config file: server names, commands and paths come from files
// anyone may have written (a cloned repository's .mcp.json), so no control character is printed
// raw (an ESC sets colours and titles, a newline forges a line), dotted names stay unambiguous,
// and the values of `env` and `headers` (API keys) are masked in diffs.
import type { Edit } from './model.js';

// C0 and C1 controls, DEL, line/paragraph separators and the bidirectional overrides.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** `text` with every control character written as an escape (`\e` shown as `\u001b`). */
export function shown(text: string): string {
  return text.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

/** A key path for people and for leash's records: `mcpServers.db`, `projects["/home/a/x"].mcpServers.db`. */
export function whereOf(keys: readonly string[]): string {
  let out = '';
  for (const key of keys) out += PLAIN_KEY.test(key) ? `${out === '' ? '' : '.'}${key}` : `[${shown(JSON.stringify(key))}]`;
  return out;
}

/** The text with each secret span replaced by a mark, for a diff that must not show API keys. */
export function masked(text: string, secrets: readonly { start: number; end: number }[]): string {
  const edits: Edit[] = secrets.map(({ start, end }) => ({ offset: start, length: end - start, content: '"<hidden>"' }));
  let result = text;
  for (const edit of [...edits].sort((a, b) => b.offset - a.offset)) result = result.slice(0, edit.offset) + edit.content + result.slice(edit.offset + edit.length);
  return result;
}
