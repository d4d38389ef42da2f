import type { Db } from './db.js';
import { keywordsOf } from './messages.js';
import { Repo } from './repo.js';

/** The server-wide model's row (migration 75). */
export const SERVER_MODEL_ID = 1;

/** A statistical model and how many judgments of each kind trained it. */
export interface JunkModel {
  id: number;
  ham: number;
  junk: number;
}

/** Per feature: [feature hash, ham count, junk count]. */
export type FeatureCounts = [number, number, number];

/** What one message's training added (junk_trained), to be taken back exactly. */
export interface TrainedMessage {
  asJunk: boolean;
  /** Whether the server-wide model got it too. */
  server: boolean;
  sender: string | null;
  features: Int32Array;
}

/** A message as its training needs it: where it is and what its keywords say. */
export interface TrainingSubject {
  rowId: number;
  mailboxId: string;
  /** The mailbox's address (the server-wide model learns from the operator's mailboxes). */
  address: string;
  keywords: string[];
  trained: TrainedMessage | null;
}

/** The junk filter's tables (migration 75): models, feature counts, senders, trained messages and the training queue. */
export class JunkRepo extends Repo {
  constructor(db: Db) {
    super(db);
  }

  model(id: number): JunkModel {
    return this.sql('SELECT id, ham, junk FROM junk_models WHERE id = ?').get(id) as JunkModel;
  }

  modelOfMailbox(mailboxId: string): JunkModel | null {
    return (this.sql('SELECT id, ham, junk FROM junk_models WHERE mailbox_id = ?').get(mailboxId) as JunkModel | undefined) ?? null;
  }

  /** Inside a transaction: the mailbox's model, made empty when it has none. */
  ensureModel(mailboxId: string): JunkModel {
    this.sql('INSERT OR IGNORE INTO junk_models (mailbox_id) VALUES (?)').run(mailboxId);
    return this.modelOfMailbox(mailboxId) as JunkModel;
  }

  /** The counts of those of `features` the model has seen; one indexed read per feature, in one statement. */
  counts(modelId: number, features: Int32Array): FeatureCounts[] {
    return this.sql('SELECT feature, ham, junk FROM junk_features WHERE model_id = ? AND feature IN (SELECT value FROM json_each(?))')
      .raw()
      .all(modelId, featureList(features)) as FeatureCounts[];
  }

  /** A model's counts in feature order, after `afterFeature` (loading it into memory page by page). */
  featurePage(modelId: number, afterFeature: number, limit: number): FeatureCounts[] {
    return this.sql('SELECT feature, ham, junk FROM junk_features WHERE model_id = ? AND feature > ? ORDER BY feature LIMIT ?')
      .raw()
      .all(modelId, afterFeature, limit) as FeatureCounts[];
  }

  /** Inside a transaction: one message's features counted (`delta` 1) or taken back (-1) as ham or junk. */
  count(modelId: number, features: Int32Array, asJunk: boolean, delta: 1 | -1): void {
    const list = featureList(features);
    const [ham, junk] = asJunk ? [0, delta] : [delta, 0];
    if (delta > 0) {
      this.sql(
        `INSERT INTO junk_features (model_id, feature, ham, junk) SELECT ?, value, ?, ? FROM json_each(?) WHERE true
         ON CONFLICT (model_id, feature) DO UPDATE SET ham = ham + excluded.ham, junk = junk + excluded.junk`,
      ).run(modelId, ham, junk, list);
    } else {
      this.sql(
        `UPDATE junk_features SET ham = max(0, ham + ?), junk = max(0, junk + ?)
         WHERE model_id = ? AND feature IN (SELECT value FROM json_each(?))`,
      ).run(ham, junk, modelId, list);
      this.sql('DELETE FROM junk_features WHERE model_id = ? AND feature IN (SELECT value FROM json_each(?)) AND ham = 0 AND junk = 0').run(modelId, list);
    }
    this.sql('UPDATE junk_models SET ham = max(0, ham + ?), junk = max(0, junk + ?) WHERE id = ?').run(ham, junk, modelId);
  }

  /** How many messages from `address` the mailbox judged ham and junk. */
  sender(mailboxId: string, address: string): { ham: number; junk: number } | null {
    return (
      (this.sql('SELECT ham, junk FROM junk_senders WHERE mailbox_id = ? AND address = ?').get(mailboxId, address) as
        | { ham: number; junk: number }
        | undefined) ?? null
    );
  }

