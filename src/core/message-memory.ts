/**
 * Memory for large received messages, reused from one to the next. Such a message's memory is
 * shared with the parse worker (src/workers/worker-bytes.ts), and a shared buffer
 * given up is freed only once both threads' collectors have let it go, which they do late
 * (V8 does not count shared memory toward starting a collection; the parse worker's heap
 * seldom fills): 16 APPENDs of 24 MB left 560 MB of such buffers allocated. So buffers are
 * kept while mail arrives, and each can hold any message: a buffer is `capacity` bytes, the
 * largest message, and costs only the pages a message has written (pages never written are
 * not resident). The buffers of a burst are then about what the budget lets be held at once.
 */
export class MessageMemory {
  private kept: SharedArrayBuffer[] = [];
  /** Bytes of each buffer that some message has written: its resident pages. */
  private readonly written = new WeakMap<SharedArrayBuffer, number>();

  /** `capacity`: the largest message and the room before it. */
  constructor(readonly capacity: number) {}

  /** Buffers kept for the next message. */
  get keptCount(): number {
    return this.kept.length;
  }

  /**
   * A buffer of `bytes` bytes: a kept one whose written pages already hold them (the smallest
   * such), else the one with the most written, else a new one. A message larger than the
   * capacity gets a buffer of its own, not kept.
   */
  take(bytes: number): Buffer {
    if (bytes > this.capacity) return Buffer.from(new SharedArrayBuffer(bytes));
    let best = -1;
    for (let index = 0; index < this.kept.length; index += 1) if (best === -1 || this.suitsBetter(this.kept[index], this.kept[best], bytes)) best = index;
    const buffer = best === -1 ? new SharedArrayBuffer(this.capacity) : this.kept.splice(best, 1)[0];
    this.written.set(buffer, Math.max(this.writtenOf(buffer), bytes));
    return Buffer.from(buffer, 0, bytes);
  }

  /** Back for the next message; nobody may read or write `buffer` after this. */
  give(buffer: Buffer): void {
    const memory = buffer.buffer as SharedArrayBuffer;
    if (memory.byteLength === this.capacity) this.kept.push(memory);
  }

  /** Once quiet: the kept buffers go, each freed when both threads' collectors have let it go. */
  forget(): void {
    this.kept = [];
  }

  private writtenOf(buffer: SharedArrayBuffer): number {
    return this.written.get(buffer) ?? 0;
  }

  /** Whether `candidate` suits a message of `bytes` better than `current`: no new page written, else the fewest. */
  private suitsBetter(candidate: SharedArrayBuffer, current: SharedArrayBuffer, bytes: number): boolean {
    const [a, b] = [this.writtenOf(candidate), this.writtenOf(current)];
    if (a >= bytes !== b >= bytes) return a >= bytes;
    return a >= bytes ? a < b : a > b;
  }
}
