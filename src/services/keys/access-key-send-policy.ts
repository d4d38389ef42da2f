import type { Principal } from '../../core/types.js';

/** The addresses of one send request that a limited key's lists restrict (docs/agents/keys.md). */
export interface SendAddresses {
  /** The sender address (the account's own address today). */
  from: string;
  replyTo: readonly string[];
  /** Every distinct To/Cc/Bcc recipient, normalized, suppressed ones included. */
  recipients: readonly string[];
}

/**
 * A limited key's policy on the send path. Both run inside the send service's accept transaction,
 * so a refusal rolls everything back (nothing charged or queued):
 * - `checkAddresses` first (403 when from/replyTo are not in allowedSenders or a recipient
 *   is not in allowedRecipients);
 * - `reserveUnits` after the account limits and before credits are reserved, with the
 *   number of recipients about to be charged. Budgets are derived from this key's
 *   recipient rows (store.submissions.countKeyUnitsSince(keyId, dayStart or 0)), so the
 *   units are taken by the rows the same transaction inserts and released by refundOnce.
 * A full key has nothing to check. `AccessKeyPolicyService` (access-key-policy.ts) implements this;
 * services/index.ts passes it to the SendingService.
 */
export interface AccessKeySendPolicy {
  checkAddresses(principal: Principal, addresses: SendAddresses): Promise<void>;
  reserveUnits(principal: Principal, units: number): Promise<void>;
}
