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

const SHELL_WORDS = /nohup|setsid|disown|start\s+(?:"[^"]*"\s+)?\/b|Start-Process/i;
/** A lone `&` (not `&&`, `&>`, `>&`) after something that is not a blank. */
const LONE_AMPERSAND = /(?<=[^&>|<\s][ \t]*)&(?![&>])/g;

/**
 * Cheap test of raw source text: can any string in it background a process? A lone `&` counts
 * when a quote opens earlier on its line (it is likely inside a string), or when it ends a line
 * or a string (`server &` in a multi-line template). A bitwise `a & b`, a TypeScript `A & B` or
 * "this & that" in prose is none of these, and such files were most of those parsed for nothing.
 */
export function shellMayMatter(text: string): boolean {
  if (SHELL_WORDS.test(text)) return true;
  if (!text.includes('&')) return false;
  LONE_AMPERSAND.lastIndex = 0;
  for (let match = LONE_AMPERSAND.exec(text); match; match = LONE_AMPERSAND.exec(text)) {
    const at = match.index;
    const lineStart = text.lastIndexOf('\n', at) + 1;
    let lineEnd = text.indexOf('\n', at);
    if (lineEnd < 0) lineEnd = text.length;
    const after = text.slice(at + 1, lineEnd);
    // Ends the line or a string, or goes on with a word inside a string opened before it.
    if (/^[ \t]*(?:\r?$|["'`;)])/.test(after)) return true;
    if (/^\s+\w/.test(after) && /["'`]/.test(text.slice(lineStart, at))) return true;
  }
  return false;
}
