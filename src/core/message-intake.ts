import type { BodyBudget } from './body-budget.js';
import { AppError } from './errors.js';
import { MessageMemory } from './message-memory.js';

/**
 * Received mail on its way in, for the MX, submission and IMAP APPEND: every message's bytes
 * are held under one budget (`smtp.maxBufferedMessageBytes`), from the first byte read until
 * the message is stored and answered. A large message, or one that arrives while the budget
 * is spent, goes to a file of the spool (`smtp.maxSpooledMessageBytes` at most) as it arrives,
 * and comes back into memory in its turn: the sender waits for its answer instead of the
 * process growing with every connection (docs/operators/inbound.md, "Large messages").
 */

/** A spool file (src/store/message-spool.ts): written in order, read back whole, then removed. */
export interface SpoolFile {
  append(chunk: Buffer): Promise<void>;
  /** The whole file into `target` from `offset`. */
  readInto(target: Buffer, offset: number): Promise<void>;
  /** Closes and deletes the file; safe to call twice. */
  remove(): Promise<void>;
}

export interface Spool {
  create(): Promise<SpoolFile>;
}

export interface IntakeLimits {
  /** The largest message any listener takes (`smtp.maxMessageBytes`, `imap.maxAppendBytes`). */
  maxMessageBytes: number;
  /**
   * A message over this size goes to the spool whatever the budget: read back into one buffer
   * of its exact size, it never is a list of chunks and their copy at once.
   */
  spoolAboveBytes: number;
  /** `smtp.maxSpooledMessageBytes`: bytes in the spool at once; a message that would pass it is refused. */
  maxSpooledBytes: number;
}

/** Room a caller may ask for before a message (ReceivedMessage.load) within a reused buffer. */
const MAX_ROOM = 64 * 1024;

/** Default of IntakeLimits.spoolAboveBytes. */
export const SPOOL_ABOVE_BYTES = 1024 * 1024;

/** The spool is full (or cannot be written): SMTP answers 452 4.3.1, IMAP NO [LIMIT]; the client tries again later. */
export class IntakeFull extends AppError {
  constructor(reason: string) {
    super('unavailable', `too much mail is arriving at once (${reason}); try again later`, { retryAfterSeconds: 60 });
  }
}

/** A received message, whole; hold it until it is stored and answered, then release it. */
export interface ReceivedMessage {
  readonly size: number;
  /**
   * The message in memory, with `room` free bytes before it for fields to go on top. A spooled
   * message waits for its turn in the budget first, and comes in memory the threads share (the
   * parse worker reads it without a copy, ./message-memory.ts). Call once.
   */
  load(room?: number): Promise<Buffer>;
  /** Gives its bytes back to the budget and removes its spool file; safe to call twice, and without load. */
  release(): void;
}

export class MessageIntake {
  private spooled = 0;
  /** Buffers of spooled messages, reused (./message-memory.ts). */
  readonly memory: MessageMemory;

  constructor(
    readonly budget: BodyBudget,
    private readonly spool: Spool,
    readonly limits: IntakeLimits,
  ) {
    this.memory = new MessageMemory(limits.maxMessageBytes + MAX_ROOM);
  }

  /** Bytes in the spool now. */
  get spooledBytes(): number {
    return this.spooled;
  }

  /**
   * Starts receiving one message. `announcedBytes`: its size, when told before the bytes (an
   * IMAP literal); its room is set aside at once, and IntakeFull is thrown here when there is none.
   */
  open(announcedBytes?: number): MessageSink {
    return new MessageSink(this, announcedBytes);
  }

  /** Spool room for `bytes`; false when the spool would pass its limit. */
  reserveSpool(bytes: number): boolean {
    if (this.spooled + bytes > this.limits.maxSpooledBytes) return false;
    this.spooled += bytes;
    return true;
  }

  freeSpool(bytes: number): void {
    this.spooled = Math.max(0, this.spooled - bytes);
  }

  createFile(): Promise<SpoolFile> {
    return this.spool.create();
  }
}

/**
 * One message as it arrives. `write` takes chunks in order (it never throws; a failure shows at
 * `end`); while `queuedBytes` is above 0 the caller waits for `drain()` before reading more.
 */
export class MessageSink implements ReceivedMessage {
  private size_ = 0;
  private chunks: Buffer[] = [];
  /** Budget bytes this message holds. */
  private memoryHeld = 0;
  /** Spool bytes set aside for it. */
  private spoolHeld = 0;
  private file: SpoolFile | null = null;
  private fileBytes = 0;
  /** Once a chunk went the spool's way, every later one does, in order. */
  private spilling = false;
  private queued = 0;
  private pending: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  private released = false;
  /** The reused buffer a spooled message was read into (MessageMemory), given back at release. */
  private loaded: Buffer | null = null;

