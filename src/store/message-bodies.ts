import type { MessageStructure, PackedTexts, StagedValues, StoredBody, StoredContent } from '../core/stored-message.js';
import { STORED_BODY_VERSION } from '../core/stored-message.js';
import { unpackTexts, type PackedText } from '../core/packed-text.js';
import { packStructure, unpackStructure } from './body-encoding.js';
import type { Db } from './db.js';
import type { LargeValueRepo } from './large-values.js';
import { Repo } from './repo.js';

interface BodyRow {
  version: number;
  text: PackedText;
  html: PackedText | null;
  extracted_text: PackedText | null;
  extracted_html: PackedText | null;
  content_json: string;
  structure_json: string;
  /** The texts written ahead of the commit (migration 84): their value ids, by name. */
  values_json: string | null;
}

type StagedTexts = NonNullable<StagedValues['texts']>;

/**
 * The stored bodies of messages (migration 11, src/core/stored-message.ts), and the list
 * of messages still without one (body_backfill). A row is written once, with its message
 * or by the backfill, and never changes; a row of an older builder version counts as
 * missing.
 */
export class MessageBodyRepo extends Repo {
  constructor(
    db: Db,
    private readonly largeValues: LargeValueRepo,
  ) {
    super(db);
  }

  /** `staged` names the texts written ahead of this commit (Store.stage): their columns stay empty. */
  insert(rowId: number, body: StoredBody, staged: StagedTexts = {}): void {
    const { text: _text, html: _html, extractedText: _extractedText, extractedHtml: _extractedHtml, ...rest } = body.content;
    // The texts come packed by the body's builder (src/core/packed-text.ts).
    const packed = withoutStaged(body.packed, staged);
    for (const valueId of Object.values(staged)) this.largeValues.attach(valueId);
    // A body built again (a newer builder) replaces the old row; deleted first, so its values go with it (migration 84's trigger).
    this.sql('DELETE FROM message_bodies WHERE message_rowid = ?').run(rowId);
    this.sql(
      `INSERT INTO message_bodies
         (message_rowid, version, text, html, extracted_text, extracted_html, content_json, structure_json, plain_text_start, values_json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      rowId,
      body.version,
      packed.text,
      packed.html,
      packed.extractedText,
      packed.extractedHtml,
      JSON.stringify(rest),
      packStructure(body.structure),
      body.plainTextStart,
      Object.keys(staged).length > 0 ? JSON.stringify(staged) : null,
    );
    // What a FETCH sends, in a table of its own (migration 46) so a sync reads only these bytes.
    this.sql('INSERT OR REPLACE INTO message_wire (message_rowid, version, envelope, body_structure) VALUES (?, ?, ?, ?)').run(
      rowId,
      body.version,
      Buffer.from(body.wire.envelope, 'latin1'),
      Buffer.from(body.wire.bodyStructure, 'latin1'),
    );
    this.sql('DELETE FROM body_backfill WHERE message_rowid = ?').run(rowId);
  }

  /** The body of one message for its copy (IMAP COPY, MOVE); false when it has none of this version to copy. */
  copy(fromRowId: number, toRowId: number): boolean {
    const copied =
      this.sql(
        `INSERT INTO message_bodies (message_rowid, version, text, html, extracted_text, extracted_html, content_json, structure_json, plain_text_start, values_json)
       SELECT ?, version, text, html, extracted_text, extracted_html, content_json, structure_json, plain_text_start, values_json FROM message_bodies
       WHERE message_rowid = ? AND version = ?`,
      ).run(toRowId, fromRowId, STORED_BODY_VERSION).changes > 0;
    if (copied) this.copyValues(toRowId);
    this.sql(
      `INSERT INTO message_wire (message_rowid, version, envelope, body_structure)
       SELECT ?, version, envelope, body_structure FROM message_wire WHERE message_rowid = ? AND version = ?`,
    ).run(toRowId, fromRowId, STORED_BODY_VERSION);
    return copied;
  }

  /** A copied row names its source's values: it gets values of its own, each row owning its values. */
  private copyValues(rowId: number): void {
    const valuesJson = this.sql('SELECT values_json FROM message_bodies WHERE message_rowid = ?').pluck().get(rowId) as string | null;
    if (valuesJson === null) return;
    const copies = Object.fromEntries(Object.entries(JSON.parse(valuesJson) as StagedTexts).map(([name, valueId]) => [name, this.largeValues.copy(valueId)]));
    this.sql('UPDATE message_bodies SET values_json = ? WHERE message_rowid = ?').run(JSON.stringify(copies), rowId);
  }

  /**
   * RFC822.SIZE is the CRLF form's size (src/mime/crlf.ts); a message stored before its body
   * was built (or by an older builder) gets it from the body built since.
   */
  setWireSize(rowId: number, size: number): void {
    this.sql('UPDATE messages SET size = ? WHERE id = ? AND size <> ?').run(size, rowId, size);
  }

  /** Listed for the backfill: the message was stored without its body. */
  queueBackfill(rowId: number): void {
    this.sql('INSERT OR IGNORE INTO body_backfill (message_rowid) VALUES (?)').run(rowId);
  }

  /** The content a read answers from, or null when it has to be built first. */
  content(rowId: number): StoredContent | null {
    const row = this.sql(
      'SELECT version, text, html, extracted_text, extracted_html, content_json, values_json FROM message_bodies WHERE message_rowid = ?',
    ).get(rowId) as Omit<BodyRow, 'structure_json'> | undefined;
    if (!row || row.version !== STORED_BODY_VERSION) return null;
    const packed = { text: row.text, html: row.html, extractedText: row.extracted_text, extractedHtml: row.extracted_html };
    return {
      ...unpackTexts(this.withValues(packed, row.values_json)),
      ...(JSON.parse(row.content_json) as Omit<StoredContent, 'text' | 'html' | 'extractedText' | 'extractedHtml'>),
    };
  }

  /** The MIME tree and ENVELOPE an IMAP FETCH answers from, or null when it has to be built first. */
  structure(rowId: number): MessageStructure | null {
    const row = this.sql('SELECT version, structure_json FROM message_bodies WHERE message_rowid = ?').get(rowId) as
      | Pick<BodyRow, 'version' | 'structure_json'>
      | undefined;
    return row && row.version === STORED_BODY_VERSION ? unpackStructure(row.structure_json) : null;
  }

  /** The packed texts with those written ahead of their commit read back from their values. */
  withValues(packed: PackedTexts, valuesJson: string | null): PackedTexts {
    if (valuesJson === null) return packed;
    const values = Object.entries(JSON.parse(valuesJson) as StagedTexts).map(([name, valueId]) => [name, this.largeValues.text(valueId)]);
    return { ...packed, ...Object.fromEntries(values) };
  }

  /** The next messages without a body, oldest first (their raw bytes are read one at a time). */
  backfillIds(limit: number): number[] {
    return (this.sql('SELECT message_rowid AS id FROM body_backfill ORDER BY message_rowid LIMIT ?').all(limit) as { id: number }[]).map((row) => row.id);
  }

  hasBackfill(): boolean {
    return this.sql('SELECT 1 FROM body_backfill LIMIT 1').get() !== undefined;
  }

  /** Drops a listed message that has no raw bytes to build from (it cannot be read either). */
  dropFromBackfill(rowId: number): void {
    this.sql('DELETE FROM body_backfill WHERE message_rowid = ?').run(rowId);
  }
}

/** The packed texts as the row holds them: a text written ahead of the commit is read from its value, so its column is empty. */
const withoutStaged = (packed: PackedTexts, staged: StagedTexts): PackedTexts => ({
  ...packed,
  ...Object.fromEntries(Object.keys(staged).map((name) => [name, ''])),
});
