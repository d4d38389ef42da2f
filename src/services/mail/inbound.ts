import type { Clock } from '../../core/clock.js';
import { INBOUND_QUEUED } from '../../core/events.js';
import type { ParseMail } from '../../core/parsed-message.js';
import type { QueuedInbound } from '../../store/inbound-queue.js';
import type { Store } from '../../store/index.js';
import type { BounceService } from '../delivery/bounces.js';
import type { NodeClaims } from '../cluster/claims.js';
import type { MailboxDeliveryAgent, PreparedCopies } from './delivery-agent.js';
import type { AuthenticateMail } from '../../core/authentication.js';
import { checkHeaderLimits, type HeaderLimits } from '../../mime/header-limits.js';
import type { BlocklistAnswer } from '../../core/junk.js';
import { receivedHeader, type SmtpSessionInfo } from './trace.js';

/** Screens a client address before its message is judged (the junk filter's DNS blocklists, src/services/junk/filter.ts). */
export interface ConnectionScreen {
  screen(clientAddress: string): Promise<BlocklistAnswer | null>;
}

export interface InboundMessage {
  session: SmtpSessionInfo;
  /** MAIL FROM; empty for the null reverse-path. */
  mailFrom: string;
  /** Envelope recipients, each accepted earlier by `acceptsRecipient`. */
  recipients: string[];
  raw: Buffer;
  /**
   * Free bytes before `raw` in its memory (ReceivedMessage.load, src/core/message-intake.ts)
   * that this service may write: each copy's trace fields go there, not into a copy of the message.
   */
  room?: number;
}

/** What a queued message keeps besides its bytes (inbound_queue.envelope). */
type Envelope = Omit<InboundMessage, 'raw' | 'room'>;

/**
 * Messages larger than this are delivered before their 250 even in a burst: queued, each
 * would be written twice more and read back, and a batch of the drain would hold sixteen of
 * them at once. Their senders wait in the intake's turn instead (src/core/message-intake.ts).
 */
export const QUEUED_MAX_BYTES = 1024 * 1024;

/** Room the MX asks for before a received message (InboundMessage.room): a trace field and a verdict fit in it. */
export const ROOM_FOR_TRACE_FIELDS = 8 * 1024;

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

/** The queue policy, and the header limits a message must keep to be accepted at all. */
export interface InboundPolicy extends InboundQueuePolicy {
  headerLimits: HeaderLimits;
}

