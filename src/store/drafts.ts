import { Repo } from './repo.js';

export type DraftStatus = 'pending' | 'approving' | 'sent' | 'rejected';

export interface DraftRecord {
  seq: number;
  id: string;
  accountId: string;
  keyId: string;
  requestJson: string;
  subject: string;
  recipientCount: number;
  status: DraftStatus;
  folderUid: number | null;
  /** The UIDVALIDITY of the Drafts folder the copy went into; null for drafts from before migration 73. */
  folderUidValidity: number | null;
  createdAt: number;
  updatedAt: number;
  decidedBy: string | null;
  decidedAt: number | null;
  reason: string | null;
  submissionId: string | null;
}

export interface DraftPageQuery {
  /** Only this key's drafts (a mail:draft key sees its own). */
  keyId?: string;
  beforeSeq?: number;
  limit: number;
}

const columns = (t: string): string => `${t}.seq, ${t}.id, ${t}.account_id AS accountId, ${t}.key_id AS keyId,
  ${t}.request_json AS requestJson, ${t}.subject, ${t}.recipient_count AS recipientCount, ${t}.status, ${t}.folder_uid AS folderUid,
  ${t}.folder_uid_validity AS folderUidValidity,
  ${t}.created_at AS createdAt, ${t}.updated_at AS updatedAt, ${t}.decided_by AS decidedBy, ${t}.decided_at AS decidedAt,
  ${t}.reason, ${t}.submission_id AS submissionId`;
const COLUMNS = columns('drafts');

/** Drafts (migration 031). Status changes are conditional on the status they leave. */
export class DraftRepo extends Repo {
  insert(draft: Omit<DraftRecord, 'seq' | 'decidedBy' | 'decidedAt' | 'reason' | 'submissionId'>): void {
    this.sql(
      `INSERT INTO drafts (id, account_id, key_id, request_json, subject, recipient_count, status, folder_uid, folder_uid_validity, created_at, updated_at)
       VALUES (@id, @accountId, @keyId, @requestJson, @subject, @recipientCount, @status, @folderUid, @folderUidValidity, @createdAt, @updatedAt)`,
    ).run(draft);
  }

  byId(id: string): DraftRecord | null {
    return (this.sql(`SELECT ${COLUMNS} FROM drafts WHERE id = ?`).get(id) as DraftRecord | undefined) ?? null;
  }

  /** Newest first. */
  page(accountId: string, query: DraftPageQuery): DraftRecord[] {
    return this.sql(`SELECT ${COLUMNS} FROM drafts WHERE account_id = ? AND (? IS NULL OR key_id = ?) AND seq < ? ORDER BY seq DESC LIMIT ?`).all(
      accountId,
      query.keyId ?? null,
      query.keyId ?? null,
      query.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      query.limit,
    ) as DraftRecord[];
  }

  /** The drafts of every agent an owner owns in the given states, newest first. */
  ofOwner(ownerId: string, statuses: readonly DraftStatus[], limit: number): DraftRecord[] {
    return this.sql(
      `SELECT ${columns('d')} FROM drafts d JOIN accounts a ON a.id = d.account_id
       WHERE a.owner_id = ? AND d.status IN (SELECT value FROM json_each(?)) ORDER BY d.seq DESC LIMIT ?`,
    ).all(ownerId, JSON.stringify(statuses), limit) as DraftRecord[];
  }

  countOpen(accountId: string): number {
    return this.sql("SELECT count(*) FROM drafts WHERE account_id = ? AND status IN ('pending', 'approving')").pluck().get(accountId) as number;
  }

  /** A pending draft's new content; false when it is no longer pending. */
  update(
    id: string,
    fields: { requestJson: string; subject: string; recipientCount: number; folderUid: number | null; folderUidValidity: number | null; updatedAt: number },
  ): boolean {
    return (
      this.sql(
        `UPDATE drafts SET request_json = @requestJson, subject = @subject, recipient_count = @recipientCount,
         folder_uid = @folderUid, folder_uid_validity = @folderUidValidity, updated_at = @updatedAt WHERE id = @id AND status = 'pending'`,
      ).run({ id, ...fields }).changes === 1
    );
  }

  /** Moves a draft from one of `from` to `to`, recording who decided and when; false when it was in none of them. */
  transition(
    id: string,
    from: readonly DraftStatus[],
    to: DraftStatus,
    fields: {
      decidedBy?: string | null;
      decidedAt?: number | null;
      reason?: string | null;
      submissionId?: string | null;
      /** null: the copy in Drafts is gone (sent or rejected). */
      folderUid?: null;
      updatedAt: number;
    },
  ): boolean {
    return (
      this.sql(
        `UPDATE drafts SET status = @to, updated_at = @updatedAt,
         decided_by = CASE WHEN @setDecided THEN @decidedBy ELSE decided_by END,
         decided_at = CASE WHEN @setDecided THEN @decidedAt ELSE decided_at END,
         reason = CASE WHEN @setReason THEN @reason ELSE reason END,
         submission_id = coalesce(@submissionId, submission_id),
         folder_uid = CASE WHEN @setFolder THEN @folderUid ELSE folder_uid END,
         folder_uid_validity = CASE WHEN @setFolder THEN NULL ELSE folder_uid_validity END
       WHERE id = @id AND status IN (SELECT value FROM json_each(@from))`,
      ).run({
        id,
        to,
        from: JSON.stringify(from),
        updatedAt: fields.updatedAt,
        setDecided: fields.decidedBy !== undefined ? 1 : 0,
        decidedBy: fields.decidedBy ?? null,
        decidedAt: fields.decidedAt ?? null,
        setReason: fields.reason !== undefined ? 1 : 0,
        reason: fields.reason ?? null,
        submissionId: fields.submissionId ?? null,
        setFolder: fields.folderUid !== undefined ? 1 : 0,
        folderUid: fields.folderUid ?? null,
      }).changes === 1
    );
  }

  delete(id: string): boolean {
    return this.sql("DELETE FROM drafts WHERE id = ? AND status = 'pending'").run(id).changes === 1;
  }
}
