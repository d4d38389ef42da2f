import { invalidInput } from '../../core/errors.js';
import { filterInOrder } from '../../core/sequential.js';
import type { ParsedMessage } from '../../core/parsed-message.js';
import type { SubmissionVia } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { RecipientRecord } from '../../store/submissions.js';
import type { MessageAuthenticator } from '../mail/authentication.js';
import type { MailboxDeliveryAgent } from '../mail/delivery-agent.js';
import { submissionReceivedHeader } from '../mail/trace.js';
import type { RecipientTarget } from './send-input.js';

/** What storing a submission's local copies needs. */
export interface LocalDelivery {
  store: Store;
  agent: MailboxDeliveryAgent;
  authenticator: MessageAuthenticator;
  mailDomain: string;
  /** `smtp.hostname`: the `by` of our trace field. */
  hostname: string;
}

/** The submission whose recipients are being settled. */
export interface LocalSubmission {
  id: string;
  via: SubmissionVia;
  fromAddress: string;
  /** What every recipient gets (no Bcc header). */
  raw: Buffer;
}

/** Mail for our mail domain and for custom domains hosted here is stored at once, not sent out. */
export const isLocalDomain = async (store: Store, mailDomain: string, domain: string): Promise<boolean> =>
  domain === mailDomain || (await store.domains.provenByName(domain)) !== null;

/** RFC 6761 section 6.3: `localhost` and every name under it are this host, never a mail server elsewhere. */
const isLoopbackName = (domain: string): boolean => domain === 'localhost' || domain.endsWith('.localhost');

/**
 * Refuses (400, as an IP literal) a recipient under `.localhost` that is not one of this
 * service's own domains: no MX can take it, so it would be charged and then fail. The
 * service's own mail domain may be under it (`agents.localhost` in development), and mail
 * to it is delivered here as always.
 */
export const refuseLoopbackRecipients = async (store: Store, mailDomain: string, recipients: readonly RecipientTarget[]): Promise<void> => {
  for (const { address, domain, kind } of recipients) {
    if (isLoopbackName(domain) && !(await isLocalDomain(store, mailDomain, domain))) {
      throw invalidInput(kind, `${address}: ${domain} names this host (.localhost, RFC 6761), where no mail server takes mail for it`);
    }
  }
};

/**
 * Recipients on our mail domain or a custom domain hosted here are settled at once, inside the
 * send's transaction: delivered into their mailbox by the same agent as mail from the MX (one
 * copy per mailbox, our trace field and verdict on top), or, with no such mailbox, failed with
 * the credit refunded once. Remote recipients stay queued for the delivery queue.
 */
export const deliverLocally = async (
  deps: LocalDelivery,
  rows: RecipientRecord[],
  submission: LocalSubmission,
  parsed: ParsedMessage | null,
  now: number,
): Promise<void> => {
  const local = await filterInOrder(
    rows,
    async (row) => row.status === 'queued' && parsed !== null && (await isLocalDomain(deps.store, deps.mailDomain, row.domain)),
  );
  if (local.length === 0 || parsed === null) return;
  const at = new Date(now);
  const hop = {
    traceFor: (recipient: string) => submissionReceivedHeader(submission.via, submission.id, deps.hostname, recipient, at),
    verdictField: deps.authenticator.internalField(submission.fromAddress),
    verdict: deps.authenticator.internalVerdict(),
  };
  const prepared = await deps.agent.prepare(
    submission.raw,
    parsed,
    hop,
    local.map((row) => row.address),
    'skip',
  );
  await deps.agent.append(prepared);
  const missing = new Set(prepared.missing);
  for (const row of local) {
    if (missing.has(row.address)) await fail(deps.store, row, now);
    else {
      await deps.store.submissions.transition(
        row.id,
        { status: 'delivered', diagnostic: 'stored in the local mailbox', nextAttemptAt: null, countAttempt: true },
        now,
        ['queued'],
      );
    }
  }
};

/** No mailbox by that address here: failed as a remote server's 550 5.1.1 would be, refunded once. */
const fail = async (store: Store, row: RecipientRecord, now: number): Promise<void> => {
  await store.submissions.transition(
    row.id,
    { status: 'failed', smtpCode: 550, enhancedCode: '5.1.1', diagnostic: 'no such mailbox on this service', nextAttemptAt: null, countAttempt: true },
    now,
    ['queued'],
  );
  await store.submissions.refundOnce(row.id);
};
