import type { Migration } from './migration.js';

/**
 * Where the raw body starts when a message's stored text is that body as it is
 * (src/mime/plain-body.ts): SEARCH TEXT and BODY then look in the raw bytes instead of
 * inflating the packed text. Null (the rows stored before) keeps the search on the text.
 */
export const plainTextStart: Migration = {
  version: 54,
  name: 'plain_text_start',
  sql: 'ALTER TABLE message_bodies ADD COLUMN plain_text_start INTEGER;',
};
