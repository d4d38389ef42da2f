import type { Migration } from './migration.js';

/**
 * The UIDVALIDITY of the Drafts folder a draft's copy went into (src/services/drafts/drafts.ts).
 * A UID names a message only together with its folder's UIDVALIDITY (RFC 3501 section 2.3.1.1):
 * when a client deletes Drafts and it is made again, UIDs start at 1 again, and a draft would
 * otherwise remove another message with its old copy's UID. Drafts from before stay NULL and
 * keep the old rule (the UID alone), as nothing says which folder they went into.
 */
export const draftCopyValidity: Migration = {
  version: 73,
  name: 'draft_copy_validity',
  sql: `
    ALTER TABLE drafts ADD COLUMN folder_uid_validity INTEGER;
  `,
};
