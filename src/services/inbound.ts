import { AppError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import type { Store } from '../store/index.js';
import { INBOX, type MailboxService } from './mailbox.js';
import { parseMessage } from './parse.js';
import { receivedHeader, type SmtpSessionInfo } from './trace.js';

export interface InboundMessage {
  session: SmtpSessionInfo;
  /** Envelope recipients, each accepted earlier by `acceptsRecipient`. */
  recipients: string[];
  raw: Buffer;
}

/** Mail arriving at the MX: one parsed copy per local recipient, committed before 250. */
export class InboundService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly mailboxes: MailboxService,
    private readonly hostname: string,
  ) {}

  acceptsRecipient(address: string): boolean {
    return this.mailboxes.mailboxForAddress(address) !== null;
  }

  /** Resolves after the copies are durably committed; the adapter answers 250 only then. */
  async deliver(message: InboundMessage): Promise<void> {
    const parsed = await parseMessage(message.raw);
    const now = this.clock.now();
    const targets = unique(message.recipients).map((recipient) => {
      const mailbox = this.mailboxes.mailboxForAddress(recipient);
      if (!mailbox) throw new AppError('not_found', `no mailbox for ${recipient}`);
      const trace = Buffer.from(receivedHeader(message.session, this.hostname, recipient, now), 'utf8');
      return { mailbox, raw: Buffer.concat([trace, message.raw]) };
    });
    await this.store.groupCommit(() => {
      for (const target of targets) this.mailboxes.append(target.mailbox, INBOX, target.raw, parsed);
    });
  }
}

const unique = (addresses: string[]): string[] => [...new Set(addresses.map((address) => address.trim().toLowerCase()))];
