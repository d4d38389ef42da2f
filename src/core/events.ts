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

/**
 * A message was removed from a folder (a draft sent, changed or deleted). A notice for those
 * watching now (IMAP sessions report EXPUNGE), not an outbox fact: nothing must catch up on it.
 */
export const MESSAGE_REMOVED = 'message.removed';

export interface MessageRemovedEvent {
  mailboxId: string;
  folder: string;
  uid: string;
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
