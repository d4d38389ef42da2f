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
