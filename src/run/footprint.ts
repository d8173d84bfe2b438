// leash run lives as long as the command it wraps, one per wrapped server: its memory counts as
// many times as a client has servers. Node's command line cannot be chosen (the client starts
// `leash run` by name), so it sets, on itself, the V8 flags that trade speed it does not need for
// memory (measured with a 40-process tree, four of each side by side: 10.8 -> 8.9 MB private).
// Both are read where V8 decides (how far to grow the heap, whether to optimize a function),
// not baked in at start-up, so setting them now takes effect. Only flags this V8 knows are
// given: an unknown one would be reported on stderr by V8 itself, outside safe output.
import { setFlagsFromString } from 'node:v8';

/** Smaller heap growth steps and code; no optimizing compiler (leash run's JS is a walk every few seconds). */
const FLAGS = ['--optimize-for-size', '--no-turbofan'];
/**
 * The V8s known to have both flags under these names: Node 20 (11.3) to Node 24 (13.6). A later
 * V8 may rename one, and its "unrecognized flag" line would go to a stderr that may be a full
 * pipe, so a V8 outside this range is left as it is until it is checked.
 */
const V8_MAJORS = { min: 11, max: 13 };

export function lightenFootprint(): void {
  const major = Number(process.versions.v8.split('.')[0]);
  if (!(major >= V8_MAJORS.min && major <= V8_MAJORS.max)) return;
  for (const flag of FLAGS) setFlagsFromString(flag);
}