/** A failed delivery from the queue is tried again after this, doubling per attempt up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 300_000;

/** Mail arriving at the MX: one parsed copy per local recipient, committed before 250 or queued durably before it. */
export class InboundService {
  /** Deliveries before 250 in progress. */
  private inline = 0;
  /**
   * Messages in inbound_queue: counted when their commit starts, until the one that stores them.
   * Other processes on the data folder queue and store too: each drain run counts again
   * (`recountQueued`).
   */
  private queued = 0;
  /** This process's queue commits in progress (counted in `queued`, not yet in the table). */
  private enqueuing = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly agent: MailboxDeliveryAgent,
    private readonly hostname: string,
    /** Where the checks run is src/app/workers.ts's choice (a worker thread keeps mailauth off the event loop). */
    private readonly authenticate: AuthenticateMail,
    /** Where the MIME parse runs is src/app/workers.ts's choice (a worker pool keeps it off the event loop). */
    private readonly parse: ParseMail,
    private readonly bounces: BounceService | undefined,
    private readonly policy: InboundPolicy,
    /** This node's claims: a queued message is claimed before it is stored, so two processes never store it twice. */
    private readonly claims: NodeClaims,
    /** Screens the connecting address for the junk filter (DNS blocklists, src/services/junk/filter.ts); none: no screening. */
    private readonly junk?: ConnectionScreen,
  ) {
    // Counted before anything can arrive: the count answers within this turn of the event loop.
    void this.recountQueued();
  }

  /**
   * A local mailbox (a custom domain's too), an alias of one, postmaster@ of a domain received
   * here, or a signed bounce address whose token verifies (a forged one is refused). Every
   * other address, on any domain, is 550 5.1.1.
   */
  async acceptsRecipient(address: string): Promise<boolean> {
    if (this.bounces?.isBounceAddress(address)) return await this.bounces.acceptsRecipient(address);
    return await this.agent.knows(address);
  }

  /**
   * Resolves once the message is durably committed, in its mailboxes or in the queue; the
   * adapter answers 250 only then. A header over the limits is refused before anything else
   * (too_large: the sender gets 552 5.3.4; docs/operators/inbound.md "Header limits").
   */
  async deliver(message: InboundMessage): Promise<void> {
    checkHeaderLimits(message.raw, this.policy.headerLimits);
    const recipients = unique(message.recipients);
    const bounceRecipients = recipients.filter((recipient) => this.bounces?.isBounceAddress(recipient));
    // A DSN to a bounce address is evidence about our own outgoing mail, never stored as mail.
    for (const recipient of bounceRecipients) await this.bounces?.ingest(message.raw, recipient);
    const mailboxRecipients = recipients.filter((recipient) => !bounceRecipients.includes(recipient));
    if (mailboxRecipients.length === 0) return;
    const accepted = { ...message, recipients: mailboxRecipients };
    if (this.queueing(message.raw.length)) return this.enqueue(accepted);
    this.inline += 1;
    try {
      await this.storeCopies(accepted, this.clock.now());
    } finally {
      this.inline -= 1;
    }
  }

  /** Waiting messages keep their order: while any waits, new ones queue behind it (up to the bound). */
  private queueing(bytes: number): boolean {
    if (this.queued >= this.policy.maxQueued || bytes > QUEUED_MAX_BYTES) return false;
    return this.queued > 0 || this.inline >= this.policy.inlineLimit;
  }

  private async enqueue(message: InboundMessage): Promise<void> {
    const { raw, room: _room, ...envelope } = message;
    this.queued += 1;
    this.enqueuing += 1;
    try {
      await this.store.groupCommit(async () => {
        await this.store.inboundQueue.add(this.clock.now().getTime(), JSON.stringify(envelope satisfies Envelope), raw);
        this.store.notice(INBOUND_QUEUED, null);
      });
    } catch (error) {
      this.queued -= 1;
      throw error;
    } finally {
      this.enqueuing -= 1;
    }
  }

  /** The queue as the table has it (other processes queue and store too), plus this process's commits in progress. */
  async recountQueued(): Promise<number> {
    this.queued = (await this.store.inboundQueue.count()) + this.enqueuing;
    return this.queued;
  }

  /**
   * Claims for this node the queued messages due now with an id above `afterId` that no live
   * node holds, oldest first (src/runtime/queues/inbound.ts); each is this node's until it is
   * stored or postponed, or its lease runs out.
   */
  async claimQueued(afterId: number, limit: number): Promise<QueuedInbound[]> {
    const now = this.clock.now().getTime();
    const claimed = await this.store.groupCommit(() => this.store.inboundQueue.claimDue(now, afterId, limit, this.claims.nodeId, this.claims.leaseUntil(now)));
    this.claims.hold(
      'inbound',
      claimed.map((entry) => entry.id),
    );
    return claimed;
  }

  /**
   * Stores queued messages' copies as they would have been stored before their 250 (trace
   * field and arrival time are the 250's), all in one commit that also drops them from the
   * queue. A message whose parse or checks fail stays queued for a later try (postponed), and
   * so do all of them when the commit fails. Resolves with those not stored.
   */
  async deliverQueued(entries: readonly QueuedInbound[], previous: Promise<void> = Promise.resolve()): Promise<{ id: number; error: unknown }[]> {
    try {
      return await this.storeQueued(entries, previous);
    } finally {
      this.claims.release(
        'inbound',
        entries.map((entry) => entry.id),
      );
    }
  }

  /** `previous`: the batch before, whose commit this one's waits for (its copies are prepared meanwhile). */
  private async storeQueued(entries: readonly QueuedInbound[], previous: Promise<void>): Promise<{ id: number; error: unknown }[]> {
    const prepared = await Promise.allSettled(
      entries.map(async (entry) => {
        const envelope = JSON.parse(entry.envelope) as Envelope;
        return this.agent.stage(await this.prepareCopies({ ...envelope, raw: entry.raw }, new Date(entry.receivedAt), true));
      }),
    );
    const ready: { entry: QueuedInbound; copies: PreparedCopies }[] = [];
    let failed: { entry: QueuedInbound; error: unknown }[] = [];
    prepared.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') ready.push({ entry: entries[i], copies: outcome.value });
      else failed.push({ entry: entries[i], error: outcome.reason });
    });
    await previous;
    try {
      const stored = await this.store.groupCommit(async () => {
        let removed = 0;
        for (const { entry, copies } of ready) {
          // Not this node's any more (its lease ran out and another node took it): the other stores it.
          if (!(await this.store.inboundQueue.remove(entry.id, this.claims.nodeId))) continue;
          await this.agent.append(copies, entry.receivedAt);
          removed += 1;
        }
        return removed;
      });
      this.queued = Math.max(0, this.queued - stored);
    } catch (error) {
      failed = [...failed, ...ready.map(({ entry }) => ({ entry, error }))];
    }
    if (failed.length > 0) await this.postpone(failed.map(({ entry }) => entry));
    return failed.map(({ entry, error }) => ({ id: entry.id, error }));
  }

  private postpone(entries: readonly QueuedInbound[]): Promise<void> {
    const now = this.clock.now().getTime();
    return this.store.groupCommit(async () => {
      for (const entry of entries) {
        await this.store.inboundQueue.postpone(entry.id, now + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** entry.attempts), this.claims.nodeId);
      }
    });
  }

  /** Messages accepted and not yet in their mailboxes. */
  queuedCount(): number {
    return this.queued;
  }

  /** When the earliest queued message is due (a postponed one waits); null with nothing queued, without a query. */
  async nextQueuedDueAt(): Promise<number | null> {
    return this.queued === 0 ? null : await this.store.inboundQueue.nextDueAt();
  }

  private async storeCopies(message: InboundMessage, receivedAt: Date): Promise<void> {
    const copies = await this.agent.stage(await this.prepareCopies(message, receivedAt, false));
    await this.store.groupCommit(() => this.agent.append(copies));
  }

  /** The parse, the verdict and each mailbox's stored bytes: everything but the commit. */
  private async prepareCopies(message: InboundMessage, receivedAt: Date, queued: boolean): Promise<PreparedCopies> {
    const { session } = message;
    // The verdict's and the blocklists' DNS lookups run while the parse worker works; all finish before the commit.
    const [parsed, checked, blocklists] = await Promise.all([
      this.parse(message.raw, this.agent.parseWants),
      this.authenticate(message.raw, { clientAddress: session.remoteAddress, helo: session.heloName, mailFrom: message.mailFrom }, receivedAt),
      this.junk?.screen(session.remoteAddress),
    ]);
    const hop = {
      traceFor: (recipient: string) => receivedHeader(session, this.hostname, recipient, receivedAt),
      verdictField: checked.field,
      verdict: checked.verdict ?? undefined,
      tls: session.tls,
      blocklists: blocklists ?? null,
    };
    // A queued message skips a mailbox removed since its 250 (the account was deleted meanwhile).
    return await this.agent.prepare(message.raw, parsed, hop, message.recipients, queued ? 'skip' : 'refuse', message.room ?? 0);
  }
}

const unique = (addresses: string[]): string[] => [...new Set(addresses.map((address) => address.trim().toLowerCase()))];
