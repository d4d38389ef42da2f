import { Repo } from './repo.js';

export interface DkimKeyRecord {
  domain: string;
  selector: string;
  privateKeyPem: string;
  /** The base64 SubjectPublicKeyInfo, as the DNS TXT record's p= tag carries it. */
  publicKeyB64: string;
  createdAt: number;
}

/** One DKIM signing key per domain (migration 003). */
export class DkimKeyRepo extends Repo {
  /** Replaces the domain's key: a new key takes effect once its TXT record is published. */
  put(record: DkimKeyRecord): void {
    this.sql(
      `INSERT INTO dkim_keys (domain, selector, private_key_pem, public_key_b64, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (domain) DO UPDATE SET selector = excluded.selector, private_key_pem = excluded.private_key_pem,
         public_key_b64 = excluded.public_key_b64, created_at = excluded.created_at`,
    ).run(record.domain, record.selector, record.privateKeyPem, record.publicKeyB64, record.createdAt);
  }

  byDomain(domain: string): DkimKeyRecord | null {
    const row = this.sql(
      `SELECT domain, selector, private_key_pem AS privateKeyPem, public_key_b64 AS publicKeyB64, created_at AS createdAt
       FROM dkim_keys WHERE domain = ?`,
    ).get(domain) as DkimKeyRecord | undefined;
    return row ?? null;
  }
}
