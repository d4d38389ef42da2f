import type { Migration } from './migration.js';

/** A limited key may be a sandbox key: its sends are validated, charged to nobody and never leave the host (src/services/sending/sandbox.ts). */
export const sandboxKeys: Migration = {
  version: 53,
  name: 'sandbox_keys',
  sql: `ALTER TABLE access_key_policies ADD COLUMN sandbox INTEGER NOT NULL DEFAULT 0;`,
};
