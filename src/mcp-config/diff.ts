// A unified diff of two texts, for --dry-run. Config edits are few and close together: the
// common head and tail are cut first, and the middle is compared line by line.

function lines(text: string): string[] {
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

type Line = { op: ' ' | '-' | '+'; text: string };

function middleDiff(a: string[], b: string[]): Line[] {
  // Longest common subsequence table over the (small) changed middle.
  const table: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) table[i]![j] = a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
  }
  const out: Line[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ op: ' ', text: a[i++]! });
      j++;
    } else if (i < a.length && (j === b.length || table[i + 1]![j]! >= table[i]![j + 1]!)) {
      out.push({ op: '-', text: a[i++]! });
    } else {
      out.push({ op: '+', text: b[j++]! });
    }
  }
  return out;
}

/** The unified diff (3 lines of context) from `before` to `after`; empty when they are equal. */
export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  if (before === after) return '';
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const all: Line[] = [
    ...a.slice(0, head).map((text) => ({ op: ' ' as const, text })),
    ...middleDiff(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...a.slice(a.length - tail).map((text) => ({ op: ' ' as const, text })),
  ];
  let out = `--- ${path}\n+++ ${path}\n`;
  let index = 0;
  while (index < all.length) {
    if (all[index]!.op === ' ') {
      index++;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` lines after the last change
    // that lies within 2*context lines of the previous one.
    const start = Math.max(0, index - context);
    let end = index;
    let lastChange = index;
    while (end < all.length && end - lastChange <= 2 * context) {
      if (all[end]!.op !== ' ') lastChange = end;
      end++;
    }
    end = Math.min(all.length, lastChange + context + 1);
    const hunk = all.slice(start, end);
    const aStart = all.slice(0, start).filter((line) => line.op !== '+').length;
    const bStart = all.slice(0, start).filter((line) => line.op !== '-').length;
    const aCount = hunk.filter((line) => line.op !== '+').length;
    const bCount = hunk.filter((line) => line.op !== '-').length;
    out += `@@ -${aStart + (aCount ? 1 : 0)},${aCount} +${bStart + (bCount ? 1 : 0)},${bCount} @@\n`;
    for (const line of hunk) out += `${line.op}${line.text}\n`;
    index = end;
  }
  return out;
}
