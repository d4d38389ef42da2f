import type { Invoice, InvoiceStatus, RecordedTransfer } from '../core/payments.js';
import { Repo } from './repo.js';

const COLUMNS = `token, account_id AS accountId, idempotency_key AS idempotencyKey, request_hash AS requestHash, kind, method,
  status, amount_cents AS amountCents, credits, periods, domain_id AS domainId, expires_at AS expiresAt, created_at AS createdAt,
  applied_at AS appliedAt, checkout_session AS checkoutSession, checkout_url AS checkoutUrl, address_index AS addressIndex,
  address, token_contract AS tokenContract, token_amount AS tokenAmount, start_block AS startBlock, scanned_block AS scannedBlock, confirmations`;

const TRANSFER_COLUMNS = `invoice_token AS invoiceToken, tx_hash AS txHash, log_index AS logIndex, block_number AS blockNumber,
  block_time AS blockTime, sender, amount, role, recorded_at AS recordedAt`;

export type NewInvoice = Omit<Invoice, 'appliedAt' | 'checkoutSession' | 'checkoutUrl' | 'confirmations' | 'scannedBlock'>;

/** Invoices, the transfers recorded for them, and verified card callbacks (migration 70). */
export class InvoiceRepo extends Repo {
  insert(invoice: NewInvoice): void {
    this.sql(
      `INSERT INTO invoices (token, account_id, idempotency_key, request_hash, kind, method, status, amount_cents, credits, periods,
         domain_id, expires_at, created_at, address_index, address, token_contract, token_amount, start_block)
       VALUES (@token, @accountId, @idempotencyKey, @requestHash, @kind, @method, @status, @amountCents, @credits, @periods,
         @domainId, @expiresAt, @createdAt, @addressIndex, @address, @tokenContract, @tokenAmount, @startBlock)`,
    ).run(invoice);
  }

  byToken(token: string): Invoice | null {
    return (this.sql(`SELECT ${COLUMNS} FROM invoices WHERE token = ?`).get(token) as Invoice | undefined) ?? null;
  }

  byIdempotencyKey(accountId: string, idempotencyKey: string): Invoice | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM invoices WHERE account_id = ? AND idempotency_key = ?`).get(accountId, idempotencyKey);
    return (row as Invoice | undefined) ?? null;
  }

  bySession(sessionId: string): Invoice | null {
    return (this.sql(`SELECT ${COLUMNS} FROM invoices WHERE checkout_session = ?`).get(sessionId) as Invoice | undefined) ?? null;
  }

  /** Newest first. */
  listForAccount(accountId: string, limit: number): Invoice[] {
    return this.sql(`SELECT ${COLUMNS} FROM invoices WHERE account_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`).all(accountId, limit) as Invoice[];
  }

  /** Polygon invoices whose address is still read: open ones, and those that expired at or after `since`. */
  polygonToWatch(since: number): Invoice[] {
    return this.sql(
      `SELECT ${COLUMNS} FROM invoices WHERE method = 'polygon' AND (expires_at >= ? OR status IN ('pending', 'confirming')) ORDER BY expires_at`,
    ).all(since) as Invoice[];
  }

  /** The next derivation index: one past the highest ever given (invoices are never deleted). */
  nextAddressIndex(): number {
    return (this.sql('SELECT COALESCE(MAX(address_index), -1) + 1 AS next FROM invoices').get() as { next: number }).next;
  }

  setCheckout(token: string, sessionId: string, url: string | null): void {
    this.sql('UPDATE invoices SET checkout_session = ?, checkout_url = ? WHERE token = ?').run(sessionId, url, token);
  }

  /**
   * Moves an open invoice (pending or confirming) to `status`; false when it was no longer
   * open, so a second caller changes nothing. The one guard that applies an invoice once.
   */
  closeOpen(token: string, status: InvoiceStatus, appliedAt: number | null): boolean {
    return (
      this.sql(`UPDATE invoices SET status = ?, applied_at = ?, confirmations = NULL WHERE token = ? AND status IN ('pending', 'confirming')`).run(
        status,
        appliedAt,
        token,
      ).changes === 1
    );
  }

  /** pending <-> confirming, with the paying transfer's confirmations (null when pending). */
  markWaiting(token: string, status: 'pending' | 'confirming', confirmations: number | null): void {
    this.sql(`UPDATE invoices SET status = ?, confirmations = ? WHERE token = ? AND status IN ('pending', 'confirming')`).run(status, confirmations, token);
  }

  /** Moves the scan cursor forward (never back: a slower concurrent look may finish last). */
  advanceScan(token: string, block: number): void {
    this.sql('UPDATE invoices SET scanned_block = MAX(COALESCE(scanned_block, -1), ?) WHERE token = ?').run(block, token);
  }

  /** Records a transfer once; false when (tx, log index) was recorded before. */
  recordTransfer(transfer: RecordedTransfer): boolean {
    return (
      this.sql(
        `INSERT INTO invoice_transfers (tx_hash, log_index, invoice_token, block_number, block_time, sender, amount, role, recorded_at)
       VALUES (@txHash, @logIndex, @invoiceToken, @blockNumber, @blockTime, @sender, @amount, @role, @recordedAt) ON CONFLICT DO NOTHING`,
      ).run(transfer).changes === 1
    );
  }

  transfersOf(token: string): RecordedTransfer[] {
    return this.sql(`SELECT ${TRANSFER_COLUMNS} FROM invoice_transfers WHERE invoice_token = ? ORDER BY block_number, log_index`).all(
      token,
    ) as RecordedTransfer[];
  }

  /** Records a verified card callback once; false for a replay of the same event id. */
  recordCardEvent(event: { eventId: string; type: string; sessionId: string | null; outcome: string; receivedAt: number }): boolean {
    return (
      this.sql(
        `INSERT INTO card_events (event_id, type, session_id, outcome, received_at) VALUES (@eventId, @type, @sessionId, @outcome, @receivedAt)
       ON CONFLICT DO NOTHING`,
      ).run(event).changes === 1
    );
  }

  setCardEventOutcome(eventId: string, outcome: string): void {
    this.sql('UPDATE card_events SET outcome = ? WHERE event_id = ?').run(outcome, eventId);
  }
}
