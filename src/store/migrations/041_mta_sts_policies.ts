import type { Migration } from './migration.js';

/** MTA-STS policies of recipient domains (RFC 8461 section 5.1: cached for max_age, across restarts). */
export const mtaStsPolicies: Migration = {
  version: 41,
  name: 'mta_sts_policies',
  sql: `
    CREATE TABLE mta_sts_policies (
      domain TEXT PRIMARY KEY,
      policy_id TEXT NOT NULL,
      mode TEXT NOT NULL CHECK (mode IN ('enforce', 'testing', 'none')),
      mx_json TEXT NOT NULL,
      max_age INTEGER NOT NULL,
      fetched_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
  `,
};
