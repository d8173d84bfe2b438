// The one seam between `leash run`'s stop sequence and what holds the run: a cgroup (plus the
// descendants of leash that left it) or the process tree below leash, a child subreaper. Each
// answers the same few questions; the stop (signal, grace, kill, the leftovers named, the state
// document) is written once over them in ../supervisor.ts.

/** Called with the pids a pass is about to reach, while they still have their names to read. */
export type PassNames = (pids: readonly number[]) => void;

export interface Containment {
  readonly kind: 'cgroup' | 'tree';
  /** How many live processes the run holds, at the last look. */
  count(): number;
  /** A new phase of the stop (a new signal): every member is to be signalled again. */
  newPhase(): void;
  /** Whether the run holds no live process (the runner's own exit aside, which libuv reports). */
  isEmpty(): boolean;
}
