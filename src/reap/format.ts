// What `leash reap` prints: a table for people, one JSON document for scripts.
import { REASON_TEXT, UNPROVEN_TEXT, type LeakedTree } from './scan.js';
import type { TreeOutcome } from './terminate.js';

export function formatSize(kb: number): string {
  if (kb < 1024) return `${Math.round(kb)} kB`;
  if (kb < 1024 * 1024) return `${(kb / 1024).toFixed(1)} MB`;
  return `${(kb / 1024 / 1024).toFixed(1)} GB`;
}

export function formatAge(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(seconds / 86400)}d${String(Math.floor((seconds % 86400) / 3600)).padStart(2, '0')}h`;
}

/**
 * A command line as a terminal may show it: control characters (C0, DEL, C1), line and paragraph
 * separators and bidirectional overrides become '?', as ps shows them. A leaked process's argv is
 * anyone's text: raw, a newline forges a row and an escape sequence rewrites the terminal.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, '?');
}

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

function pad(cells: string[], widths: number[]): string {
  return cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
}

function reasonText(tree: LeakedTree): string {
  return [...tree.reasons.map((reason) => REASON_TEXT[reason]), ...tree.unproven.map((reason) => UNPROVEN_TEXT[reason])].join('; ');
}

/** `kind` names what the rows are in the summary line: 'leaked' or 'unknown'. */
export function formatTable(trees: readonly LeakedTree[], outcomes?: readonly TreeOutcome[], kind = 'leaked'): string {
  const total = trees.reduce((sum, tree) => sum + tree.rssKb, 0);
  const summary = `${trees.length} ${kind} tree${trees.length === 1 ? '' : 's'}, ${formatSize(total)}`;
  if (trees.length === 0) return `${summary}\n`;
  const byPid = new Map(outcomes?.map((outcome) => [outcome.pid, outcome]));
  const header = ['PID', 'AGE', 'PARENT', 'PROCS', 'RSS', 'REASON', ...(outcomes ? ['RESULT'] : []), 'COMMAND'];
  const rows = trees.map((tree) => [
    String(tree.pid),
    formatAge(tree.ageSeconds),
    `${tree.parent.pid} ${clip(printable(tree.parent.command.split(' ')[0]!.split('/').pop()!), 16)}`,
    String(tree.members.length),
    formatSize(tree.rssKb),
    reasonText(tree),
    ...(outcomes ? [byPid.get(tree.pid)?.result ?? '-'] : []),
    clip(printable(tree.command), 100),
  ]);
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i]!.length)));
  return [pad(header, widths), ...rows.map((row) => pad(row, widths)), summary].join('\n') + '\n';
}

export function formatJson(
  trees: readonly LeakedTree[],
  extra: {
    unknown: readonly LeakedTree[];
    blindSpot: string | undefined;
    uninspected: number;
    nestedPidNamespace: boolean;
    outcomes?: readonly TreeOutcome[];
    /** Trees not listed because they are in the caller's own session (0 and 0 with --include-own-session). */
    ownSession?: { leaked: number; unknown: number };
    /** Containers carrying a leash run label whose run is gone (src/reap/containers.ts). */
    containers?: readonly object[];
  },
): string {
  const byPid = new Map(extra.outcomes?.map((outcome) => [outcome.pid, outcome]));
  const treeJson = (tree: LeakedTree) => ({
    pid: tree.pid,
    startTime: tree.startTime,
    command: tree.command,
    ageSeconds: tree.ageSeconds,
    parent: tree.parent,
    reasons: tree.reasons,
    unproven: tree.unproven,
    rssBytes: tree.rssKb * 1024,
    processes: tree.members.map((member) => ({
      pid: member.pid,
      startTime: member.startTime,
      command: member.command,
      rssBytes: member.rssKb * 1024,
    })),
  });
  return `${JSON.stringify(
    {
      trees: trees.map((tree) => ({ ...treeJson(tree), ...(extra.outcomes ? { kill: byPid.get(tree.pid) ?? null } : {}) })),
      total: { trees: trees.length, rssBytes: trees.reduce((sum, tree) => sum + tree.rssKb, 0) * 1024 },
      unknown: extra.unknown.map(treeJson),
      blindSpot: extra.blindSpot ?? null,
      uninspected: extra.uninspected,
      nestedPidNamespace: extra.nestedPidNamespace,
      notShownOwnSession: extra.ownSession ?? { leaked: 0, unknown: 0 },
      containers: extra.containers ?? [],
    },
    null,
    2,
  )}\n`;
}
