// Counts the listings of /proc this process makes: each is the start of a look through the whole
// process table (src/sys/procfs.ts listPids). A wait that should settle by a probe and one stat
// read must make none. fs.readdirSync is wrapped, and the ES bindings of node:fs re-synced, so
// that the library's `import { readdirSync }` sees the wrapper.
import { createRequire, syncBuiltinESMExports } from 'node:module';
import type * as Fs from 'node:fs';

const fs = createRequire(import.meta.url)('node:fs') as typeof Fs;

/** Starts counting; `stop()` restores fs.readdirSync and returns the count. */
export function countProcListings(): { count: () => number; stop: () => number } {
  const original = fs.readdirSync;
  let listings = 0;
  const wrapper = function (this: unknown, ...args: Parameters<typeof original>) {
    if (String(args[0]) === '/proc') listings += 1;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  fs.readdirSync = wrapper;
  syncBuiltinESMExports();
  return {
    count: () => listings,
    stop: () => {
      fs.readdirSync = original;
      syncBuiltinESMExports();
      return listings;
    },
  };
}
