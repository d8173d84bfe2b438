// A cursor that walks a Map's keys a few at a time, wrapping around: a set pruned a little at every
// registration costs O(1) per registration (O(n) over n of them), where pruning it all each time
// cost O(n) per registration (O(n²) over n). Map iterators are live: deleted keys are skipped,
// added ones are reached in their turn.
export class RoundRobin<K> {
  private cursor: Iterator<K> | undefined;

  constructor(private readonly map: ReadonlyMap<K, unknown>) {}

  /** The next `count` keys (fewer if the map is smaller), each at most once per call. */
  take(count: number): K[] {
    const taken: K[] = [];
    const limit = Math.min(count, this.map.size);
    while (taken.length < limit) {
      let next = this.cursor?.next();
      if (!next || next.done) {
        this.cursor = this.map.keys();
        next = this.cursor.next();
        if (next.done) break;
      }
      taken.push(next.value);
    }
    return taken;
  }
}
