/**
 * The full-text index's writer on a thread of its own (search-thread.ts), as the services'
 * IndexWriter: src/app/threads.ts passes it to SearchIndexService when it has a way to start the
 * thread.
 */
import type { Worker } from 'node:worker_threads';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { IdleEnd } from './idle-end.js';
import type { IndexEntry, IndexWriter } from '../../core/search-index.js';
import type { SearchReply, SearchRequest, SearchThreadData } from './search-protocol.js';

/** Starts the thread. bin/ decides how: a .ts file from source, an eval'd asset in the executable. */
export type SearchWorkerFactory = (data: SearchThreadData) => Worker;

/** How long a search waits for the index to catch up before it answers 503. */
const SETTLE_TIMEOUT_MS = 10_000;

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** A search waiting until the thread has done every request up to `target`. */
interface Waiter {
  target: number;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** A request before it is numbered (Omit over each member of the union). */
type Unnumbered<T> = T extends unknown ? Omit<T, 'seq'> : never;
type Request = Unnumbered<Exclude<SearchRequest, { type: 'close' }>>;

export interface SearchWriterOptions {
  /** In the single executable: the better-sqlite3 addon file the main thread loaded. */
  nativeBindingFile?: string;
  /** How long settle() waits before it answers 503 (tests shorten it). */
  settleTimeoutMs?: number;
  /** The thread ends after this long without a request (IDLE_THREAD_MS); 0 keeps it. */
  idleMs?: number;
  /** Called once a thread ended for idleness has exited (src/app/threads.ts hands the C heap back then). */
  onIdleExit?: () => void;
}

/**
 * How long the search thread waits for work before it ends (it closes the index file first);
 * the next request starts a new one. Its isolate and its SQLite connection hold a few MB of an
 * idle executable's memory; a start costs a fraction of a second of CPU, paid only when mail
 * comes after a pause (docs/contributing/benchmarks.md, "Worker threads").
 */
export const IDLE_THREAD_MS = 30_000;

export class SearchWriterThread implements IndexWriter {
  private worker: Worker | null = null;
  private lastSeq = 0;
  /** The thread answers in order, so every request up to this one is done. */
  private doneSeq = 0;
  /** The last request that failed, and the last failure a settle already reported. */
  private failedSeq = 0;
  private failuresSeen = 0;
  private readonly pending = new Map<number, Pending>();
  private waiters: Waiter[] = [];
  private ready: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly idle: IdleEnd;

  constructor(
    private readonly file: string,
    private readonly factory: SearchWorkerFactory,
    private readonly logger: Logger,
    private readonly options: SearchWriterOptions = {},
  ) {
    this.idle = new IdleEnd(options.idleMs ?? 0);
  }

  /** Starts the thread; rejects when it dies before it has opened the index. */
  start(): Promise<void> {
    if (!this.worker) this.spawn();
    return this.ready;
  }

  index(entries: IndexEntry[], through?: number): Promise<void> {
    return this.request({ type: 'index', entries, ...(through !== undefined && { through }) });
  }

  trimAbove(rowId: number): Promise<void> {
    return this.request({ type: 'trim', rowId });
  }

  /**
   * Resolves once the thread has done every request sent so far; the event loop keeps
   * serving everyone else meanwhile. Only a search waits here, for at most the last quarter
   * second of stored mail (the indexer's delay). Rejects with 503 after the timeout, or once
   * after a request failed (a search must not answer without mail it should find).
   */
  settle(): Promise<void> {
    const target = this.lastSeq;
    if (this.doneSeq >= target) return this.failureSince();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter.timer !== timer);
        reject(new AppError('unavailable', 'the search index is not keeping up; try again shortly'));
      }, this.options.settleTimeoutMs ?? SETTLE_TIMEOUT_MS);
      this.waiters.push({ target, resolve, reject, timer });
    });
  }

  /** Lets the thread finish what it was sent and close the index file. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle.disarm();
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close', seq: ++this.lastSeq } satisfies SearchRequest);
    await exited;
  }

  private request(request: Request): Promise<void> {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'the server is shutting down'));
    this.idle.disarm();
    const worker = this.worker ?? this.spawn();
    const seq = ++this.lastSeq;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      worker.postMessage({ ...request, seq } as SearchRequest);
    });
  }

  private spawn(): Worker {
    const data: SearchThreadData = { file: this.file, nativeBindingFile: this.options.nativeBindingFile };
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
    this.doneSeq = Math.max(this.doneSeq, reply.seq);
    if (reply.type === 'failed') this.failedSeq = reply.seq;
    const pending = this.pending.get(reply.seq);
    this.pending.delete(reply.seq);
    if (reply.type === 'failed') pending?.reject(new Error(`search thread: ${reply.error}`));
    else pending?.resolve();
    this.wakeWaiters();
    this.endWhenIdle();
  }

  /** Once every request is done, the thread closes the index and ends after idleMs unless one comes. */
  private endWhenIdle(): void {
    if (!this.closed && this.doneSeq >= this.lastSeq) this.idle.arm(() => this.endIdle());
  }

  private endIdle(): void {
    const worker = this.worker;
    if (!worker || this.closed || this.doneSeq < this.lastSeq) return;
    // Out of the way first: its exit is not a failure, and the next request starts another.
    this.worker = null;
    worker.once('exit', () => this.options.onIdleExit?.());
    worker.postMessage({ type: 'close', seq: ++this.lastSeq } satisfies SearchRequest);
    this.doneSeq = this.lastSeq;
  }

  /** Settles every search whose requests are all done now. */
  private wakeWaiters(): void {
    const due = this.waiters.filter((waiter) => waiter.target <= this.doneSeq);
    if (due.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => waiter.target > this.doneSeq);
    for (const waiter of due) {
      clearTimeout(waiter.timer);
      this.failureSince().then(waiter.resolve, waiter.reject);
    }
  }

  /** Rejects with 503 once per failure not yet reported to a search. */
  private failureSince(): Promise<void> {
    if (this.failedSeq <= this.failuresSeen) return Promise.resolve();
    this.failuresSeen = this.failedSeq;
    return Promise.reject(new AppError('unavailable', 'the search index could not be updated; try again shortly'));
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
    if (this.pending.size > 0) this.failedSeq = this.lastSeq;
    this.doneSeq = this.lastSeq;
    const reason = this.closed ? 'the server is shutting down' : `the search thread exited with code ${code}`;
    for (const pending of this.pending.values()) pending.reject(new Error(reason));
    this.pending.clear();
    this.wakeWaiters();
  }
}
