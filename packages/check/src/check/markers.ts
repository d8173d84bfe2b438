// Exemption markers: MARKER_TEXT, a dash and a reason, in a comment.
//
// Found by text rather than from the parse trees, so both languages share one implementation and
// a file that fails to parse still has its markers read. The cost is that a marker inside a string
// literal that looks like a comment also counts; that is rare and errs towards fewer findings only
// where someone wrote the marker text on purpose.

export const MARKER_TEXT = 'detached-spawn: ok';

// A comment opener (`#`, `//`, `/*`, or the `*` that continues a block comment) before the marker.
const MARKER_IN_COMMENT = new RegExp(String.raw`(?:#|\/\/|\/\*|^\s*\*)[^\n]*?${MARKER_TEXT}(.*)$`);
// The reason: a dash (an em dash, an en dash or hyphens) followed by some non-blank text.
const REASON = /^\s*(?:—|–|-+)\s*(\S.*?)\s*(?:\*\/\s*)?$/;

export interface Marker {
  line: number;
  column: number;
  /** Empty when the marker has no reason; such a marker exempts nothing. */
  reason: string;
}

export function findMarkers(text: string): Marker[] {
  if (!text.includes(MARKER_TEXT)) return [];
  const markers: Marker[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (!line.includes(MARKER_TEXT)) continue;
    const match = MARKER_IN_COMMENT.exec(line);
    if (!match) continue;
    const reason = REASON.exec(match[1] ?? '')?.[1] ?? '';
    markers.push({ line: i + 1, column: line.indexOf(MARKER_TEXT) + 1, reason: reason.replace(/\*\/$/, '').trim() });
  }
  return markers;
}
