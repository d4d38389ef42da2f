import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../../core/logger.js';

export interface Job {
  name: string;
  /** node-cron expression (with seconds). */
  schedule: string;
  run: () => unknown;
}

/** node-cron only schedules; each job is a runOnce that tests call directly (DESIGN.md). */
export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];

  constructor(private readonly logger: Logger) {}

  start(jobs: readonly Job[]): void {
    for (const job of jobs) {
      this.tasks.push(cron.schedule(job.schedule, () => this.runSafely(job), { name: job.name, noOverlap: true }));
    }
  }

  async runSafely(job: Job): Promise<void> {
    try {
      await job.run();
    } catch (error) {
      this.logger.error('job failed', { job: job.name, error: error instanceof Error ? error.message : String(error) });
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.tasks.map((task) => task.stop()));
    this.tasks.length = 0;
  }
}
