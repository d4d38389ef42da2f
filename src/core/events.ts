import type { RecipientStatus } from './types.js';

/** Outbox topics (DESIGN.md rule 6): facts written in the transaction that made them true. */
export const MESSAGE_STORED = 'message.stored';

/** A message was stored in a folder; the webhook dispatcher turns INBOX ones into events. */
export interface MessageStoredEvent {
  mailboxId: string;
  accountId: string;
  folder: string;
  uidValidity: string;
  uid: string;
  storedAt: number;
}

/** A recipient of an outgoing submission changed state (written on acceptance too). */
export const OUTBOUND_RECIPIENT_UPDATED = 'outbound.recipient_updated';

export interface OutboundRecipientUpdatedEvent {
  accountId: string;
  submissionId: string;
  recipient: string;
  status: RecipientStatus;
  smtpCode?: number;
  enhancedCode?: string;
  diagnostic?: string;
  /** Unix milliseconds. */
  at: number;
}
