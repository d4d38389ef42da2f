import type { Store } from '../../store/index.js';
import type { InboxBaseline, WebhookEndpointRecord } from '../../store/webhooks.js';
import { INBOX } from '../mail/mailbox.js';

/** The account's INBOX as it is now: what a verification records as the baseline. */
export const currentInbox = async (store: Store, accountId: string): Promise<InboxBaseline | null> => {
  const mailbox = await store.accounts.mailboxOfAccount(accountId);
  if (!mailbox) return null;
  const folder = await store.folders.byName(mailbox.id, INBOX);
  if (!folder) return null;
  return { mailboxId: mailbox.id, uidValidity: String(folder.uidValidity), uid: folder.uidNext - 1 };
};

/**
 * docs/agents/webhooks.md, Baseline: a verified webhook pauses when the mailbox identity or INBOX
 * UIDVALIDITY changes, and stays paused until verified again. Returns the reason, or null
 * when the baseline still holds.
 */
export const baselineBroken = (endpoint: WebhookEndpointRecord, inbox: InboxBaseline | null): string | null => {
  if (!inbox || inbox.mailboxId !== endpoint.baselineMailboxId) return 'mailbox_changed';
  if (inbox.uidValidity !== endpoint.baselineUidValidity) return 'uid_validity_changed';
  return null;
};

/** Pauses the endpoint and cancels its queued events when its baseline broke; true when paused. */
export const pauseIfBaselineBroken = async (store: Store, endpoint: WebhookEndpointRecord, inbox?: InboxBaseline | null): Promise<boolean> => {
  if (endpoint.status !== 'verified') return false;
  const reason = baselineBroken(endpoint, inbox === undefined ? await currentInbox(store, endpoint.accountId) : inbox);
  if (!reason) return false;
  await store.transaction(async () => {
    if (await store.webhookEndpoints.pause(endpoint.id, reason)) await store.webhookEvents.cancelPending(endpoint.id, 'endpoint_paused');
  });
  endpoint.status = 'paused';
  endpoint.pausedReason = reason;
  return true;
};
