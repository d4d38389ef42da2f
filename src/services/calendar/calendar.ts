import type { Clock } from '../../core/clock.js';
import type { Store } from '../../store/index.js';

/**
 * The calendar's durable side: each scheduled job's next run is a row, and a run is taken by
 * moving the row to the run after it in one conditional update. So a period's run happens once,
 * and a run missed while the service was down happens at the next start (once, not once per
 * missed period). The schedule arithmetic is the runtime's (src/runtime/calendar.ts).
 */
export class CalendarService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** This process's node (config `cluster.nodeId`), recorded with each run it takes. */
    private readonly nodeId: string,
  ) {}

  /** A job as configured; a new one, or one whose schedule changed, is due at `firstRunAt`. */
  async register(name: string, schedule: string, firstRunAt: number): Promise<void> {
    await this.store.transaction(() => this.store.scheduledJobs.register(name, schedule, firstRunAt));
  }

  async nextDueAt(names: readonly string[]): Promise<number | null> {
    return await this.store.scheduledJobs.nextDueAt(names);
  }

  async due(names: readonly string[], now: number): Promise<{ name: string; nextRunAt: number }[]> {
    return await this.store.scheduledJobs.due(names, now);
  }

  /**
   * True when this caller takes the run due at `dueAt` (and the row moves on to `nextRunAt`):
   * one conditional update, so of several processes on one data folder exactly one takes each
   * period's run (docs/design.md, "Several processes on one store").
   */
  async take(name: string, dueAt: number, nextRunAt: number): Promise<boolean> {
    const now = this.clock.now().getTime();
    return await this.store.transaction(() => this.store.scheduledJobs.take(name, dueAt, nextRunAt, now, this.nodeId));
  }

  async finished(name: string, error: string | null): Promise<void> {
    const now = this.clock.now().getTime();
    await this.store.transaction(() => this.store.scheduledJobs.finished(name, now, error));
  }
}
