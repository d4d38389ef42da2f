/**
 * A job that runs a little after it is kicked, one run at a time: kicks during the delay
 * join that run, and a kick during a run asks for one more run after it. Its work must
 * handle its own errors (a rejection is dropped).
 */
export class KickedJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private kickedWhileRunning = false;
  private stopped = false;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly delayMs: number,
  ) {}

  kick(): void {
    if (this.stopped || this.timer !== null) return;
    if (this.running !== null) {
      this.kickedWhileRunning = true;
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, this.delayMs);
  }

  /** Stops kicks and waits for a run in progress, so the store can close after it. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Resolves once no run is in progress or due. */
  async idle(): Promise<void> {
    while (this.timer !== null || this.running !== null) {
      await (this.running ?? new Promise((resolve) => setTimeout(resolve, this.delayMs)));
    }
  }

  private run(): void {
    this.running = this.work()
      .catch(() => undefined)
      .finally(() => {
        this.running = null;
        if (this.kickedWhileRunning) {
          this.kickedWhileRunning = false;
          this.kick();
        }
      });
  }
}

/**
 * A KickedJob whose run goes step by step until its work is done: `stop` lets the step in
 * progress finish and the run ends there (the run checks `stopping` between steps), so a long
 * run never holds up shutdown. What is left waits for the next start.
 */
export abstract class SteppedJob {
  protected stopping = false;
  private readonly job: KickedJob;

  constructor(delayMs: number) {
    this.job = new KickedJob(() => this.runAll(), delayMs);
  }

  kick(): void {
    this.job.kick();
  }

  stop(): Promise<void> {
    this.stopping = true;
    return this.job.stop();
  }

  /** Resolves when no run is in progress or due (tests). */
  idle(): Promise<void> {
    return this.job.idle();
  }

  /** One run: steps until done or `stopping`; handles its own errors. */
  protected abstract runAll(): Promise<void>;
}
