import type { Logger } from '../core/logger.js';
import type { CalendarService } from '../services/calendar/calendar.js';
import { nextCronTime } from './cron.js';
import type { QueueRun, QueueWork } from './queue-runner.js';

/** A job run by the calendar (sweeps, key expiry, the daily domain re-check, the Polygon watcher). */
export interface CalendarJob {
  name: string;
  /** node-cron expression, seconds first, in the server's local time. */
  schedule: string;
  run(now: Date): unknown;
}

export interface CalendarRun extends QueueRun {
  /** The jobs this run took and ran. */
  ran: string[];
}

/**
 * The one scheduler of calendar jobs, a queue like the others: each job's next run is a due row
 * (src/services/calendar/calendar.ts) and the runner's one timer is set to the earliest. A run
 * takes each due job's row (moving it to the job's next time) before running it, so a run
 * happens once per period however many runs ask for it.
 */
export class Calendar implements QueueWork<CalendarRun> {
  private readonly jobs = new Map<string, CalendarJob>();

  constructor(
    private readonly calendar: CalendarService,
    private readonly logger: Logger,
  ) {}

  /** Adds the jobs and records their schedules; a new (or changed) schedule starts at its next time after `now`. */
  async register(jobs: readonly CalendarJob[], now: Date): Promise<void> {
    for (const job of jobs) {
      this.jobs.set(job.name, job);
      await this.calendar.register(job.name, job.schedule, nextCronTime(job.schedule, now).getTime());
    }
  }

  async run(now: number): Promise<CalendarRun> {
    const names = [...this.jobs.keys()];
    const ran: string[] = [];
    for (const due of await this.calendar.due(names, now)) {
      const job = this.jobs.get(due.name);
      if (!job) continue;
      const next = nextCronTime(job.schedule, new Date(Math.max(now, due.nextRunAt))).getTime();
      if (!(await this.calendar.take(job.name, due.nextRunAt, next))) continue;
      ran.push(job.name);
      this.logger.debug('calendar job taken', { job: job.name, period: due.nextRunAt });
      await this.calendar.finished(job.name, await this.runJob(job, now));
    }
    return { ran, next: await this.calendar.nextDueAt(names) };
  }

  /** Runs one job; its failure is logged and recorded, never thrown. */
  private async runJob(job: CalendarJob, now: number): Promise<string | null> {
    try {
      await job.run(new Date(now));
      return null;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.error('job failed', { job: job.name, error: message });
      return message;
    }
  }
}
