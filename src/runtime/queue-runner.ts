import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';

/**
 * When a queue wants its next run, as its run answers: a time (Unix milliseconds of the
 * injected clock; at or before now means at once), or null for "at the next kick".
 */
export type NextRun = number | null;

/** What a run reports: when the queue is next due, and whatever else the queue counts (tests read it). */
export interface QueueRun {
  next: NextRun;
}

/** A durable queue's work: what is due is in the database, so a run reads it there. */
export interface QueueWork<R extends QueueRun = QueueRun> {
  /**
   * Does what is due at `now`. `signal` aborts at stop: a long run ends at its next step and
   * leaves the rest due for the next start. Resolves with when the queue is next due.
   */
  run(now: number, signal: AbortSignal): Promise<R>;
  /** Waits, after the abort, for work a run started without awaiting it (webhook attempts in flight). */
  settle?(): Promise<void>;
}

export interface QueueOptions {
  name: string;
  /** How long a kick waits for more commits to share its run (0: the next turn of the event loop). */
  kickDelayMs?: number;
}

/** A run that failed (the store unavailable, say) is tried again after this. */
const RETRY_AFTER_FAILURE_MS = 5_000;

/** setTimeout's longest delay; a later due time is looked at again after it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One loop per queue, after mox's queue: woken by a kick (a commit that gave it work) and by
 * one timer set to its earliest due row, never by polling. One run at a time: a kick during a
 * run asks for one more run after it. In manual mode (tests) nothing runs unless `runOnce`
 * is called.
 */
export class QueueRunner<R extends QueueRun = QueueRun> {
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private running: Promise<void> | null = null;
  private kickedWhileRunning = false;
  private stopped = false;
  private manual = false;
  private readonly shutdown = new AbortController();

  constructor(
    readonly name: string,
    private readonly work: QueueWork<R>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly kickDelayMs = 0,
  ) {}

  static of<R extends QueueRun>(options: QueueOptions, work: QueueWork<R>, clock: Clock, logger: Logger): QueueRunner<R> {
    return new QueueRunner(options.name, work, clock, logger, options.kickDelayMs);
  }

  /** Only `runOnce` runs it from now on (tests that drive a queue step by step). */
  driveManually(): void {
    this.manual = true;
    this.clearTimer();
  }

  get isManual(): boolean {
    return this.manual;
  }

  /** Something committed that this queue takes: a run soon, after the kick delay. */
  kick(): void {
    if (this.stopped || this.manual) return;
    if (this.running !== null) {
      this.kickedWhileRunning = true;
      return;
    }
    this.wakeAt(Date.now() + this.kickDelayMs);
  }

  /** One run at the clock's time (or `at`), after any run in progress; resolves with its report. */
  async runOnce(at: Date = this.clock.now()): Promise<R> {
    while (this.running !== null) await this.running;
    return this.execute(at.getTime());
  }

  /** Resolves once no run is in progress or due within the kick delay (tests). */
  async idle(): Promise<void> {
    while (this.running !== null || this.timerAt <= Date.now() + this.kickDelayMs) {
      await (this.running ?? new Promise((resolve) => setTimeout(resolve, Math.max(1, this.timerAt - Date.now()))));
    }
  }

  /** Resolves once the work runs started and did not await is done (webhook attempts in flight). */
  async settled(): Promise<void> {
    await this.work.settle?.();
  }

  /** No run starts after this; resolves once the run in progress (and what it started) is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    this.shutdown.abort();
    while (this.running !== null) await this.running;
    await this.work.settle?.();
  }

  /** Sets the one timer to `at` (wall-clock milliseconds) unless it is already set sooner. */
  private wakeAt(at: number): void {
    if (this.stopped || this.manual || at >= this.timerAt) return;
    this.clearTimer();
    this.timerAt = at;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now()));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      if (delay === MAX_TIMER_MS) this.wakeAt(at);
      else this.start();
    }, delay);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private start(): void {
    if (this.stopped || this.manual) return;
    if (this.running !== null) {
      this.kickedWhileRunning = true;
      return;
    }
    const now = this.clock.now().getTime();
    this.execute(now).then(
      (run) => this.schedule(run.next, now),
      (error: unknown) => {
        this.logger.error('queue run failed', { queue: this.name, error: error instanceof Error ? error.message : String(error) });
        this.wakeAt(Date.now() + RETRY_AFTER_FAILURE_MS);
      },
    );
  }

  /** The one place a run happens: `running` is set for its whole length, and a kick during it runs once more after. */
  private execute(now: number): Promise<R> {
    const run = this.work.run(now, this.shutdown.signal);
    this.running = run.then(
      () => undefined,
      () => undefined,
    );
    return run.finally(() => {
      this.running = null;
      if (this.kickedWhileRunning) {
        this.kickedWhileRunning = false;
        this.kick();
      }
    });
  }

  /** The run's answer in the clock's time, turned into a wall-clock timer. */
  private schedule(next: NextRun, now: number): void {
    if (next === null) return;
    this.wakeAt(Date.now() + Math.max(0, next - now));
  }
}
