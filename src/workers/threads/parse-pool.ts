/**
 * A small pool of worker threads that run the MIME parse of inbound mail (parse-thread.ts),
 * so mailparser's CPU time (about a fifth of the MX's main thread) leaves the event loop
 * that runs SMTP, HTTP and the group commit. Services never see it: InboundService gets
 * `pool.parse` as its injected ParseMail (DESIGN.md rules 1 and 3).
 */
import type { Worker } from 'node:worker_threads';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { ParseMail, ParsedMessage } from '../../core/parsed-message.js';
import type { ParseReply, ParseRequest, ParseResult, WireParsedMessage } from './parse-protocol.js';

/** Starts one parse thread. bin/ decides how: a .ts file from source, an eval'd asset in the executable. */
export type ParseWorkerFactory = () => Worker;

interface Pending {
  resolve: (parsed: ParsedMessage) => void;
  reject: (error: Error) => void;
}

/** Requests of this turn for one thread, posted together at its end (see parse-protocol.ts). */
interface Outgoing {
  requests: ParseRequest[];
  transfer: ArrayBuffer[];
}

interface Slot {
  worker: Worker | null;
  /** Requests sent to this slot's current thread and not answered yet. */
  pending: Map<number, Pending>;
  ready: Promise<void>;
}

export class ParsePool {
  private readonly slots: Slot[];
  private nextId = 1;
  private cursor = 0;
  private closed = false;
  /** Keyed by thread, not slot: a batch for a thread that died meanwhile goes nowhere (its requests already failed). */
  private outgoing = new Map<Worker, Outgoing>();

  constructor(readonly size: number, private readonly factory: ParseWorkerFactory, private readonly logger: Logger) {
    if (size < 1) throw new RangeError('a parse pool needs at least one thread');
    this.slots = Array.from({ length: size }, () => ({ worker: null, pending: new Map(), ready: Promise.resolve() }));
  }

  /**
   * Starts every thread; resolves once each has loaded its code. Rejects when one dies
   * first: an executable that cannot start its parser should not accept mail at all.
   */
  start(): Promise<void> {
    for (const slot of this.slots) if (!slot.worker) this.spawn(slot);
    return Promise.all(this.slots.map((slot) => slot.ready)).then(() => undefined);
  }

  /** One request per message, to the thread with the fewest in flight (ties rotate). */
  readonly parse: ParseMail = (raw) => {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'the server is shutting down'));
    const slot = this.leastBusy();
    const worker = slot.worker ?? this.spawn(slot);
    const id = this.nextId++;
    // An exact-size copy whose memory moves to the thread; raw itself stays ours to store.
    const copy = new Uint8Array(raw);
    return new Promise<ParsedMessage>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      this.enqueue(worker, { id, raw: copy });
    });
  };

  /** Terminates every thread; requests still in flight fail (the SMTP client gets 451 and retries). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((slot) => slot.worker?.terminate()));
  }

  private enqueue(worker: Worker, request: ParseRequest): void {
    if (this.outgoing.size === 0) setImmediate(() => this.post());
    const batch = this.outgoing.get(worker) ?? { requests: [], transfer: [] };
    batch.requests.push(request);
    batch.transfer.push(request.raw.buffer as ArrayBuffer);
    this.outgoing.set(worker, batch);
  }

  private post(): void {
    const batches = this.outgoing;
    this.outgoing = new Map();
    for (const [worker, batch] of batches) worker.postMessage(batch.requests, batch.transfer);
  }

  private leastBusy(): Slot {
    let best = this.cursor;
    for (let step = 1; step < this.slots.length; step += 1) {
      const index = (this.cursor + step) % this.slots.length;
      if (this.slots[index].pending.size < this.slots[best].pending.size) best = index;
    }
    this.cursor = (best + 1) % this.slots.length;
    return this.slots[best];
  }

  private spawn(slot: Slot): Worker {
    const worker = this.factory();
    slot.worker = worker;
    slot.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: ParseReply) => (reply.type === 'ready' ? resolve() : reply.results.forEach((result) => this.settle(slot, result))));
      worker.once('exit', (code) => {
        reject(new Error(`parse thread exited with code ${code} before it was ready`));
        this.retire(slot, worker, code);
      });
    });
    // Only start() awaits readiness; a replacement's failure surfaces through its requests.
    slot.ready.catch(() => {});
    // An uncaught error inside the thread: logged here, its requests fail in the 'exit' that follows.
    worker.on('error', (error: Error) => this.logger.error('parse thread failed', { error: error.message }));
    return worker;
  }

  private settle(slot: Slot, reply: ParseResult): void {
    const pending = slot.pending.get(reply.id);
    if (!pending) return;
    slot.pending.delete(reply.id);
    if (reply.type === 'failed') pending.reject(new Error(`parse thread: ${reply.error}`));
    else pending.resolve(fromWire(reply.parsed));
  }

  /**
   * A thread that ended: its unanswered requests fail cleanly (not an AppError, so the MX
   * answers 451 4.3.0 and the client retries; nothing was stored), and the slot gets a new
   * thread at its next request, which also keeps a thread that dies at once from respawning
   * in a loop.
   */
  private retire(slot: Slot, worker: Worker, code: number): void {
    if (slot.worker !== worker) return;
    slot.worker = null;
    if (!this.closed) this.logger.warn('parse thread exited; a new one starts with the next message', { code, failed: slot.pending.size });
    const reason = this.closed ? 'the server is shutting down' : `the parse thread exited with code ${code}`;
    for (const pending of slot.pending.values()) pending.reject(new Error(reason));
    slot.pending.clear();
  }
}

/** Attachment bytes arrive as Uint8Array (structured clone); callers expect Buffers. */
const fromWire = (wire: WireParsedMessage): ParsedMessage => ({
  ...wire,
  attachments: wire.attachments.map((attachment) => ({
    ...attachment,
    content: Buffer.from(attachment.content.buffer, attachment.content.byteOffset, attachment.content.byteLength),
  })),
});
