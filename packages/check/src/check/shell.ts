// Literal shell command text that starts a process in the background, where it outlives whoever
// ran the shell. Used by both language analysers on string literals handed to a spawn or shell call.

const BACKGROUNDING: Array<[RegExp, string]> = [
  [/(?:^|[\s;&|(`'"])nohup(?:\s|$)/, 'nohup'],
  [/(?:^|[\s;&|(`'"])setsid(?:\s|$)/, 'setsid'],
  [/(?:^|[\s;&|(])disown(?:\s|$|;)/, 'disown'],
  [/(?:^|[\s;&|("'])start\s+(?:"[^"]*"\s+)?\/b(?:\s|$)/i, 'start /b'],
  [/(?:^|[\s;&|("'])Start-Process(?:\s|$)/i, 'Start-Process'],
];

// A lone `&` (not `&&`, `&>`, `>&`, `2>&1`) with a blank or the end of a command after it, so
// `a=1&b=2` in a URL does not count but `server &` and `server & echo started` do. Something other
// than a separator must come before it: a `&` that starts a command is PowerShell's call operator
// (`& 'C:\tool.exe' x`), not backgrounding.
const BACKGROUND_AMPERSAND = /(?<=[^\s;&|({'"]\s*)(?<![&>|<\\])&(?![&>])(?=\s|$|[;)])/g;
/** A `wait` command: the shell waits for its background jobs before it exits. */
const WAIT = /(?:^|[\s;&|(])wait(?=\s|$|[;)"'])/;

/** The backgrounding construct in `command`, or undefined. */
export function backgroundingIn(command: string): string | undefined {
  for (const [pattern, name] of BACKGROUNDING) {
    if (pattern.test(command)) return name;
  }
  // `a & b & wait`: jobs the same command line waits for end before it does.
  let last = -1;
  for (const match of command.matchAll(BACKGROUND_AMPERSAND)) last = match.index;
  if (last >= 0 && !WAIT.test(command.slice(last + 1))) return 'a background `&`';
  return undefined;
}

// Two tests, cheaper than one case-insensitive alternation over every file's text: the three
// words are matched with their case by BACKGROUNDING, only `start /b` and Start-Process without.
const SHELL_WORDS = /nohup|setsid|disown/;
const SHELL_WORDS_ANY_CASE = /start(?:\s+(?:"[^"]*"\s+)?\/b|-process)/i;
/**
 * Cheap test of raw source text: can any string in it background a process? A lone `&` counts
 * when a quote opens earlier on its line (it is likely inside a string), or when it ends a line
 * or a string (`server &` in a multi-line template). A bitwise `a & b`, a TypeScript `A & B` or
 * "this & that" in prose is none of these, and such files were most of those parsed for nothing.
 */
export function shellMayMatter(text: string): boolean {
  if (SHELL_WORDS.test(text) || SHELL_WORDS_ANY_CASE.test(text)) return true;
  // A scan by indexOf, not a regular expression: a pattern that starts with a lookbehind is tried
  // at every position of the text, and `&&` is in nearly every file.
  for (let at = text.indexOf('&'); at >= 0; at = text.indexOf('&', at + 1)) {
    const next = text.charCodeAt(at + 1);
    if (next === AMPERSAND || next === GREATER) {
      at++; // `&&`, `&>`: the pair is skipped whole
      continue;
    }
    let before = at - 1;
    while (before >= 0 && (text.charCodeAt(before) === SPACE || text.charCodeAt(before) === TAB)) before--;
    if (before < 0 || NOT_BEFORE.includes(text.charAt(before))) continue; // starts a command, or `>&`, `|&`
    let lineEnd = text.indexOf('\n', at);
    if (lineEnd < 0) lineEnd = text.length;
    const after = text.slice(at + 1, lineEnd);
    // Ends the line or a string, or goes on with a word inside a string opened before it.
    if (/^[ \t]*(?:\r?$|["'`;)])/.test(after)) return true;
    if (/^\s+\w/.test(after) && /["'`]/.test(text.slice(text.lastIndexOf('\n', at) + 1, at))) return true;
  }
  return false;
}

const AMPERSAND = 0x26;
const GREATER = 0x3e;
const SPACE = 0x20;
const TAB = 0x09;
/** Characters that cannot come right before a background `&`: another operator, or a line break. */
const NOT_BEFORE = '&>|<\n\r';
