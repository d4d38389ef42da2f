import type { RecipientChange, RecipientRecord } from '../../store/submissions.js';
import type { Store } from '../../store/index.js';

/**
 * The reserved domain of sandbox sends (RFC 2606 section 2: .invalid never resolves): its
 * magic local parts produce the outcome they name, with an optional +tag
 * ("bounce+case1@sandbox.invalid").
 */
export const SANDBOX_DOMAIN = 'sandbox.invalid';

/**
 * The outcomes of a sandbox send's recipients, settled in its accept transaction: nothing
 * leaves the host and nothing is due for the delivery worker. Each change is recorded as a
 * real one is, so outbound tracking, webhooks and event streams see it.
 */
export const settleSandbox = async (store: Store, rows: readonly RecipientRecord[], now: number): Promise<void> => {
  for (const row of rows) {
    for (const change of outcomesOf(row.address)) await store.submissions.transition(row.id, change, now);
  }
};

const outcomesOf = (address: string): RecipientChange[] => {
  const [local, domain] = address.toLowerCase().split('@');
  const magic = domain === SANDBOX_DOMAIN ? local.replace(/\+.*$/, '') : '';
  if (magic === 'bounce') {
    return [
      {
        status: 'bounced',
        smtpCode: 550,
        enhancedCode: '5.1.1',
        diagnostic: 'sandbox: simulated bounce, the mailbox does not exist',
        nextAttemptAt: null,
        countAttempt: true,
      },
    ];
  }
  if (magic === 'defer') {
    // Never retried: a sandbox message is never handed to a server (no next attempt is due).
    return [
      {
        status: 'deferred',
        smtpCode: 451,
        enhancedCode: '4.4.1',
        diagnostic: 'sandbox: simulated temporary failure, not retried',
        nextAttemptAt: null,
        countAttempt: true,
      },
    ];
  }
  const delivered: RecipientChange = {
    status: 'delivered',
    smtpCode: 250,
    diagnostic: 'sandbox: not sent, answered as delivered',
    nextAttemptAt: null,
    countAttempt: true,
  };
  if (magic !== 'complaint') return [delivered];
  return [delivered, { status: 'delivered', feedback: 'complaint', diagnostic: 'sandbox: simulated complaint, the recipient reported the message as spam' }];
};
