import type { Db } from './db.js';
import type { LargeValueRepo } from './large-values.js';
import { Repo } from './repo.js';

/**
 * Messages' raw bytes exactly as received (`message_raw`): in the row, or, for a message
 * written in pieces ahead of its commit (migration 84), named by its value (`raw_value_id`)
 * with no bytes in the row. Every read and write of the raw bytes goes through here, so both
 * forms read the same.
 */
export class MessageRawRepo extends Repo {
  constructor(
    db: Db,
    private readonly largeValues: LargeValueRepo,
  ) {
    super(db);
  }

  /** Inside the storing transaction: `valueId` names the bytes written ahead of it. */
  insert(rowId: number, raw: Buffer, valueId: number | undefined): void {
    if (valueId === undefined) {
      this.sql('INSERT INTO message_raw (message_rowid, raw) VALUES (?, ?)').run(rowId, raw);
      return;
    }
    this.largeValues.attach(valueId);
    this.sql("INSERT INTO message_raw (message_rowid, raw, raw_value_id) VALUES (?, X'', ?)").run(rowId, valueId);
  }

  /** A copy's raw bytes: the same row, or a copy of the value it names (copied inside SQLite either way). */
  copy(fromRowId: number, toRowId: number): void {
    const valueId = this.sql('SELECT raw_value_id FROM message_raw WHERE message_rowid = ?').pluck().get(fromRowId) as number | null | undefined;
    if (valueId === null || valueId === undefined) {
      this.sql('INSERT INTO message_raw (message_rowid, raw) SELECT ?, raw FROM message_raw WHERE message_rowid = ?').run(toRowId, fromRowId);
      return;
    }
    this.sql("INSERT INTO message_raw (message_rowid, raw, raw_value_id) VALUES (?, X'', ?)").run(toRowId, this.largeValues.copy(valueId));
  }

  bytes(rowId: number): Buffer | null {
    const row = this.sql('SELECT raw, raw_value_id AS valueId FROM message_raw WHERE message_rowid = ?').get(rowId) as
      | { raw: Buffer; valueId: number | null }
      | undefined;
    if (!row) return null;
    return row.valueId === null ? row.raw : this.largeValues.bytes(row.valueId);
  }

  /** Bytes `start` to `end` of a message's raw form, read without loading the rest (one attachment). */
  range(rowId: number, start: number, end: number): Buffer {
    const row = this.sql('SELECT substr(raw, ?, ?) AS part, raw_value_id AS valueId FROM message_raw WHERE message_rowid = ?').get(
      start + 1,
      Math.max(0, end - start),
      rowId,
    ) as { part: Buffer | null; valueId: number | null } | undefined;
    if (row?.valueId) return this.largeValues.range(row.valueId, start, end);
    return row?.part ?? Buffer.alloc(0);
  }

  /** The raw bytes of every stored message together (what the database holds beyond its own structures). */
  totalBytes(): number {
    return this.sql('SELECT coalesce(sum(coalesce((SELECT v.size FROM stored_values v WHERE v.id = r.raw_value_id), length(r.raw))), 0) FROM message_raw r')
      .pluck()
      .get() as number;
  }
}
