/**
 * The full-text index's writer on a thread of its own (search-worker.ts), as the services'
 * IndexWriter: src/app/workers.ts passes it to SearchIndexService when it has a way to start the
 * thread.
 */
import type { Worker } from 'node:worker_threads';
import { AppError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { IdleEnd } from './idle-end.js';
import type { IndexEntry, IndexWriter } from '../core/search-index.js';
import type { SearchRequest, SearchResult, SearchWorkerData } from './search-protocol.js';
import { WorkerSlot } from './worker-slot.js';

/** Starts the thread. bin/ decides how: a .ts file from source, an eval'd asset in the executable. */
export type SearchWorkerFactory = (data: SearchWorkerData) => Worker;

/** How long a search waits for the index to catch up before it answers 503. */
const SETTLE_TIMEOUT_MS = 10_000;

/** A request the slot holds for the thread, by its number. */
interface Pending {
  seq: number;
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
type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never;
type Request = Unnumbered<Exclude<SearchRequest, { type: 'close' }>>;

export interface SearchWriterOptions {
  /** In the single executable: the better-sqlite3 addon file the main thread loaded. */
  nativeBindingFile?: string;
  /** How long settle() waits before it answers 503 (tests shorten it). */
  settleTimeoutMs?: number;
  /** The thread ends after this long without a request (IDLE_WORKER_MS); 0 keeps it. */
  idleMs?: number;
  /** Called once a thread ended for idleness has exited (src/app/workers.ts hands the C heap back then). */
  onIdleExit?: () => void;
}

/**
 * How long the search worker waits for work before it ends (it closes the index file first);
 * the next request starts a new one. Its isolate and its SQLite connection hold a few MB of an
 * idle executable's memory; a start costs a fraction of a second of CPU, paid only when mail
 * comes after a pause (docs/contributing/benchmarks.md, "Worker threads").
 */
export const IDLE_WORKER_MS = 30_000;

export class SearchWriter implements IndexWriter {
  private readonly slot: WorkerSlot<SearchRequest, SearchResult, Pending>;
  private lastSeq = 0;
  /** The thread answers in order, so every request up to this one is done. */
  private doneSeq = 0;
  /** The last request that failed, and the last failure a settle already reported. */
  private failedSeq = 0;
  private failuresSeen = 0;
  private waiters: Waiter[] = [];
  private closed = false;
  private readonly idle: IdleEnd;

  constructor(
    file: string,
    factory: SearchWorkerFactory,
    logger: Logger,
    private readonly options: SearchWriterOptions = {},
  ) {
    this.idle = new IdleEnd(options.idleMs ?? 0);
    const data: SearchWorkerData = { file, nativeBindingFile: options.nativeBindingFile };
    this.slot = new WorkerSlot(
      () => factory(data),
      {
        loaded: () => undefined,
        settled: (pending, result) => this.settled(pending, result),
        exited: () => this.exited(),
      },
      logger,
      'search worker',
    );
  }

  /** Starts the thread; rejects when it dies before it has opened the index. */
  start(): Promise<void> {
    this.slot.start();
    return this.slot.ready;
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
    await this.slot.finish({ type: 'close', id: ++this.lastSeq }, true);
    this.doneSeq = this.lastSeq;
  }

  private request(request: Request): Promise<void> {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'the server is shutting down'));
    this.idle.disarm();
    const seq = ++this.lastSeq;
    return new Promise<void>((resolve, reject) => {
      const pending: Pending = {
        seq,
        resolve,
        // Only a thread that ended fails a request so: what it never did makes a waiting search answer 503 once.
        reject: (error) => {
          this.failedSeq = this.lastSeq;
          reject(error);
        },
      };
      this.slot.send({ ...request, id: seq } as SearchRequest, pending, []);
    });
  }

  private settled(pending: Pending, result: SearchResult): void {
    this.doneSeq = Math.max(this.doneSeq, pending.seq);
    if ('error' in result) {
      this.failedSeq = pending.seq;
      pending.reject(new Error(`search worker: ${result.error}`));
    } else pending.resolve();
    this.wakeWaiters();
    this.endWhenIdle();
  }

  /** Once every request is done, the thread closes the index and ends after idleMs unless one comes. */
  private endWhenIdle(): void {
    if (!this.closed && this.doneSeq >= this.lastSeq) this.idle.arm(() => void this.endIdle());
  }

  private async endIdle(): Promise<void> {
    if (this.closed || this.doneSeq < this.lastSeq) return;
    await this.slot.finish({ type: 'close', id: ++this.lastSeq }, false);
    this.doneSeq = Math.max(this.doneSeq, this.lastSeq);
    this.options.onIdleExit?.();
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

  /** A thread that ended on its own: nothing is left for a search to wait on, and the next request starts a new one. */
  private exited(): void {
    this.doneSeq = this.lastSeq;
    this.wakeWaiters();
  }
}