  constructor(
    private readonly intake: MessageIntake,
    announcedBytes?: number,
  ) {
    if (announcedBytes === undefined) return;
    if (announcedBytes <= intake.limits.spoolAboveBytes && intake.budget.tryTake(announcedBytes)) {
      this.memoryHeld = announcedBytes;
      return;
    }
    if (!intake.reserveSpool(announcedBytes)) throw new IntakeFull('the spool is full');
    this.spoolHeld = announcedBytes;
    this.spilling = true;
  }

  get size(): number {
    return this.size_;
  }

  get queuedBytes(): number {
    return this.queued;
  }

  write(chunk: Buffer): void {
    if (this.failure || this.released) return;
    this.size_ += chunk.length;
    if (!this.spilling && this.inMemory(chunk.length)) {
      this.chunks.push(chunk);
      return;
    }
    this.spilling = true;
    this.queued += chunk.length;
    this.pending = this.pending.then(() => this.toFile(chunk));
  }

  drain(): Promise<void> {
    return this.pending;
  }

  /** The message is whole; rejects (IntakeFull) when it could not be kept, having given everything back. */
  async end(): Promise<ReceivedMessage> {
    await this.pending;
    if (this.failure) {
      this.release();
      throw this.failure;
    }
    return this;
  }

  async load(room = 0): Promise<Buffer> {
    if (this.released) throw new Error('the message was released before it was loaded');
    // A small message in a buffer of its own, as any: the thread gets a copy, and the collector counts it.
    const target = this.file ? await this.loadFile(room) : Buffer.allocUnsafe(room + this.size_);
    if (!this.file) {
      let at = room;
      for (const chunk of this.chunks) at += chunk.copy(target, at);
      this.chunks = [];
    }
    return target.subarray(room);
  }

  /** Waits for the budget, then reads the file back and removes it. */
  private async loadFile(room: number): Promise<Buffer> {
    const bytes = room + this.size_;
    await this.intake.budget.take(bytes);
    this.memoryHeld = bytes;
    const file = this.file;
    if (this.released || !file) throw new Error('the message was released before it was loaded');
    this.loaded = this.intake.memory.take(bytes);
    await file.readInto(this.loaded, room);
    await this.dropFile();
    return this.loaded;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.chunks = [];
    this.intake.budget.give(this.memoryHeld);
    this.memoryHeld = 0;
    if (this.loaded) this.intake.memory.give(this.loaded);
    this.loaded = null;
    void this.dropFile();
  }

  /** Held in memory: within what was announced, or taken from the budget as it comes (small messages only). */
  private inMemory(bytes: number): boolean {
    if (this.memoryHeld >= this.size_) return true;
    if (this.size_ > this.intake.limits.spoolAboveBytes || !this.intake.budget.tryTake(bytes)) return false;
    this.memoryHeld += bytes;
    return true;
  }

  private async toFile(chunk: Buffer): Promise<void> {
    try {
      if (this.failure || this.released) return;
      if (!this.file) await this.startFile();
      await this.append(chunk);
    } catch (error) {
      this.failure = error instanceof IntakeFull ? error : new IntakeFull(`the spool cannot be written: ${(error as Error).message}`);
      await this.dropFile();
    } finally {
      this.queued -= chunk.length;
    }
  }

  /** What was in memory moves to the file, and its budget goes back. */
  private async startFile(): Promise<void> {
    this.file = await this.intake.createFile();
    for (const chunk of this.chunks) await this.append(chunk);
    this.chunks = [];
    this.intake.budget.give(this.memoryHeld);
    this.memoryHeld = 0;
  }

  /** Spool room beyond what an announced size set aside is taken as the file grows. */
  private async append(chunk: Buffer): Promise<void> {
    const needed = this.fileBytes + chunk.length - this.spoolHeld;
    if (needed > 0) {
      if (!this.intake.reserveSpool(needed)) throw new IntakeFull('the spool is full');
      this.spoolHeld += needed;
    }
    await (this.file as SpoolFile).append(chunk);
    this.fileBytes += chunk.length;
  }

  /** Out of the spool; resolves once the file is removed (a file that cannot be is gone at the next start). */
  private dropFile(): Promise<void> {
    const file = this.file;
    this.file = null;
    this.intake.freeSpool(this.spoolHeld);
    this.spoolHeld = 0;
    return file ? file.remove().catch(() => {}) : Promise.resolve();
  }
}

/**
 * `fields` on top of `bytes`: written into the `room` free bytes before them when they fit (the
 * MX's trace fields go on a received message without a copy of it), else a new buffer. The
 * room is the caller's own (ReceivedMessage.load gave it), and a later call may write it again.
 */
export const withFieldsOnTop = (bytes: Buffer, room: number, fields: Buffer): Buffer => {
  if (fields.length > room) return Buffer.concat([fields, bytes]);
  const whole = Buffer.from(bytes.buffer, bytes.byteOffset - fields.length, fields.length + bytes.length);
  fields.copy(whole, 0);
  return whole;
};
