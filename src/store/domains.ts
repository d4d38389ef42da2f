import { Repo } from './repo.js';

export type DomainStatus = 'pending' | 'verified' | 'failed';

export interface DomainRecord {
  id: string;
  holderId: string;
  domain: string;
  status: DomainStatus;
  /** Why the domain is not (or no longer) verified, in words; null when verified. */
  statusReason: string | null;
  ownershipToken: string;
  dkimSelector: string;
  /** Sealed with the data folder's secret key (core/seal.ts). */
  dkimPrivateKey: string;
  /** Base64 SubjectPublicKeyInfo, the p= of the DKIM record. */
  dkimPublicKey: string;
  mtaStsId: string;
  /** The last check's results, as JSON; null before the first check. */
  resultsJson: string | null;
  checkedAt: number | null;
  /** When ownership was first proven; from then on the name is this holder's alone. */
  verifiedAt: number | null;
  addonExpiresAt: number | null;
  createdAt: number;
  deletedAt: number | null;
}

export type NewDomain = Omit<DomainRecord, 'status' | 'statusReason' | 'resultsJson' | 'checkedAt' | 'verifiedAt' | 'addonExpiresAt' | 'deletedAt'>;

export interface CheckOutcome {
  status: DomainStatus;
  statusReason: string | null;
  resultsJson: string;
  checkedAt: number;
}

const COLUMNS = `id, holder_id AS holderId, domain, status, status_reason AS statusReason, ownership_token AS ownershipToken,
  dkim_selector AS dkimSelector, dkim_private_key AS dkimPrivateKey, dkim_public_key AS dkimPublicKey, mta_sts_id AS mtaStsId,
  results_json AS resultsJson, checked_at AS checkedAt, verified_at AS verifiedAt, addon_expires_at AS addonExpiresAt,
  created_at AS createdAt, deleted_at AS deletedAt`;

/** Custom domains (migration 60). Only rows without deleted_at are live. */
export class DomainRepo extends Repo {
  insert(domain: NewDomain): void {
    this.sql(
      `INSERT INTO domains (id, holder_id, domain, status, ownership_token, dkim_selector, dkim_private_key, dkim_public_key, mta_sts_id, created_at)
       VALUES (@id, @holderId, @domain, 'pending', @ownershipToken, @dkimSelector, @dkimPrivateKey, @dkimPublicKey, @mtaStsId, @createdAt)`,
    ).run(domain);
  }

  /** A live domain by id. */
  byId(id: string): DomainRecord | null {
    return (this.sql(`SELECT ${COLUMNS} FROM domains WHERE id = ? AND deleted_at IS NULL`).get(id) as DomainRecord | undefined) ?? null;
  }

  /** The holder's live domains, oldest first (the first is the primary one). */
  ofHolder(holderId: string): DomainRecord[] {
    return this.sql(`SELECT ${COLUMNS} FROM domains WHERE holder_id = ? AND deleted_at IS NULL ORDER BY created_at, id`).all(holderId) as DomainRecord[];
  }

  /** The holder's live claim to a name, if any. */
  ofHolderByName(holderId: string, domain: string): DomainRecord | null {
    return (
      (this.sql(`SELECT ${COLUMNS} FROM domains WHERE holder_id = ? AND domain = ? AND deleted_at IS NULL`).get(holderId, domain) as
        | DomainRecord
        | undefined) ?? null
    );
  }

  /** The live domain whose ownership was proven, whoever holds it: the one that owns the name here. */
  provenByName(domain: string): DomainRecord | null {
    return (
      (this.sql(`SELECT ${COLUMNS} FROM domains WHERE domain = ? AND verified_at IS NOT NULL AND deleted_at IS NULL`).get(domain) as
        | DomainRecord
        | undefined) ?? null
    );
  }

  /** Every live domain, for the daily re-check, in a stable order. */
  live(): DomainRecord[] {
    return this.sql(`SELECT ${COLUMNS} FROM domains WHERE deleted_at IS NULL ORDER BY created_at, id`).all() as DomainRecord[];
  }

  /** Names of live domains that were verified and still are (for `agentpost doctor`). */
  verifiedNames(): string[] {
    return (this.sql(`SELECT DISTINCT domain FROM domains WHERE status = 'verified' AND deleted_at IS NULL ORDER BY domain`).all() as { domain: string }[]).map(
      (row) => row.domain,
    );
  }

  /** Records a check; `proven` sets verified_at the first time ownership is shown. */
  recordCheck(id: string, outcome: CheckOutcome, proven: boolean): void {
    this.sql(
      `UPDATE domains SET status = @status, status_reason = @statusReason, results_json = @resultsJson, checked_at = @checkedAt,
         verified_at = CASE WHEN @proven = 1 THEN COALESCE(verified_at, @checkedAt) ELSE verified_at END
       WHERE id = @id AND deleted_at IS NULL`,
    ).run({ ...outcome, id, proven: proven ? 1 : 0 });
  }

  markDeleted(id: string, at: number): boolean {
    return this.sql('UPDATE domains SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL').run(at, id).changes === 1;
  }

  /** Extends the domain's add-on from the later of now and its current end; returns the new end. */
  extendAddon(id: string, now: number, ms: number): number | null {
    const row = this.sql(
      `UPDATE domains SET addon_expires_at = MAX(COALESCE(addon_expires_at, 0), ?) + ? WHERE id = ? AND deleted_at IS NULL RETURNING addon_expires_at AS at`,
    ).get(now, ms, id) as { at: number } | undefined;
    return row ? row.at : null;
  }
}
