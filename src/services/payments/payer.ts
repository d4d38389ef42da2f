import type { Principal } from '../../core/types.js';
import { requireFullKey } from '../access/auth.js';

/**
 * Who pays, and for whom: the account that holds the invoice and receives what it buys (its
 * credits, its hosting as the holder of its domains). Two kinds pay through one service: an
 * agent with its full key, and a signed-in owner for itself (its own mailbox and domains).
 */
export interface Payer {
  accountId: string;
  kind: 'agent' | 'owner';
}

/** Only a full key pays; a limited key gets 403 (docs/agents/payments.md). */
export const agentPayer = (principal: Principal): Payer => {
  requireFullKey(principal);
  return { accountId: principal.accountId, kind: 'agent' };
};

/** The signed-in owner pays for its own account, which holds its domains (docs/operators/domains.md). */
export const ownerPayer = (session: { ownerId: string }): Payer => ({ accountId: session.ownerId, kind: 'owner' });

/** Where an owner's card checkout comes back to: the console's page of that invoice. */
export const consoleInvoicePath = (token: string): string => `/billing/payments/${token}`;
