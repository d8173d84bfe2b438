// --die-with-parent, the client's side: a stdio server's client is gone when the last writer of
// the server's stdin is gone, whoever stands between (npm exec, npx, uvx, sh -c): that is also
// how the MCP specification's stdio shutdown begins. leash shares its stdin with the command and
// never reads it; it only watches the writer side (src/sys/writer-watch.ts).
import { describeInput, hasWatchableWriter, unwatchableInput, watchForNoWriter, type WriterWatch } from '../sys/writer-watch.js';

const STDIN = 0;

/**
 * Starts watching stdin's writers: `onClientGone` once none is left. Where stdin is not a pipe or
 * a socket (a terminal, /dev/null, a file) nothing can be watched: that is said once, and the
 * parent watch alone stands.
 */
export function watchClientInput(log: (line: string) => void, onClientGone: () => void): WriterWatch | undefined {
  const kind = describeInput(STDIN);
  if (!hasWatchableWriter(kind)) {
    log(`note: --die-with-parent: ${unwatchableInput(kind)}; only leash's parent is watched`);
    return undefined;
  }
  return watchForNoWriter(STDIN, onClientGone, (why) =>
    log(`warning: --die-with-parent: stdin's writers cannot be watched (${why}); only leash's parent is watched`),
  );
}
