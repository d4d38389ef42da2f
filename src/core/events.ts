import type { RecipientStatus } from './types.js';

/** Changes (docs/design.md rule 6): facts recorded in the transaction that made them true. */
export const MESSAGE_STORED = 'message.stored';

/**
 * A stored message's text for the full-text index (a notice with its transaction, so a text is
 * heard of only once its message is committed): the index takes it from memory; what a stop
 * loses is found again at the next start (src/services/mail/search-index.ts).
 */
export const SEARCH_TEXT = 'search.text';

/** A message was stored in a folder; the event log records INBOX ones (src/services/webhooks/event-log.ts). */
export interface MessageStoredEvent {
  mailboxId: string;
  accountId: string;
  folder: string;
  uidValidity: string;
  uid: string;
  storedAt: number;
  /** Received mail the junk filter filed in the Junk folder (src/services/mail/inbound.ts). */
  junk?: true;
}

/**
 * Messages were removed from a folder (an expunge, a move, a draft sent, changed or deleted).
 * A notice for those watching now (IMAP sessions report EXPUNGE or VANISHED), not an outbox
 * fact: nothing must catch up on it, as sessions read what changed from the store.
 */
export const MESSAGE_REMOVED = 'message.removed';

export interface MessageRemovedEvent {
  mailboxId: string;
  folder: string;
  uids: string[];
}

/** Flags of messages in a folder changed (a notice: IMAP sessions report FETCH FLAGS). */
export const MESSAGE_FLAGS = 'message.flags';

/** A folder was deleted or renamed (a notice: a session that has it selected ends). */
export const FOLDER_CHANGED = 'folder.changed';

/** The payload of MESSAGE_FLAGS and FOLDER_CHANGED: which folder of which mailbox. */
export interface FolderNotice {
  mailboxId: string;
  folder: string;
}

/**
 * The MX queued a message during a burst (src/services/mail/inbound.ts): a notice that wakes
 * the inbound drain, which reads the queue itself.
 */
export const INBOUND_QUEUED = 'inbound.queued';

/**
 * A message's junk judgment ($Junk / $NotJunk) changed and its training is queued (a notice:
 * it wakes the junk trainer, which reads the junk_queue table itself).
 */
export const JUNK_JUDGED = 'junk.judged';

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
  /** Feedback about a delivered message (a sandbox complaint): the recipient reported it as spam. */
  feedback?: 'complaint';
  /** Unix milliseconds. */
  at: number;
}

/**
 * An event was logged for an account (webhook_events; after the commit): a notice that
 * wakes the account's event streams, which read the log themselves from their cursor.
 */
export const EVENT_LOGGED = 'event.logged';

export interface EventLoggedNotice {
  accountId: string;
  seq: number;
}

/**
 * Keys of an account stopped working (revoked, rotated away, expired; after the commit): a
 * notice that makes the account's event streams check their keys, as IMAP and SMTP submission
 * check theirs at each command. `accountId` null: keys of any account (the expiry sweep).
 */
export const KEYS_CLOSED = 'keys.closed';

export interface KeysClosedNotice {
  accountId: string | null;
}
