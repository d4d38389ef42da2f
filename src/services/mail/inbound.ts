import type { Clock } from '../../core/clock.js';
import { INBOUND_QUEUED } from '../../core/events.js';
import type { ParsedMessage, ParseMail } from '../../core/parsed-message.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { QueuedInbound } from '../../store/inbound-queue.js';
import type { Store } from '../../store/index.js';
import type { BounceService } from '../delivery/bounces.js';
import { INBOX, type MailboxService } from './mailbox.js';
import { withPrefix } from '../../mime/structure.js';
import { withoutForgedAuthenticationResults } from '../../mime/authentication-results.js';
import type { AuthenticateMail, AuthenticationVerdict } from '../../core/authentication.js';
import { AppError } from '../../core/errors.js';
import { receivedHeader, type SmtpSessionInfo } from './trace.js';

export interface InboundMessage {
  session: SmtpSessionInfo;
  /** MAIL FROM; empty for the null reverse-path. */
  mailFrom: string;
  /** Envelope recipients, each accepted earlier by `acceptsRecipient`. */
  recipients: string[];
  raw: Buffer;
}

/** What a queued message keeps besides its bytes (inbound_queue.envelope). */
type Envelope = Omit<InboundMessage, 'raw'>;

/** A message ready to commit: its copy per mailbox and what every copy records. */
interface PreparedCopies {
  targets: { mailbox: MailboxRecord; raw: Buffer; parsed: ParsedMessage }[];
  tls: SmtpSessionInfo['tls'];
  authentication: AuthenticationVerdict | undefined;
}

/**
 * When the MX answers 250 before the message is in its mailboxes (docs/operators/inbound.md, "Bursts: the inbound queue").
 * A message is delivered before its 250 while fewer than `inlineLimit` deliveries are in
 * progress and nothing waits in the queue; past that (a burst) it is committed to the queue,
 * answered, and delivered right after, in arrival order. At `maxQueued` waiting messages the
 * MX delivers before 250 again, so a longer burst slows to the delivery rate.
 */
export interface InboundQueuePolicy {
  inlineLimit: number;
  maxQueued: number;
}

