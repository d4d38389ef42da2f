import type { AuthenticationVerdict } from '../../core/authentication.js';
import type { ParsedMessage } from '../../core/parsed-message.js';
import { withPrefix } from '../../mime/structure.js';
import type { Store } from '../../store/index.js';
import type { RecipientRecord } from '../../store/submissions.js';
import type { MessageAuthenticator } from '../mail/authentication.js';
import { INBOX, type MailboxService } from '../mail/mailbox.js';
import type { PreparedSubmission } from './sending.js';

/** What storing a submission's local copies needs. */
export interface LocalDelivery {
  store: Store;
  mailbox: MailboxService;
  authenticator: MessageAuthenticator;
  mailDomain: string;
}

/** Mail for our mail domain and for custom domains hosted here is stored at once, not sent out. */
export const isLocalDomain = (store: Store, mailDomain: string, domain: string): boolean =>
  domain === mailDomain || store.domains.provenByName(domain) !== null;

/**
 * Recipients on our mail domain or a custom domain hosted here are settled at once: stored
 * in their INBOX (delivered), or, with no such mailbox, failed with the credit refunded
 * once. Remote recipients stay queued for the delivery worker.
 */
export const deliverLocally = (deps: LocalDelivery, rows: RecipientRecord[], prepared: PreparedSubmission, parsed: ParsedMessage | null, now: number): void => {
  let local: { raw: Buffer; verdict: AuthenticationVerdict; parsed: ParsedMessage } | undefined;
  for (const row of rows) {
    if (row.status !== 'queued' || !parsed || !isLocalDomain(deps.store, deps.mailDomain, row.domain)) continue;
    const target = deps.mailbox.mailboxForRecipient(row.address);
    if (target) {
      local ??= stampLocal(deps.authenticator, prepared, parsed);
      deps.mailbox.append(target, INBOX, local.raw, local.parsed, { authentication: local.verdict });
      deps.store.submissions.transition(
        row.id,
        { status: 'delivered', diagnostic: 'stored in the local mailbox', nextAttemptAt: null, countAttempt: true },
        now,
        ['queued'],
      );
    } else {
      deps.store.submissions.transition(
        row.id,
        {
          status: 'failed',
          smtpCode: 550,
          enhancedCode: '5.1.1',
          diagnostic: 'no such mailbox on this service',
          nextAttemptAt: null,
          countAttempt: true,
        },
        now,
        ['queued'],
      );
      deps.store.submissions.refundOnce(row.id);
    }
  }
};

/** The recipient's copy: our verdict in front; the stored body's offsets move with it (or it is rebuilt by the backfill). */
const stampLocal = (
  authenticator: MessageAuthenticator,
  prepared: PreparedSubmission,
  parsed: ParsedMessage,
): { raw: Buffer; verdict: AuthenticationVerdict; parsed: ParsedMessage } => {
  const { raw, verdict, shift } = authenticator.internal(prepared.raw, prepared.fromAddress);
  return { raw, verdict, parsed: { ...parsed, body: shift !== null && parsed.body ? withPrefix(parsed.body, shift) : null } };
};
