/** Where the full-text index stood when a count was taken (SearchIndexReader.position). */
export interface IndexPosition {
  /** SQLite's data_version on the reading connection: moves with every commit another connection makes. */
  version: number;
  /** The last write the index logged (index_writes), 0 before the first. */
  seq: number;
  /** The highest row id in the index: no entry above it. */
  high: number;
}

/** An exact count and the index it was taken of. */
export interface Counted extends IndexPosition {
  total: number;
}

/**
 * Exact match counts of the full-text index, kept with the index position they were taken at.
 *
 * Counting a word found in most messages walks its whole doclist (tens of ms in a folder of a
 * million messages, however small the page: docs/contributing/benchmarks.md, bench:inbox), and a
 * client that pages through a search, or polls one, asks the same count again and again. A count
 * whose index has not changed since (the same data_version) is given as it is; otherwise `count`
 * gets the earlier one, which it may bring forward when only entries above its `high` were
 * written since (new mail), and a total is never older than the index it is given with.
 */
export class MatchCounts {
  private readonly counts = new Map<string, Counted>();

  /** `capacity` bounds the memory: the least recently used count goes first. */
  constructor(private readonly capacity = 256) {}

  /** The count of `match` in the index at `at`; `count` takes it, given any earlier count of the same match. */
  get(match: string, at: IndexPosition, count: (earlier: Counted | undefined) => number): number {
    const known = this.counts.get(match);
    // A Map iterates in insertion order: set again, the count becomes the most recent.
    this.counts.delete(match);
    const total = known?.version === at.version ? known.total : count(known);
    this.counts.set(match, { ...at, total });
    if (this.counts.size > this.capacity) this.counts.delete(this.counts.keys().next().value as string);
    return total;
  }
}
