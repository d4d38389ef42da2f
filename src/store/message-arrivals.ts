import type { TlsSessionInfo } from '../core/tls.js';
import { Repo } from './repo.js';

/** How a stored message reached the MX (migration 40): over TLS or in the clear. */
export interface Arrival {
  tls: TlsSessionInfo | null;
}

interface ArrivalRow {
  tls_version: string | null;
  tls_cipher: string | null;
}

export class MessageArrivalRepo extends Repo {
  record(messageRowId: number, arrival: Arrival): void {
    this.sql('INSERT INTO message_arrivals (message_rowid, tls_version, tls_cipher) VALUES (?, ?, ?)').run(
      messageRowId,
      arrival.tls?.version ?? null,
      arrival.tls?.cipher ?? null,
    );
  }

  /** Null for a message that did not arrive by SMTP. */
  of(messageRowId: number): Arrival | null {
    const row = this.sql('SELECT tls_version, tls_cipher FROM message_arrivals WHERE message_rowid = ?').get(messageRowId) as ArrivalRow | undefined;
    if (!row) return null;
    return { tls: row.tls_version !== null && row.tls_cipher !== null ? { version: row.tls_version, cipher: row.tls_cipher } : null };
  }
}
