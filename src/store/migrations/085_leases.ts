import type { Migration } from './migration.js';

/**
 * Claims that name their node and run out (docs/design.md, "Several processes on one store"):
 * a recipient being delivered, an event whose webhook attempt is in flight and a queued inbound
 * message being stored each carry the claiming node and a lease expiry, renewed while the work
 * runs. Another node takes over only a claim whose lease has run out (a claim made before this
 * migration has none: it is treated as run out). The calendar records which node took a run.
 */
export const leases: Migration = {
  version: 85,
  name: 'leases',
  sql: `
    ALTER TABLE submission_recipients ADD COLUMN claimed_by TEXT;
    ALTER TABLE submission_recipients ADD COLUMN lease_until INTEGER;
    ALTER TABLE webhook_events ADD COLUMN leased_by TEXT;
    ALTER TABLE webhook_events ADD COLUMN lease_until INTEGER;
    ALTER TABLE inbound_queue ADD COLUMN claimed_by TEXT;
    ALTER TABLE inbound_queue ADD COLUMN lease_until INTEGER;
    CREATE INDEX inbound_queue_leases ON inbound_queue (lease_until) WHERE lease_until IS NOT NULL;
    ALTER TABLE scheduled_jobs ADD COLUMN taken_by TEXT;
  `,
};
