/**
 * A small pool of worker threads that run every MIME parse of mail (parse-worker.ts), so
 * mailparser's CPU time leaves the event loop that runs SMTP, HTTP and the group commit.
 * Services never see it: they get `pool.parse` as their injected ParseMail (docs/design.md rules
 * 1 and 3).
 *
 * Each parse has a time budget (`timeoutMs`). A thread parses one message at a time, in the
 * order sent, so the oldest unanswered request of a thread is the one it is working on;
 * when that one has run past the budget, the thread is ended (a synchronous step such as
 * html-to-text cannot be interrupted any other way) and replaced. The message is parsed
 * again on the new thread in bounded mode (src/mime/fallback.ts: linear, always quick), so
 * it is still stored and readable; the thread's other requests are sent again as they were.
 */
import type { Worker } from 'node:worker_threads';
import { AppError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { ParseMail, ParsedMessage } from '../core/parsed-message.js';
import type { ContentFallback } from '../core/stored-message.js';
import { withStoredBody } from '../mime/parse.js';
import type { PackedText, PackedTexts } from '../core/packed-text.js';
import { IdleEnd } from './idle-end.js';
import { bodyFromWire, type ParseRequest, type ParseResult, type WireParsedMessage } from './parse-protocol.js';
import { WorkerSlot } from './worker-slot.js';
import { bytesForWorker } from './worker-bytes.js';

/** Starts one parse worker. bin/ decides how: a .ts file from source, an eval'd asset in the executable. */
export type ParseWorkerFactory = () => Worker;

interface Pending {
  resolve: (parsed: ParsedMessage) => void;
  reject: (error: Error) => void;
  /** The caller's bytes, kept to send them again if the thread is replaced (the thread got a copy). */
  raw: Buffer;
  fallback?: ContentFallback;
  junkFeatures: boolean;
}

interface Slot {
  thread: WorkerSlot<ParseRequest, ParseResult, Pending>;
  /** The request the thread is on (the oldest pending) and the timer that cuts it off. */
  current: number | null;
  watchdog: NodeJS.Timeout | null;
  /** Ends the thread once it has had nothing to do for the pool's idleMs. */
  idle: IdleEnd;
}

export interface ParsePoolOptions {
  /** The time budget of one parse (PARSE_TIMEOUT_MS). */
  timeoutMs?: number;
  /**
   * A thread with nothing to do for this long ends; the next message starts a new one (see
   * IDLE_WORKER_MS). 0 keeps threads for good.
   */
  idleMs?: number;
  /** Called once a thread ended for idleness has exited (src/main.ts hands the C heap back then). */
  onIdleExit?: () => void;
}

/**
 * How long a parse worker waits for work before it ends. Its isolate (mailparser's code and
 * heap, its C arena) is much of an idle executable's memory, and a new one costs a little CPU
 * and latency to the message that starts it; at this wait, mail that comes just more than this
 * apart pays a fraction of a percent of a core for it (docs/contributing/benchmarks.md, "Worker threads").
 */
export const IDLE_WORKER_MS = 30_000;

/** From this size a message is parsed on the pool's worker for large mail (the size received mail is spooled from). */
export const LARGE_PARSE_BYTES = 1024 * 1024;

/** Default time budget of one parse. */
export const PARSE_TIMEOUT_MS = 2_000;

/** The budget grows by as much again for every 8 MB, so large honest mail on a busy machine is not cut off. */
export const budgetOf = (timeoutMs: number, bytes: number): number => Math.round(timeoutMs * (1 + bytes / (8 * 1024 * 1024)));

export class ParsePool {
  private readonly slots: Slot[];
  private nextId = 1;
  private cursor = 0;
  private closed = false;
  /**
   * Messages of LARGE_PARSE_BYTES or more are parsed on a worker of their own, started when one
   * comes and ended when idle: a parse of megabytes takes seconds, and small mail queued behind it
   * on the same worker would wait for its 250 as long.
   */
  private readonly large: Slot;

  constructor(
    readonly size: number,
    factory: ParseWorkerFactory,
    private readonly logger: Logger,
    private readonly options: ParsePoolOptions = {},
  ) {
    if (size < 1) throw new RangeError('a parse pool needs at least one thread');
    this.slots = Array.from({ length: size }, () => this.newSlot(factory));
    this.large = this.newSlot(factory);
  }

  private newSlot(factory: ParseWorkerFactory): Slot {
    const owner = {
      loaded: () => {
        this.watch(slot);
        this.endWhenIdle(slot);
      },
      settled: (pending: Pending, result: ParseResult) => this.settle(slot, pending, result),
      exited: () => this.disarm(slot),
    };
    const slot: Slot = {
      thread: new WorkerSlot(factory, owner, this.logger, 'parse worker'),
      current: null,
      watchdog: null,
      idle: new IdleEnd(this.options.idleMs ?? 0),
    };
    return slot;
  }

  /**
   * Starts every thread; resolves once each has loaded its code. Rejects when one dies
   * first: an executable that cannot start its parser should not accept mail at all. A
   * thread that then stays idle ends (idleMs); this start proved one can start, and a
   * message that finds none starts one (its parse fails if that fails: the MX answers 451).
   */
  start(): Promise<void> {
    for (const slot of this.slots) slot.thread.start();
    return Promise.all(this.slots.map((slot) => slot.thread.ready)).then(() => undefined);
  }

  /** One request per message: a large one to the worker for large mail, else to the worker with the fewest in flight (ties rotate). */
  readonly parse: ParseMail = (raw, wants = {}) => {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'the server is shutting down'));
    return new Promise<ParsedMessage>((resolve, reject) => this.dispatch({ resolve, reject, raw, junkFeatures: wants.junkFeatures === true }));
  };

  /** Terminates every thread; requests still in flight fail (the SMTP client gets 451 and retries). */
  async close(): Promise<void> {
    this.closed = true;
    const slots = [...this.slots, this.large];
    for (const slot of slots) {
      this.disarm(slot);
      slot.idle.disarm();
    }
    await Promise.all(slots.map((slot) => slot.thread.close()));
  }

  private get timeoutMs(): number {
    return this.options.timeoutMs ?? PARSE_TIMEOUT_MS;
  }

  private dispatch(pending: Pending): void {
    const slot = pending.raw.length >= LARGE_PARSE_BYTES ? this.large : this.leastBusy();
    slot.idle.disarm();
    // Shared memory when the message is in it already (a large one), else an exact-size copy whose memory moves to the thread.
    const { bytes, transfer } = bytesForWorker(pending.raw);
    const request: ParseRequest = {
      id: this.nextId++,
      raw: bytes,
      ...(pending.fallback ? { fallback: pending.fallback } : {}),
      ...(pending.junkFeatures ? { junkFeatures: true as const } : {}),
    };
    slot.thread.send(request, pending, transfer);
    this.watch(slot);
  }

  /** Once the slot's thread has nothing in flight, it ends after idleMs unless work comes. */
  private endWhenIdle(slot: Slot): void {
    if (!this.closed && slot.thread.pending.size === 0 && slot.thread.loaded) slot.idle.arm(() => this.endIdle(slot));
  }

  private endIdle(slot: Slot): void {
    if (!slot.thread.worker || slot.thread.pending.size > 0 || this.closed) return;
    this.disarm(slot);
    void slot.thread.end().then(() => this.options.onIdleExit?.());
  }

  /** Keeps the watchdog on the request the slot's thread is working on now (once it has loaded). */
  private watch(slot: Slot): void {
    const oldest = slot.thread.pending.entries().next();
    const current = oldest.done || !slot.thread.loaded ? null : oldest.value[0];
    if (current === slot.current) return;
    this.disarm(slot);
    slot.current = current;
    if (current === null || oldest.done) return;
    slot.watchdog = setTimeout(() => this.cutOff(slot, current), budgetOf(this.timeoutMs, oldest.value[1].raw.length));
    slot.watchdog.unref();
  }

  private disarm(slot: Slot): void {
    if (slot.watchdog) clearTimeout(slot.watchdog);
    slot.watchdog = null;
    slot.current = null;
  }

  /**
   * The parse of request `id` ran past its budget: the thread goes, the message is parsed
   * again in bounded mode, and the thread's other requests are sent again. A bounded parse
   * that runs past the budget too fails (the MX answers 451), so nothing loops.
   */
  private cutOff(slot: Slot, id: number): void {
    if (slot.current !== id || !slot.thread.worker || this.closed) return;
    this.disarm(slot);
    const orphans = slot.thread.replace();
    this.logger.warn('a parse ran over its time budget; its thread is replaced and the message kept with the bounded fallback', {
      timeoutMs: this.timeoutMs,
      bytes: orphans[0]?.[1].raw.length,
      requeued: orphans.length - 1,
    });
    for (const [orphanId, pending] of orphans) {
      if (orphanId !== id) this.dispatch(pending);
      else if (pending.fallback) pending.reject(new Error('the bounded parse ran over its time budget too'));
      else this.dispatch({ ...pending, fallback: 'timeout' });
    }
  }

  private leastBusy(): Slot {
    let best = this.cursor;
    for (let step = 1; step < this.slots.length; step += 1) {
      const index = (this.cursor + step) % this.slots.length;
      if (this.slots[index].thread.pending.size < this.slots[best].thread.pending.size) best = index;
    }
    this.cursor = (best + 1) % this.slots.length;
    return this.slots[best];
  }

  private settle(slot: Slot, pending: Pending, reply: ParseResult): void {
    this.watch(slot);
    this.endWhenIdle(slot);
    if (reply.type === 'failed') pending.reject(new Error(`parse worker: ${reply.error}`));
    else pending.resolve(fromWire(reply.parsed));
  }
}

/** Text, HTML and the attachment list come from the stored body (they cross only once). */
const fromWire = ({ body, ...fields }: WireParsedMessage): ParsedMessage => withStoredBody(fields, bodyFromWire(body, asBuffers(body.packed)));

/** A Buffer crosses a thread as a plain Uint8Array: the same bytes are a Buffer again here, as a parse on this thread makes them. */
const asBuffers = (packed: PackedTexts): PackedTexts => ({
  text: asBuffer(packed.text),
  html: packed.html && asBuffer(packed.html),
  extractedText: packed.extractedText && asBuffer(packed.extractedText),
  extractedHtml: packed.extractedHtml && asBuffer(packed.extractedHtml),
});

const asBuffer = (value: PackedText): PackedText => (typeof value === 'string' ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength));
