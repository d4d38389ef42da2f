import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { ParseMail } from '../../core/parsed-message.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { Store } from '../../store/index.js';
import type { BounceService } from '../delivery/bounces.js';
import { INBOX, type MailboxService } from './mailbox.js';
import { withPrefix } from '../../mime/structure.js';
import { withoutForgedAuthenticationResults } from '../../mime/authentication-results.js';
import type { AuthenticateMail } from '../../core/authentication.js';
import { receivedHeader, type SmtpSessionInfo } from './trace.js';

export interface InboundMessage {
  session: SmtpSessionInfo;
  /** MAIL FROM; empty for the null reverse-path. */
  mailFrom: string;
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
    /** Where the checks run is main.ts's choice (a worker thread keeps mailauth off the event loop). */
    private readonly authenticate: AuthenticateMail,
    /** Where the MIME parse runs is main.ts's choice (a worker pool keeps it off the event loop). */
    private readonly parse: ParseMail,
    private readonly bounces?: BounceService,
  ) {}

  /**
   * A local mailbox (a custom domain's too), an alias of one, postmaster@ of a domain received
   * here, or a signed bounce address whose token verifies (a forged one is refused). Every
   * other address, on any domain, is 550 5.1.1.
   */
  acceptsRecipient(address: string): boolean {
    if (this.bounces?.isBounceAddress(address)) return this.bounces.acceptsRecipient(address);
    return this.mailboxes.mailboxForRecipient(address) !== null;
  }

  /**
   * One copy per mailbox: a message to a mailbox and its alias (or two of its aliases) is
   * stored once, as an MTA expanding aliases delivers once per final recipient.
   */
  private copiesFor(recipients: string[]): { mailbox: MailboxRecord; recipient: string }[] {
    const copies = new Map<string, { mailbox: MailboxRecord; recipient: string }>();
    for (const recipient of recipients) {
      const mailbox = this.mailboxes.mailboxForRecipient(recipient);
      if (!mailbox) throw new AppError('not_found', `no mailbox for ${recipient}`);
      if (!copies.has(mailbox.id)) copies.set(mailbox.id, { mailbox, recipient });
    }
    return [...copies.values()];
  }

  /** Resolves after the copies are durably committed; the adapter answers 250 only then. */
  async deliver(message: InboundMessage): Promise<void> {
    const recipients = unique(message.recipients);
    const bounceRecipients = recipients.filter((recipient) => this.bounces?.isBounceAddress(recipient));
    // A DSN to a bounce address is evidence about our own outgoing mail, never stored as mail.
    for (const recipient of bounceRecipients) this.bounces?.ingest(message.raw, recipient);
    const mailboxRecipients = recipients.filter((recipient) => !bounceRecipients.includes(recipient));
    if (mailboxRecipients.length === 0) return;
    const { session } = message;
    // The verdict's DNS lookups run while the parse thread works; both finish before the commit.
    const [parsed, checked] = await Promise.all([
      this.parse(message.raw),
      this.authenticate(message.raw, { clientAddress: session.remoteAddress, helo: session.heloName, mailFrom: message.mailFrom }, this.clock.now()),
    ]);
    const sent = withoutForgedAuthenticationResults(message.raw, this.hostname);
    const verdict = Buffer.from(checked.field, 'latin1');
    const now = this.clock.now();
    const targets = this.copiesFor(mailboxRecipients).map(({ mailbox, recipient }) => {
      const trace = Buffer.from(receivedHeader(session, this.hostname, recipient, now), 'utf8');
      // Our trace field on top, then our verdict (RFC 8601 section 4: both are trace fields of
      // this hop). The stored body's offsets are into the stored bytes, which start with them;
      // with forged fields cut out the parse no longer matches, and the backfill builds the body anew.
      const body = sent === message.raw && parsed.body ? withPrefix(parsed.body, trace.length + verdict.length) : null;
      return { mailbox, raw: Buffer.concat([trace, verdict, sent]), parsed: { ...parsed, body } };
    });
    await this.store.groupCommit(() => {
      for (const target of targets) {
        this.mailboxes.append(target.mailbox, INBOX, target.raw, target.parsed, {
          arrival: { tls: session.tls },
          authentication: checked.verdict ?? undefined,
        });
      }
    });
  }
}

const unique = (addresses: string[]): string[] => [...new Set(addresses.map((address) => address.trim().toLowerCase()))];
