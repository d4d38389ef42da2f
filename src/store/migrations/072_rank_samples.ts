import type { Migration } from './migration.js';

/**
 * Rank samples (src/store/rank-samples.ts): for some messages of a folder, how many messages
 * of the folder have a lower UID, so a deep page of the list starts its index walk at a
 * sample instead of at an end of the folder. Existing folders get a sample at every 4,096th
 * message (the default spacing then), in one ordered pass over the (folder_id, uid) index;
 * any spacing is correct, it only bounds how far a page walks.
 */
export const rankSamples: Migration = {
  version: 72,
  name: 'rank_samples',
  sql: `
    CREATE TABLE folder_rank_samples (
      folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
      uid INTEGER NOT NULL,
      below INTEGER NOT NULL,
      PRIMARY KEY (folder_id, uid)
    ) WITHOUT ROWID;

    INSERT INTO folder_rank_samples (folder_id, uid, below)
      SELECT folder_id, uid, below FROM (
        SELECT folder_id, uid, row_number() OVER (PARTITION BY folder_id ORDER BY uid) - 1 AS below FROM messages
      ) WHERE below > 0 AND below % 4096 = 0;
  `,
};
