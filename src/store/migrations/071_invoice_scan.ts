import type { Migration } from './migration.js';

/**
 * A Polygon invoice's scan cursor: the last block whose transfers to its address are all
 * recorded (final at the required confirmations), so each look reads only the blocks after it.
 */
export const invoiceScan: Migration = {
  version: 71,
  name: 'invoice_scan',
  sql: `ALTER TABLE invoices ADD COLUMN scanned_block INTEGER;`,
};
