/**
 * Exact match counts of the full-text index, kept while the index stays as it was.
 *
 * Counting a word found in most messages walks its whole doclist (some 90 ms in a folder of a
 * million messages, however small the page), and a client that pages through a search, or
 * polls one, asks the same count again and again. A count is kept under the index's
 * version (SQLite's data_version of the reading connection, which moves with every commit
 * any other connection makes to the file) and dropped, with every other, once that moves:
 * a total is never older than the index it is given with.
 */
export class MatchCounts {
  private version: number | null = null;
  private readonly counts = new Map<string, number>();

  /** `capacity` bounds the memory: the least recently used count goes first. */
  constructor(private readonly capacity = 256) {}

  /** The count of `match` in the index at `version`, from `count` unless already known. */
  get(match: string, version: number, count: () => number): number {
    if (version !== this.version) {
      this.counts.clear();
      this.version = version;
    }
    const known = this.counts.get(match);
    // A Map iterates in insertion order: set again, the count becomes the most recent.
    this.counts.delete(match);
    const total = known ?? count();
    this.counts.set(match, total);
    if (this.counts.size > this.capacity) this.counts.delete(this.counts.keys().next().value as string);
    return total;
  }
}
