import type { Migration } from './migration.js';

/**
 * The calendar's jobs (src/store/scheduled-jobs.ts): each job's next run is a due row, taken by
 * one conditional update, so a period's run happens once whichever process takes it.
 */
export const scheduledJobs: Migration = {
  version: 80,
  name: 'scheduled_jobs',
  sql: `
    CREATE TABLE scheduled_jobs (
      name TEXT PRIMARY KEY,
      schedule TEXT NOT NULL,
      next_run_at INTEGER NOT NULL,
      last_started_at INTEGER,
      last_finished_at INTEGER,
      last_error TEXT
    );
  `,
};
