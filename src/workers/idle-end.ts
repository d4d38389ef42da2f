/**
 * The end of a worker thread after a stretch without work (the parse and search workers end
 * when idle to hand their memory back; the next piece of work starts a new one). The owner
 * arms it, with what ends the thread, once the thread has nothing in flight, and disarms it
 * when work comes; `end` runs after `ms` of being armed. The timer is unref'd, so it never holds the process open; `ms` 0
 * keeps the thread for good.
 */
export class IdleEnd {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly ms: number) {}

  /** Starts the wait, unless it is already running. */
  arm(end: () => void): void {
    if (this.ms <= 0 || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      end();
    }, this.ms);
    this.timer.unref();
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
