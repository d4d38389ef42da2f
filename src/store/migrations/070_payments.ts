import type { Migration } from './migration.js';

/**
 * Payments (docs/design.md "Payment request"). invoices: one per purchase, unique per (account,
 * Idempotency-Key); a card invoice names its Checkout Session, a Polygon invoice its
 * derivation index and address (both UNIQUE: an address is never given twice) and the exact
 * token amount (integer units as text: 18-decimal tokens pass 2^53). invoice_transfers: every
 * final Transfer to an invoice address, once per (transaction, log index), with the role it
 * played. card_events: every verified card callback, once per event id.
 */
export const payments: Migration = {
  version: 70,
  name: 'payments',
  sql: `
    CREATE TABLE invoices (
      token TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      idempotency_key TEXT NOT NULL,
      request_hash TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('mail_credits', 'domain_hosting', 'domain_addon')),
      method TEXT NOT NULL CHECK (method IN ('card', 'polygon')),
      status TEXT NOT NULL CHECK (status IN ('pending', 'confirming', 'applied', 'underpaid', 'expired', 'canceled')),
      amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
      credits INTEGER CHECK (credits > 0),
      periods INTEGER CHECK (periods BETWEEN 1 AND 12),
      domain_id TEXT,
      expires_at INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      applied_at INTEGER,
      checkout_session TEXT UNIQUE,
      checkout_url TEXT,
      address_index INTEGER UNIQUE CHECK (address_index BETWEEN 0 AND 2147483647),
      address TEXT UNIQUE,
      token_contract TEXT,
      token_amount TEXT,
      start_block INTEGER,
      confirmations INTEGER,
      UNIQUE (account_id, idempotency_key),
      CHECK ((kind = 'mail_credits') = (credits IS NOT NULL)),
      CHECK ((kind = 'mail_credits') = (periods IS NULL)),
      CHECK ((kind = 'domain_addon') = (domain_id IS NOT NULL)),
      CHECK ((method = 'polygon') = (address IS NOT NULL)),
      CHECK ((status = 'applied') = (applied_at IS NOT NULL))
    );
    CREATE INDEX invoices_account ON invoices(account_id, created_at);
    CREATE INDEX invoices_watch ON invoices(method, expires_at);

    CREATE TABLE invoice_transfers (
      tx_hash TEXT NOT NULL,
      log_index INTEGER NOT NULL,
      invoice_token TEXT NOT NULL REFERENCES invoices(token),
      block_number INTEGER NOT NULL,
      block_time INTEGER NOT NULL,
      sender TEXT NOT NULL,
      amount TEXT NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('payment', 'late', 'duplicate')),
      recorded_at INTEGER NOT NULL,
      PRIMARY KEY (tx_hash, log_index)
    );
    CREATE INDEX invoice_transfers_invoice ON invoice_transfers(invoice_token, block_number, log_index);

    CREATE TABLE card_events (
      event_id TEXT PRIMARY KEY,
      type TEXT NOT NULL,
      session_id TEXT,
      outcome TEXT NOT NULL,
      received_at INTEGER NOT NULL
    );
  `,
};
