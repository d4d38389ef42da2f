/**
 * The main thread's side of the authentication thread (auth-thread.ts): InboundService gets
 * `check` as its injected AuthenticateMail, so mailauth's parsing, hashing and DNS handling
 * leave the event loop that runs SMTP, HTTP and the group commit (on bench:ingest they cost
 * the main thread about 0.4 ms a message).
 */
import type { Worker } from 'node:worker_threads';
import type { AuthenticateMail, CheckedMessage } from '../../core/authentication.js';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { AuthReply, AuthRequest, AuthThreadData } from './auth-protocol.js';

/** Starts the thread. bin/ decides how: a .ts file from source, an eval'd asset in the executable. */
export type AuthWorkerFactory = (data: AuthThreadData) => Worker;

interface Pending {
  resolve: (checked: CheckedMessage) => void;
  reject: (error: Error) => void;
}

export class AuthThread {
  private worker: Worker | null = null;
  private ready: Promise<void> = Promise.resolve();
  private readonly pending = new Map<number, Pending>();
  private outgoing: AuthRequest[] = [];
  private transfer: ArrayBuffer[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly factory: AuthWorkerFactory,
    private readonly data: AuthThreadData,
    private readonly logger: Logger,
  ) {}

  /** Resolves once the thread has loaded its code; rejects when it dies first. */
  start(): Promise<void> {
    if (!this.worker) this.spawn();
    return this.ready;
  }

  readonly check: AuthenticateMail = (raw, envelope, now) => {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'the server is shutting down'));
    if (!this.worker) this.spawn();
    const id = this.nextId++;
    const copy = new Uint8Array(raw);
    return new Promise<CheckedMessage>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.outgoing.length === 0) setImmediate(() => this.post());
      this.outgoing.push({ id, raw: copy, envelope, now: now.getTime() });
      this.transfer.push(copy.buffer as ArrayBuffer);
    });
  };

  /** Terminates the thread; checks in flight fail (the SMTP client gets 451 and retries). */
  async close(): Promise<void> {
    this.closed = true;
    await this.worker?.terminate();
  }

  private post(): void {
    const [requests, transfer] = [this.outgoing, this.transfer];
    this.outgoing = [];
    this.transfer = [];
    // A batch for a thread that died meanwhile has already failed with it.
    this.worker?.postMessage(requests, transfer);
  }

  private spawn(): void {
    const worker = this.factory(this.data);
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: AuthReply) =>
        reply.type === 'ready'
          ? resolve()
          : reply.results.forEach((result) => {
              const pending = this.pending.get(result.id);
              this.pending.delete(result.id);
              if ('checked' in result) pending?.resolve(result.checked);
              else pending?.reject(new Error(`auth thread: ${result.error}`));
            }),
      );
      worker.once('exit', (code) => {
        reject(new Error(`auth thread exited with code ${code} before it was ready`));
        this.retire(worker, code);
      });
    });
    this.ready.catch(() => {});
    worker.on('error', (error: Error) => this.logger.error('auth thread failed', { error: error.message }));
  }

  /** Its checks fail (not an AppError: the MX answers 451 4.3.0, nothing was stored); the next check starts a new thread. */
  private retire(worker: Worker, code: number): void {
    if (this.worker !== worker) return;
    this.worker = null;
    if (!this.closed) this.logger.warn('auth thread exited; a new one starts with the next message', { code, failed: this.pending.size });
    const reason = this.closed ? 'the server is shutting down' : `the auth thread exited with code ${code}`;
    for (const pending of this.pending.values()) pending.reject(new Error(reason));
    this.pending.clear();
  }
}
