// `leash reap`: list (and with --kill, end) the process trees other clients leaked.
import { loadNative, nativeLoadFailure } from '../sys/native.js';
import { hasProcfs } from '../sys/procfs.js';
import { guardStandardOutput, writeData, writeDiagnostic } from '../sys/safe-output.js';
import { readUnixSockets } from '../sys/unix-sockets.js';
import { REAP_HELP, REAP_USAGE, parseReapArgs } from './args.js';
import { formatJson, formatTable } from './format.js';
import { scanLeakedTrees, type LeakedTree } from './scan.js';
import { callerNow, endTrees } from './terminate.js';
import { formatContainers, scanOrphanedContainers, stopOrphanedContainers } from './containers.js';

/** Exit codes: documented in docs/reap.md. */
export const EXIT_NONE_FOUND = 0;
export const EXIT_FOUND = 1;
export const EXIT_NOT_ALL_ENDED = 2;
export const EXIT_USAGE = 64;
export const EXIT_UNSUPPORTED = 69;

export async function reapMain(argv: string[]): Promise<number> {
  // `leash reap | head` and the like: a reader that leaves early never ends reap nor changes its
  // exit code (2 after --kill must stay 2).
  guardStandardOutput();
  const parsed = parseReapArgs(argv);
  if (typeof parsed === 'string') {
    writeDiagnostic(`leash reap: ${parsed}\n${REAP_USAGE}\n`);
    return EXIT_USAGE;
  }
  if (parsed.help) {
    writeData(REAP_HELP);
    return 0;
  }
  if (process.platform !== 'linux' || !hasProcfs()) {
    writeDiagnostic(`leash reap: needs Linux procfs (/proc/<pid>/fd); ${process.platform} is not covered\n`);
    return EXIT_UNSUPPORTED;
  }
  // Native calls give the socket peers (sock_diag) and pidfd signals; without them, stdio
  // sockets go unjudged and signals fall back to a start-time check right before kill(2).
  let sockets: ReturnType<typeof readUnixSockets>;
  if (await loadNative()) {
    try {
      sockets = readUnixSockets();
    } catch (error) {
      // Refused where netlink's sock_diag is not offered (gVisor, a seccomp filter): pipes are
      // still judged; a stdio socket then never counts as cut off.
      writeDiagnostic(`leash reap: warning: sock_diag unavailable (${(error as Error).message}); stdio sockets are not judged\n`);
    }
  } else {
    writeDiagnostic(
      `leash reap: warning: native calls unavailable (${nativeLoadFailure()}); stdio sockets are not judged, and a pipe only where every process can be read\n`,
    );
  }
  const scan = scanLeakedTrees(sockets, undefined, parsed.includeOwnSession);
  // Containers whose leash run is gone, through the CLIs on PATH (--match reads name and image).
  const containers = (await scanOrphanedContainers()).orphaned.filter((c) => parsed.match === undefined || parsed.match.test(`${c.name} ${c.image}`));
  const containersStopped = parsed.kill && containers.length > 0 ? await stopOrphanedContainers(containers, parsed.graceMs) : undefined;
  const wanted = (tree: LeakedTree) =>
    (parsed.match === undefined || parsed.match.test(tree.command)) &&
    (parsed.olderThanSeconds === undefined || tree.ageSeconds >= parsed.olderThanSeconds) &&
    (parsed.minMemoryKb === undefined || tree.rssKb >= parsed.minMemoryKb);
  // Unknown trees may still be fed by a process reap cannot see: ended only when asked by name.
  const unknown = scan.unknown.filter(wanted);
  const trees = parsed.includeUnknown ? [...scan.trees.filter(wanted), ...unknown] : scan.trees.filter(wanted);
  const outcomes = parsed.kill && trees.length > 0 ? await endTrees(trees, parsed.graceMs, callerNow(!parsed.includeOwnSession)) : undefined;
  // Set apart, not forgotten: the user is told they exist and how to see them.
  const ownSession = { leaked: scan.ownSession.leaked.filter(wanted).length, unknown: scan.ownSession.unknown.filter(wanted).length };
  const unlisted = parsed.includeUnknown ? [] : unknown;
  if (parsed.json) {
    writeData(
      formatJson(trees, {
        unknown: unlisted,
        blindSpot: scan.blindSpot,
        uninspected: scan.uninspected,
        nestedPidNamespace: scan.nestedPidNamespace,
        outcomes,
        ownSession,
        containers: containers.map((c) => ({ ...c, ...(containersStopped === undefined ? {} : { stopped: containersStopped }) })),
      }),
    );
  } else {
    writeData(formatTable(trees, outcomes));
    if (unlisted.length > 0) writeData(`\n${formatTable(unlisted, undefined, 'unknown')}`);
    if (containers.length > 0) writeData(`\n${formatContainers(containers, containersStopped)}`);
  }
  if (ownSession.leaked + ownSession.unknown > 0) {
    const counted = [
      ownSession.leaked > 0 ? `${ownSession.leaked} leaked tree${ownSession.leaked === 1 ? '' : 's'}` : '',
      ownSession.unknown > 0 ? `${ownSession.unknown} unknown tree${ownSession.unknown === 1 ? '' : 's'}` : '',
    ].filter(Boolean).join(' and ');
    writeDiagnostic(
      `leash reap: ${counted} in this terminal's own session not shown${parsed.kill ? ' nor ended' : ''} ` +
        `(a CLI that crashed in this terminal leaves them there): --include-own-session includes them\n`,
    );
  }
  if (!parsed.json) {
    if (scan.blindSpot !== undefined && (unknown.length > 0 || trees.some((tree) => tree.unproven.length > 0))) {
      writeDiagnostic(
        `leash reap: pipe ends held by some processes cannot be seen here: ${scan.blindSpot}. ` +
          `A tree with no holder in sight but such a blind spot is unknown, not leaked` +
          `${parsed.includeUnknown ? ' (--include-unknown: listed and treated as leaked)' : '; --kill leaves it alone (--include-unknown to end it too)'}` +
          `${process.getuid?.() === 0 ? '' : '. Root sees other users\' processes'}\n`,
      );
    }
  }
  if (trees.length === 0 && containers.length === 0) return EXIT_NONE_FOUND;
  if ((outcomes && outcomes.some((outcome) => outcome.result !== 'ended')) || containersStopped === false) return EXIT_NOT_ALL_ENDED;
  return EXIT_FOUND;
}
