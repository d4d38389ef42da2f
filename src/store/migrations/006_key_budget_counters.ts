import type { Migration } from './migration.js';

/**
 * Access-key total budgets in O(1). Counting a key's units over all its recipient rows grew with
 * every send, inside the accept transaction (docs/contributing/benchmarks.md). Triggers keep a
 * per-key count of units held, in the same statement as the row change that takes or releases a
 * unit, so it stays equal to the row-derived count: a unit is a recipient row with
 * credit_reserved = 1 and refunded = 0. Rows deleted later (retention) do not give units back:
 * total budgets never reset.
 *
 * Daily usage still counts rows since local midnight, through a partial index that holds
 * only units, so that count is bounded by one day's sends.
 */
export const keyBudgetCounters: Migration = {
  version: 6,
  name: 'key_budget_counters',
  sql: `
    ALTER TABLE access_key_policies ADD COLUMN total_units_held INTEGER NOT NULL DEFAULT 0;
    UPDATE access_key_policies SET total_units_held = (
      SELECT count(*) FROM submission_recipients r
      WHERE r.key_id = access_key_policies.key_id AND r.credit_reserved = 1 AND r.refunded = 0
    );

    CREATE TRIGGER access_key_unit_taken AFTER INSERT ON submission_recipients
    WHEN NEW.credit_reserved = 1 AND NEW.refunded = 0
    BEGIN
      UPDATE access_key_policies SET total_units_held = total_units_held + 1 WHERE key_id = NEW.key_id;
    END;

    CREATE TRIGGER access_key_unit_released AFTER UPDATE OF refunded ON submission_recipients
    WHEN NEW.credit_reserved = 1 AND OLD.refunded = 0 AND NEW.refunded = 1
    BEGIN
      UPDATE access_key_policies SET total_units_held = total_units_held - 1 WHERE key_id = NEW.key_id;
    END;

    CREATE INDEX submission_recipients_key_units ON submission_recipients(key_id, created_at)
      WHERE credit_reserved = 1 AND refunded = 0;
  `,
};
