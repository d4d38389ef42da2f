/** Slots filled at most this share before the table doubles. */
const MAX_LOAD = 0.7;
const MIN_CAPACITY = 1024;

/**
 * A model's feature counts in memory: open addressing with linear probing over typed arrays
 * (13 bytes a slot), so a verdict reads a few hundred counts in microseconds instead of one
 * SQLite seek each. A count that falls to zero keeps its slot (no deletion: a training taken
 * back leaves it, and it reads as unseen).
 */
export class FeatureTable {
  private keys: Int32Array;
  private used: Uint8Array;
  private hams: Int32Array;
  private junks: Int32Array;
  private filled = 0;

  constructor(expected = 0) {
    let capacity = MIN_CAPACITY;
    while (capacity * MAX_LOAD < expected) capacity *= 2;
    this.keys = new Int32Array(capacity);
    this.used = new Uint8Array(capacity);
    this.hams = new Int32Array(capacity);
    this.junks = new Int32Array(capacity);
  }

  /** Bytes of memory held. */
  get bytes(): number {
    return this.keys.length * 13;
  }

  get size(): number {
    return this.filled;
  }

  /** The counts of a feature: `into` gets [ham, junk]; false when the table never had it. */
  read(feature: number, into: [number, number]): boolean {
    const slot = this.find(feature);
    if (!this.used[slot]) return false;
    into[0] = this.hams[slot];
    into[1] = this.junks[slot];
    return true;
  }

  /** Adds to a feature's counts (negative deltas take back; counts stay at 0 or more). */
  add(feature: number, ham: number, junk: number): void {
    let slot = this.find(feature);
    if (!this.used[slot]) {
      if ((this.filled + 1) / this.keys.length > MAX_LOAD) {
        this.grow();
        slot = this.find(feature);
      }
      this.used[slot] = 1;
      this.keys[slot] = feature;
      this.filled += 1;
    }
    this.hams[slot] = Math.max(0, this.hams[slot] + ham);
    this.junks[slot] = Math.max(0, this.junks[slot] + junk);
  }

  /** The slot holding the feature, or the empty slot where it would go. */
  private find(feature: number): number {
    const mask = this.keys.length - 1;
    // Fibonacci hashing spreads the FNV hashes' low bits over the table.
    let slot = Math.imul(feature, 0x9e3779b1) >>> 0;
    slot &= mask;
    while (this.used[slot] && this.keys[slot] !== feature) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const { keys, used, hams, junks } = this;
    const capacity = keys.length * 2;
    this.keys = new Int32Array(capacity);
    this.used = new Uint8Array(capacity);
    this.hams = new Int32Array(capacity);
    this.junks = new Int32Array(capacity);
    this.filled = 0;
    for (let slot = 0; slot < keys.length; slot++) if (used[slot]) this.add(keys[slot], hams[slot], junks[slot]);
  }
}
