/**
 * The full-text index's writer on a thread of its own (search-thread.ts), as the services'
 * IndexWriter: main.ts passes it to SearchIndexService when it has a way to start the thread.
 */
import type { Worker } from 'node:worker_threads';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { IndexEntry, IndexWriter } from '../../core/search-index.js';
import { DONE_SLOT, FAILED_SLOT, type SearchReply, type SearchRequest, type SearchThreadData } from './search-protocol.js';

/** Starts the thread. bin/ decides how: a .ts file from source, an eval'd asset in the executable. */
export type SearchWorkerFactory = (data: SearchThreadData) => Worker;

/** How long a search waits for the index to catch up before it answers 503. */
const SETTLE_TIMEOUT_MS = 10_000;

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** A request before it is numbered (Omit over each member of the union). */
type Unnumbered<T> = T extends unknown ? Omit<T, 'seq'> : never;
type Request = Unnumbered<Exclude<SearchRequest, { type: 'close' }>>;

export class SearchWriterThread implements IndexWriter {
  private worker: Worker | null = null;
  private readonly progress = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
  private readonly slots = new Int32Array(this.progress);
  private lastSeq = 0;
  /** Failures up to this sequence number were already reported by a settle. */
  private failuresSeen = 0;
  private readonly pending = new Map<number, Pending>();
  private ready: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly factory: SearchWorkerFactory,
    private readonly logger: Logger,
    private readonly nativeBindingFile?: string,
  ) {}

  /** Starts the thread; rejects when it dies before it has opened the index. */
  start(): Promise<void> {
    if (!this.worker) this.spawn();
    return this.ready;
  }

  index(entries: IndexEntry[]): Promise<void> {
    return this.request({ type: 'index', entries });
  }

  trimAbove(rowId: number): Promise<void> {
    return this.request({ type: 'trim', rowId });
  }

  /**
   * Blocks the main thread until the thread has done every request sent so far. Only a
   * search waits here, for at most the last quarter second of stored mail (the indexer's
   * delay), which the main thread would otherwise have had to index itself.
   */
  settle(): void {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    for (let done = Atomics.load(this.slots, DONE_SLOT); done < this.lastSeq; done = Atomics.load(this.slots, DONE_SLOT)) {
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(this.slots, DONE_SLOT, done, left) === 'timed-out') {
        throw new AppError('unavailable', 'the search index is not keeping up; try again shortly');
      }
    }
    const failed = Atomics.load(this.slots, FAILED_SLOT);
    if (failed > this.failuresSeen) {
      this.failuresSeen = failed;
      throw new AppError('unavailable', 'the search index could not be updated; try again shortly');
    }
  }

  /** Lets the thread finish what it was sent and close the index file. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close', seq: ++this.lastSeq } satisfies SearchRequest);
    await exited;
  }

  private request(request: Request): Promise<void> {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'the server is shutting down'));
    const worker = this.worker ?? this.spawn();
    const seq = ++this.lastSeq;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      worker.postMessage({ ...request, seq } as SearchRequest);
    });
  }

  private spawn(): Worker {
    const data: SearchThreadData = { file: this.file, progress: this.progress, nativeBindingFile: this.nativeBindingFile };
    const worker = this.factory(data);
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: SearchReply) => (reply.type === 'ready' ? resolve() : this.settleRequest(reply)));
      worker.once('exit', (code) => {
        reject(new Error(`search thread exited with code ${code} before it was ready`));
        this.retire(worker, code);
      });
    });
    this.ready.catch(() => {});
    worker.on('error', (error: Error) => this.logger.error('search thread failed', { error: error.message }));
    return worker;
  }

  private settleRequest(reply: Exclude<SearchReply, { type: 'ready' }>): void {
    const pending = this.pending.get(reply.seq);
    if (!pending) return;
    this.pending.delete(reply.seq);
    if (reply.type === 'failed') pending.reject(new Error(`search thread: ${reply.error}`));
    else pending.resolve();
  }

  /**
   * A thread that ended: its requests fail (their messages stay queued and are handed over
   * again), nothing is left for a search to wait on, and the next request starts a new one.
   */
  private retire(worker: Worker, code: number): void {
    if (this.worker !== worker) return;
    this.worker = null;
    if (!this.closed) this.logger.warn('search thread exited; a new one starts with the next request', { code, failed: this.pending.size });
    // A search waiting on what the thread never did answers 503 once (settle), rather than miss mail.
    Atomics.store(this.slots, FAILED_SLOT, this.lastSeq);
    Atomics.store(this.slots, DONE_SLOT, this.lastSeq);
    const reason = this.closed ? 'the server is shutting down' : `the search thread exited with code ${code}`;
    for (const pending of this.pending.values()) pending.reject(new Error(reason));
    this.pending.clear();
  }
}