  countSender(mailboxId: string, address: string, asJunk: boolean, delta: 1 | -1): void {
    const [ham, junk] = asJunk ? [0, delta] : [delta, 0];
    this.sql(
      `INSERT INTO junk_senders (mailbox_id, address, ham, junk) VALUES (?, ?, max(0, ?), max(0, ?))
       ON CONFLICT (mailbox_id, address) DO UPDATE SET ham = max(0, ham + ?), junk = max(0, junk + ?)`,
    ).run(mailboxId, address, ham, junk, ham, junk);
    this.sql('DELETE FROM junk_senders WHERE mailbox_id = ? AND address = ? AND ham = 0 AND junk = 0').run(mailboxId, address);
  }

  /** Whether the account ever sent to the address (submission_recipients, kept while its submissions are). */
  hasWrittenTo(accountId: string, address: string): boolean {
    return this.sql('SELECT 1 FROM submission_recipients WHERE account_id = ? AND address = ? LIMIT 1').get(accountId, address) !== undefined;
  }

  /** The message's mailbox, keywords and training; null when it is gone. */
  subject(rowId: number): TrainingSubject | null {
    const row = this.sql(
      `SELECT f.mailbox_id AS mailboxId, b.address, m.keywords FROM messages m
       JOIN folders f ON f.id = m.folder_id JOIN mailboxes b ON b.id = f.mailbox_id WHERE m.id = ?`,
    ).get(rowId) as { mailboxId: string; address: string; keywords: string | null } | undefined;
    if (!row) return null;
    return { rowId, mailboxId: row.mailboxId, address: row.address, keywords: keywordsOf(row.keywords), trained: this.trained(rowId) };
  }

  trained(rowId: number): TrainedMessage | null {
    const row = this.sql('SELECT as_junk, server, sender, features FROM junk_trained WHERE message_rowid = ?').get(rowId) as
      | { as_junk: number; server: number; sender: string | null; features: Buffer }
      | undefined;
    if (!row) return null;
    const { buffer, byteOffset, byteLength } = row.features;
    return {
      asJunk: row.as_junk === 1,
      server: row.server === 1,
      sender: row.sender,
      features: new Int32Array(buffer.slice(byteOffset, byteOffset + byteLength)),
    };
  }

  setTrained(rowId: number, trained: TrainedMessage | null): void {
    if (trained === null) {
      this.sql('DELETE FROM junk_trained WHERE message_rowid = ?').run(rowId);
      return;
    }
    const features = Buffer.from(trained.features.buffer, trained.features.byteOffset, trained.features.byteLength);
    this.sql('INSERT OR REPLACE INTO junk_trained (message_rowid, as_junk, server, sender, features) VALUES (?, ?, ?, ?, ?)').run(
      rowId,
      trained.asJunk ? 1 : 0,
      trained.server ? 1 : 0,
      trained.sender,
      features,
    );
  }

  /** A copy (IMAP COPY and MOVE) carries its original's training and its place in the queue. */
  copied(fromRowId: number, toRowId: number): void {
    this.sql(
      'INSERT INTO junk_trained (message_rowid, as_junk, server, sender, features) SELECT ?, as_junk, server, sender, features FROM junk_trained WHERE message_rowid = ?',
    ).run(toRowId, fromRowId);
    this.sql('INSERT OR IGNORE INTO junk_queue (message_rowid) SELECT ? FROM junk_queue WHERE message_rowid = ?').run(toRowId, fromRowId);
  }

  queue(rowId: number): void {
    this.sql('INSERT OR IGNORE INTO junk_queue (message_rowid) VALUES (?)').run(rowId);
  }

  queued(limit: number): number[] {
    return this.sql('SELECT message_rowid FROM junk_queue ORDER BY message_rowid LIMIT ?').pluck().all(limit) as number[];
  }

  isQueued(rowId: number): boolean {
    return this.sql('SELECT 1 FROM junk_queue WHERE message_rowid = ?').get(rowId) !== undefined;
  }

  dequeue(rowId: number): void {
    this.sql('DELETE FROM junk_queue WHERE message_rowid = ?').run(rowId);
  }
}

/** A JSON array of the hashes, which json_each reads in one statement (no statement per feature). */
const featureList = (features: Int32Array): string => `[${features.join(',')}]`;
