/**
 * One worker thread and the requests it holds, for a pool of parse workers (parse-pool.ts) and
 * the authentication worker (auth-client.ts). Both speak the same shape of protocol
 * (parse-protocol.ts, auth-protocol.ts): the thread says `ready` once its code is loaded, and
 * each side posts what one turn of its event loop produced as one array, every result naming
 * its request's id.
 *
 * The slot starts a thread when a request finds none, routes results to the requests it holds,
 * fails those requests when the thread ends on its own, and can end the thread on purpose:
 * `replace` when it has run past a budget (a synchronous step cannot be interrupted any other
 * way), handing back what it held for the owner to send again or answer; `end` when idle;
 * `finish` when the thread must end itself (close a file) after what it was sent.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../core/logger.js';

export type WorkerReply<Result> = { type: 'ready' } | { type: 'results'; results: Result[] };

/** What a slot holds per request: the owner's own record, which the slot fails when the thread dies. */
export interface HeldRequest {
  reject(error: Error): void;
}

export interface SlotOwner<Result, Held> {
  /** The thread has loaded its code. */
  loaded(): void;
  /** A result of a request the slot held (it holds it no more). */
  settled(held: Held, result: Result): void;
  /** The thread ended on its own; the requests it held have failed. */
  exited(): void;
}

export class WorkerSlot<Request extends { id: number }, Result extends { id: number }, Held extends HeldRequest> {
  /** Requests sent to the current thread and not answered, in the order sent. */
  readonly pending = new Map<number, Held>();
  ready: Promise<void> = Promise.resolve();
  /** The thread has loaded its code: time spent on a request counts only from then. */
  loaded = false;
  private thread: Worker | null = null;
  /** This turn's requests, posted together at its end to the thread they were meant for. */
  private outgoing: { requests: Request[]; transfer: ArrayBuffer[] } = { requests: [], transfer: [] };
  private closed = false;
  /** A thread ending by `finish`: it answers what it holds before it exits. */
  private ending: Worker | null = null;

  constructor(
    private readonly factory: () => Worker,
    private readonly owner: SlotOwner<Result, Held>,
    private readonly logger: Logger,
    /** Names the thread in logs and errors: "parse worker", "authentication worker". */
    private readonly name: string,
  ) {}

  get worker(): Worker | null {
    return this.thread;
  }

  /** Starts the thread unless there is one; `ready` resolves once it has loaded. */
  start(): Worker {
    return this.thread ?? this.spawn();
  }

  send(request: Request, held: Held, transfer: ArrayBuffer[]): void {
    const worker = this.start();
    this.pending.set(request.id, held);
    if (this.outgoing.requests.length === 0) setImmediate(() => this.post(worker));
    this.outgoing.requests.push(request);
    this.outgoing.transfer.push(...transfer);
  }

  /** Ends the thread now; returns what it held, in order, for the owner to send again or answer. */
  replace(): [number, Held][] {
    const held = [...this.pending];
    this.pending.clear();
    void this.detach()?.terminate();
    return held;
  }

  /** Ends a thread that holds nothing (idle); resolves once it has exited. */
  async end(): Promise<void> {
    await this.detach()?.terminate();
  }

  /** Ends the thread for good: what it held fails ("shutting down"), nothing starts another. */
  async close(): Promise<void> {
    this.closed = true;
    await this.thread?.terminate();
  }

  /**
   * Ends the thread gracefully: `last` goes after everything sent so far, and the thread ends
   * itself once it has answered them all (the search worker closes its file first). Resolves once
   * it has exited; its exit is no failure. `forGood` as close; else the next request starts another.
   */
  async finish(last: Request, forGood: boolean): Promise<void> {
    if (forGood) this.closed = true;
    const worker = this.thread;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    this.post(worker);
    // An idle thread holds nothing: out of the slot at once, so a request meanwhile starts another.
    if (forGood) this.ending = worker;
    else this.detach();
    worker.postMessage([last]);
    await exited;
  }

  /** The thread leaves the slot first: its exit is then no failure, and its unposted batch goes nowhere. */
  private detach(): Worker | null {
    const worker = this.thread;
    this.thread = null;
    this.loaded = false;
    this.outgoing = { requests: [], transfer: [] };
    return worker;
  }

  private post(worker: Worker): void {
    if (worker !== this.thread) return;
    const { requests, transfer } = this.outgoing;
    this.outgoing = { requests: [], transfer: [] };
    worker.postMessage(requests, transfer);
  }

  private spawn(): Worker {
    const worker = this.factory();
    this.thread = worker;
    this.loaded = false;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: WorkerReply<Result>) => {
        if (reply.type === 'results') for (const result of reply.results) this.settle(worker, result);
        else if (worker === this.thread) {
          this.loaded = true;
          resolve();
          this.owner.loaded();
        }
      });
      worker.once('exit', (code) => {
        reject(new Error(`${this.name} exited with code ${code} before it was ready`));
        this.retire(worker, code);
      });
    });
    // Only start() awaits readiness; a replacement's failure surfaces through its requests.
    this.ready.catch(() => {});
    // An uncaught error inside the thread: logged here, its requests fail in the 'exit' that follows.
    worker.on('error', (error: Error) => this.logger.error(`${this.name} failed`, { error: error.message }));
    return worker;
  }

  private settle(worker: Worker, result: Result): void {
    const held = worker === this.thread ? this.pending.get(result.id) : undefined;
    if (!held) return;
    this.pending.delete(result.id);
    this.owner.settled(held, result);
  }

  /**
   * A thread that ended on its own: what it held fails cleanly (not an AppError, so the MX
   * answers 451 4.3.0 and the client retries; nothing was stored), and the next request
   * starts a new thread, which also keeps a thread that dies at once from respawning in a loop.
   */
  private retire(worker: Worker, code: number): void {
    if (worker !== this.thread) return;
    this.detach();
    if (worker === this.ending) {
      this.ending = null;
      if (this.pending.size === 0) return;
    }
    if (!this.closed) this.logger.warn(`${this.name} exited; a new one starts with the next message`, { code, failed: this.pending.size });
    const error = new Error(this.closed ? 'the server is shutting down' : `the ${this.name} exited with code ${code}`);
    const failed = [...this.pending.values()];
    this.pending.clear();
    for (const held of failed) held.reject(error);
    this.owner.exited();
  }
}
