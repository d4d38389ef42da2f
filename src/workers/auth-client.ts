/**
 * The main thread's side of the authentication worker (auth-worker.ts): InboundService gets
 * `check` as its injected AuthenticateMail, so mailauth's parsing, hashing and DNS handling
 * leave the event loop that runs SMTP, HTTP and the group commit.
 *
 * Checks that do not finish are stopped, as the parse pool stops a parse past its budget
 * (parse-pool.ts, through the same WorkerSlot): the thread is ended and replaced, the check
 * gets a verdict that says its checks timed out (the message is stored, its sender
 * unverified), and the thread's other checks are sent again to the new one. A check is
 * stopped when
 * - its code has held the thread's event loop for STALL_MS: the thread stopped beating, and
 *   it names the check that runs (see auth-protocol.ts); everything else in the thread was
 *   waiting on it, so other senders wait at most about that long;
 * - it is still unanswered STALL_MS after `timeoutMs` (`smtp.authenticationTimeoutMs`), by
 *   which time the thread answers on its own when its event loop turns (its lookups past the
 *   time are recorded as temperror, services/mail/authentication.ts).
 */
import type { Worker } from 'node:worker_threads';
import type { AuthenticateMail, CheckedMessage, SmtpEnvelope } from '../core/authentication.js';
import { AppError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { uncheckedResult } from '../services/mail/authentication.js';
import { BEAT, LOADING, RUNNING, type AuthRequest, type AuthResult, type AuthWorkerData } from './auth-protocol.js';
import { WorkerSlot } from './worker-slot.js';
import { bytesForWorker } from './worker-bytes.js';

/** Starts the thread. bin/ decides how: a .ts file from source, an eval'd asset in the executable. */
export type AuthWorkerFactory = (data: AuthWorkerData) => Worker;

/** How long a check's code may hold the thread's event loop before it is stopped. */
export const STALL_MS = 1_000;
/** How often the watchdog looks, while checks are in flight. */
const WATCH_MS = 100;

interface Pending {
  resolve: (checked: CheckedMessage) => void;
  reject: (error: Error) => void;
  /** The caller's bytes, kept to send them again to a replacement thread (the thread got a copy). */
  raw: Buffer;
  envelope: SmtpEnvelope;
  now: number;
  /** performance.now() past which the check is stopped, whichever thread has it. */
  deadline: number;
}

export class AuthenticationWorker {
  private readonly slot: WorkerSlot<AuthRequest, AuthResult, Pending>;
  private state = new Int32Array(new SharedArrayBuffer(8));
  private watchdog: NodeJS.Timeout | null = null;
  /** The last BEAT seen, and when it was seen to change. */
  private beat = -1;
  private beatChangedAt = 0;
  private nextId = 1;
  private closed = false;

  constructor(
    factory: AuthWorkerFactory,
    private readonly data: Omit<AuthWorkerData, 'state'>,
    private readonly logger: Logger,
    private readonly stallMs = STALL_MS,
  ) {
    const owner = {
      loaded: () => this.sawBeat(performance.now()),
      settled: (pending: Pending, result: AuthResult) => {
        if ('checked' in result) pending.resolve(result.checked);
        else pending.reject(new Error(`authentication worker: ${result.error}`));
      },
      exited: () => {},
    };
    this.slot = new WorkerSlot(() => this.spawn(factory), owner, logger, 'authentication worker');
  }

  /** Resolves once the thread has loaded its code; rejects when it dies first. */
  start(): Promise<void> {
    this.slot.start();
    return this.slot.ready;
  }

  readonly check: AuthenticateMail = (raw, envelope, now) => {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'the server is shutting down'));
    const deadline = performance.now() + this.data.timeoutMs + this.stallMs;
    return new Promise<CheckedMessage>((resolve, reject) => this.send(this.nextId++, { resolve, reject, raw, envelope, now: now.getTime(), deadline }));
  };

  /** Terminates the thread; checks in flight fail (the SMTP client gets 451 and retries). */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWatching();
    await this.slot.close();
  }

  private spawn(factory: AuthWorkerFactory): Worker {
    this.state = new Int32Array(new SharedArrayBuffer(8));
    return factory({ ...this.data, state: this.state.buffer as SharedArrayBuffer });
  }

  private send(id: number, pending: Pending): void {
    // Shared memory when the message is in it already (a large one), else a copy whose memory moves to the thread.
    const { bytes, transfer } = bytesForWorker(pending.raw);
    this.slot.send({ id, raw: bytes, envelope: pending.envelope, now: pending.now }, pending, transfer);
    if (!this.watchdog) {
      this.sawBeat(performance.now());
      this.watchdog = setInterval(() => this.inspect(), WATCH_MS);
      this.watchdog.unref();
    }
  }

  private sawBeat(at: number): void {
    this.beat = Atomics.load(this.state, BEAT);
    this.beatChangedAt = at;
  }

  /** One look of the watchdog: a thread that stopped beating, checks past their deadline. */
  private inspect(): void {
    if (this.slot.pending.size === 0) return this.stopWatching();
    const now = performance.now();
    const running = Atomics.load(this.state, RUNNING);
    // A thread still loading its code, or mailauth's, is not stuck in anybody's check.
    if (!this.slot.loaded || running === LOADING || Atomics.load(this.state, BEAT) !== this.beat) this.sawBeat(now);
    const stuck = now - this.beatChangedAt >= this.stallMs;
    const stopped = new Map<number, string>();
    for (const [id, pending] of this.slot.pending) {
      if (pending.deadline <= now) stopped.set(id, `the checks timed out after ${this.data.timeoutMs} ms and were stopped`);
    }
    if (stuck && this.slot.pending.has(running))
      stopped.set(running, `the checks timed out: they held the authentication worker for ${this.stallMs} ms and were stopped`);
    if (stuck || stopped.size > 0) this.replace(stopped);
  }

  /** The thread goes; `stopped` get their verdict, the others go to a new thread with their deadlines. */
  private replace(stopped: Map<number, string>): void {
    const held = this.slot.replace();
    this.logger.warn('authentication checks ran over their time; the thread is replaced and the messages kept unverified', {
      stopped: stopped.size,
      requeued: held.length - stopped.size,
    });
    for (const [id, pending] of held) {
      const why = stopped.get(id);
      if (why === undefined) this.send(id, pending);
      else pending.resolve(uncheckedResult(this.data.hostname, why));
    }
    if (this.slot.pending.size === 0) this.stopWatching();
  }

  private stopWatching(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }
}