/** A failed delivery from the queue is tried again after this, doubling per attempt up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 300_000;

/** Mail arriving at the MX: one parsed copy per local recipient, committed before 250 or queued durably before it. */
export class InboundService {
  /** Deliveries before 250 in progress. */
  private inline = 0;
  /** Messages in inbound_queue: counted when their commit starts, until the one that stores them. */
  private queued: number;

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
    private readonly policy: InboundQueuePolicy = { inlineLimit: Number.POSITIVE_INFINITY, maxQueued: 0 },
  ) {
    this.queued = store.inboundQueue.count();
  }

  /**
   * A local mailbox (a custom domain's too), an alias of one, postmaster@ of a domain received
   * here, or a signed bounce address whose token verifies (a forged one is refused). Every
   * other address, on any domain, is 550 5.1.1.
   */
  acceptsRecipient(address: string): boolean {
    if (this.bounces?.isBounceAddress(address)) return this.bounces.acceptsRecipient(address);
    return this.mailboxes.mailboxForRecipient(address) !== null;
  }

  /** Resolves once the message is durably committed, in its mailboxes or in the queue; the adapter answers 250 only then. */
  async deliver(message: InboundMessage): Promise<void> {
    const recipients = unique(message.recipients);
    const bounceRecipients = recipients.filter((recipient) => this.bounces?.isBounceAddress(recipient));
    // A DSN to a bounce address is evidence about our own outgoing mail, never stored as mail.
    for (const recipient of bounceRecipients) this.bounces?.ingest(message.raw, recipient);
    const mailboxRecipients = recipients.filter((recipient) => !bounceRecipients.includes(recipient));
    if (mailboxRecipients.length === 0) return;
    const accepted = { ...message, recipients: mailboxRecipients };
    if (this.queueing()) return this.enqueue(accepted);
    this.inline += 1;
    try {
      await this.storeCopies(accepted, this.clock.now());
    } finally {
      this.inline -= 1;
    }
  }

  /** Waiting messages keep their order: while any waits, new ones queue behind it (up to the bound). */
  private queueing(): boolean {
    if (this.queued >= this.policy.maxQueued) return false;
    return this.queued > 0 || this.inline >= this.policy.inlineLimit;
  }

  private async enqueue(message: InboundMessage): Promise<void> {
    const { raw, ...envelope } = message;
    this.queued += 1;
    try {
      await this.store.groupCommit(() => {
        this.store.inboundQueue.add(this.clock.now().getTime(), JSON.stringify(envelope satisfies Envelope), raw);
        this.store.notice(INBOUND_QUEUED, null);
      });
    } catch (error) {
      this.queued -= 1;
      throw error;
    }
  }

  /** Queued messages due now with an id above `afterId`, oldest first (src/workers/jobs/inbound-drain.ts). */
  dueQueued(afterId: number, limit: number): QueuedInbound[] {
    return this.store.inboundQueue.due(this.clock.now().getTime(), afterId, limit);
  }

  /**
   * Stores queued messages' copies as they would have been stored before their 250 (trace
   * field and arrival time are the 250's), all in one commit that also drops them from the
   * queue. A message whose parse or checks fail stays queued for a later try (postponed), and
   * so do all of them when the commit fails. Resolves with those not stored.
   */
  async deliverQueued(entries: readonly QueuedInbound[]): Promise<{ id: number; error: unknown }[]> {
    const prepared = await Promise.allSettled(
      entries.map(async (entry) => {
        const envelope = JSON.parse(entry.envelope) as Envelope;
        return this.prepareCopies({ ...envelope, raw: entry.raw }, new Date(entry.receivedAt), true);
      }),
    );
    const ready: { entry: QueuedInbound; copies: PreparedCopies }[] = [];
    let failed: { entry: QueuedInbound; error: unknown }[] = [];
    prepared.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') ready.push({ entry: entries[i], copies: outcome.value });
      else failed.push({ entry: entries[i], error: outcome.reason });
    });
    try {
      await this.store.groupCommit(() => {
        for (const { entry, copies } of ready) {
          this.appendCopies(copies, entry.receivedAt);
          this.store.inboundQueue.remove(entry.id);
        }
      });
      this.queued -= ready.length;
    } catch (error) {
      failed = [...failed, ...ready.map(({ entry }) => ({ entry, error }))];
    }
    if (failed.length > 0) await this.postpone(failed.map(({ entry }) => entry));
    return failed.map(({ entry, error }) => ({ id: entry.id, error }));
  }

  private postpone(entries: readonly QueuedInbound[]): Promise<void> {
    const now = this.clock.now().getTime();
    return this.store.groupCommit(() => {
      for (const entry of entries) this.store.inboundQueue.postpone(entry.id, now + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** entry.attempts));
    });
  }

  /** Messages accepted and not yet in their mailboxes. */
  queuedCount(): number {
    return this.queued;
  }

  /** When the earliest queued message is due (a postponed one waits); null with nothing queued, without a query. */
  nextQueuedDueAt(): number | null {
    return this.queued === 0 ? null : this.store.inboundQueue.nextDueAt();
  }

  private async storeCopies(message: InboundMessage, receivedAt: Date): Promise<void> {
    const copies = await this.prepareCopies(message, receivedAt, false);
    await this.store.groupCommit(() => this.appendCopies(copies));
  }

  /** The parse, the verdict and each mailbox's stored bytes: everything but the commit. */
  private async prepareCopies(message: InboundMessage, receivedAt: Date, queued: boolean): Promise<PreparedCopies> {
    const { session } = message;
    // The verdict's DNS lookups run while the parse thread works; both finish before the commit.
    const [parsed, checked] = await Promise.all([
      this.parse(message.raw),
      this.authenticate(message.raw, { clientAddress: session.remoteAddress, helo: session.heloName, mailFrom: message.mailFrom }, receivedAt),
    ]);
    const sent = withoutForgedAuthenticationResults(message.raw, this.hostname);
    const verdict = Buffer.from(checked.field, 'latin1');
    const targets = this.copiesFor(message.recipients, queued).map(({ mailbox, recipient }) => {
      const trace = Buffer.from(receivedHeader(session, this.hostname, recipient, receivedAt), 'utf8');
      // Our trace field on top, then our verdict (RFC 8601 section 4: both are trace fields of
      // this hop). The stored body's offsets are into the stored bytes, which start with them;
      // with forged fields cut out the parse no longer matches, and the backfill builds the body anew.
      const body = sent === message.raw && parsed.body ? withPrefix(parsed.body, trace.length + verdict.length) : null;
      return { mailbox, raw: Buffer.concat([trace, verdict, sent]), parsed: { ...parsed, body } };
    });
    return { targets, tls: session.tls, authentication: checked.verdict ?? undefined };
  }

  /** Inside the commit; `receivedAt` for a queued message (the 250's time), else now. */
  private appendCopies(copies: PreparedCopies, receivedAt?: number): void {
    for (const target of copies.targets) {
      this.mailboxes.append(target.mailbox, INBOX, target.raw, target.parsed, {
        arrival: { tls: copies.tls },
        authentication: copies.authentication,
        ...(receivedAt !== undefined && { receivedAt }),
      });
    }
  }

  /**
   * One copy per mailbox: a message to a mailbox and its alias (or two of its aliases) is
   * stored once, as an MTA expanding aliases delivers once per final recipient. A queued
   * message skips a mailbox removed since its 250 (the account was deleted meanwhile).
   */
  private copiesFor(recipients: string[], skipMissing: boolean): { mailbox: MailboxRecord; recipient: string }[] {
    const copies = new Map<string, { mailbox: MailboxRecord; recipient: string }>();
    for (const recipient of recipients) {
      const mailbox = this.mailboxes.mailboxForRecipient(recipient);
      if (!mailbox) {
        if (skipMissing) continue;
        throw new AppError('not_found', `no mailbox for ${recipient}`);
      }
      if (!copies.has(mailbox.id)) copies.set(mailbox.id, { mailbox, recipient });
    }
    return [...copies.values()];
  }
}

const unique = (addresses: string[]): string[] => [...new Set(addresses.map((address) => address.trim().toLowerCase()))];
