import { ScheduledJobRepo } from './scheduled-jobs.js';
import { AccessKeyRepo } from './access-keys.js';
import { AccountRepo } from './accounts.js';
import { DeliveryRepo } from './delivery.js';
import { DkimKeyRepo } from './dkim-keys.js';
import { DomainAddressRepo } from './domain-addresses.js';
import { DomainRepo } from './domains.js';
import { FolderRepo } from './folders.js';
import { HostingRepo } from './hosting.js';
import { HealthRepo } from './health.js';
import { IdempotencyRepo } from './idempotency.js';
import { InboundQueueRepo } from './inbound-queue.js';
import { InvoiceRepo } from './invoices.js';
import { JunkRepo } from './junk.js';
import { LargeValueRepo } from './large-values.js';
import { MessageRawRepo } from './message-raw.js';
import { RecipientCountRepo } from './recipient-counts.js';
import { ImapRepo } from './imap.js';
import { KeyRepo } from './keys.js';
import { MessageBodyRepo } from './message-bodies.js';
import { MessageArrivalRepo } from './message-arrivals.js';
import { MtaStsRepo } from './mta-sts.js';
import { MessageRepo } from './messages.js';
import { ChangeRecorder, LegacyOutboxRepo } from './outbox.js';
import { OwnerRepo } from './owners.js';
import { DraftRepo } from './drafts.js';
import { RateLimitRepo } from './rate-limits.js';
import { SearchIndexRepo } from './search-index.js';
import { SettingsRepo } from './settings.js';
import { SubmissionRepo } from './submissions.js';
import { SuppressionRepo } from './suppressions.js';
import { RANK_SAMPLE_SPACING, RankSampleRepo } from './rank-samples.js';
import { ThreadRepo } from './threads.js';
import { TwoFactorRepo } from './two-factor.js';
import { WebhookEventRepo } from './webhook-events.js';
import { WebhookEndpointRepo } from './webhooks.js';
import type { CommitFeed } from './commit-feed.js';
import type { Db } from './db.js';
import type { SearchIndexReader } from './search-db.js';

/**
 * Every repository over one SQLite connection, synchronous: the store's own code uses them as
 * they are; the rest of the service through their async faces (unit.ts, Store in index.ts).
 */
export class Repositories {
  readonly accounts: AccountRepo;
  readonly keys: KeyRepo;
  readonly folders: FolderRepo;
  readonly messages: MessageRepo;
  readonly bodies: MessageBodyRepo;
  /** Messages' raw bytes, in their rows or in pieces. */
  readonly messageRaw: MessageRawRepo;
  readonly messageArrivals: MessageArrivalRepo;
  readonly mtaSts: MtaStsRepo;
  readonly rateLimits: RateLimitRepo;
  /** Changes others react to, announced with the transaction that made them. */
  readonly changes: ChangeRecorder;
  readonly legacyOutbox: LegacyOutboxRepo;
  readonly submissions: SubmissionRepo;
  readonly idempotency: IdempotencyRepo;
  readonly suppressions: SuppressionRepo;
  readonly accessKeys: AccessKeyRepo;
  readonly twoFactor: TwoFactorRepo;
  readonly delivery: DeliveryRepo;
  readonly settings: SettingsRepo;
  readonly dkimKeys: DkimKeyRepo;
  readonly webhookEndpoints: WebhookEndpointRepo;
  readonly webhookEvents: WebhookEventRepo;
  readonly imap: ImapRepo;
  readonly searchIndex: SearchIndexRepo;
  readonly owners: OwnerRepo;
  readonly drafts: DraftRepo;
  readonly domains: DomainRepo;
  readonly domainAddresses: DomainAddressRepo;
  readonly hosting: HostingRepo;
  readonly invoices: InvoiceRepo;
  readonly threads: ThreadRepo;
  readonly health: HealthRepo;
  readonly inboundQueue: InboundQueueRepo;
  readonly scheduledJobs: ScheduledJobRepo;
  readonly junk: JunkRepo;
  readonly largeValues: LargeValueRepo;
  /** Charged recipients per account, day and second, for the sending limits. */
  readonly recipientCounts: RecipientCountRepo;

  constructor(db: Db, feed: CommitFeed, searchReader: SearchIndexReader, rankSampleSpacing = RANK_SAMPLE_SPACING) {
    this.accounts = new AccountRepo(db);
    this.keys = new KeyRepo(db, feed);
    const ranks = new RankSampleRepo(db, rankSampleSpacing);
    this.folders = new FolderRepo(db, ranks);
    this.rateLimits = new RateLimitRepo(db);
    this.changes = new ChangeRecorder(db, feed);
    this.legacyOutbox = new LegacyOutboxRepo(db);
    this.recipientCounts = new RecipientCountRepo(db);
    this.submissions = new SubmissionRepo(db, this.changes, this.recipientCounts);
    this.idempotency = new IdempotencyRepo(db);
    this.suppressions = new SuppressionRepo(db);
    this.accessKeys = new AccessKeyRepo(db);
    this.twoFactor = new TwoFactorRepo(db);
    this.delivery = new DeliveryRepo(db);
    this.settings = new SettingsRepo(db);
    this.dkimKeys = new DkimKeyRepo(db);
    this.webhookEndpoints = new WebhookEndpointRepo(db);
    this.webhookEvents = new WebhookEventRepo(db);
    this.invoices = new InvoiceRepo(db);
    this.threads = new ThreadRepo(db);
    this.largeValues = new LargeValueRepo(db);
    this.bodies = new MessageBodyRepo(db, this.largeValues);
    this.messageRaw = new MessageRawRepo(db, this.largeValues);
    this.searchIndex = new SearchIndexRepo(db, feed, searchReader, this.messageRaw);
    this.imap = new ImapRepo(db, this.messageRaw, this.bodies);
    this.owners = new OwnerRepo(db);
    this.drafts = new DraftRepo(db);
    this.health = new HealthRepo(db);
    this.inboundQueue = new InboundQueueRepo(db);
    this.scheduledJobs = new ScheduledJobRepo(db);
    this.junk = new JunkRepo(db);
    this.messages = new MessageRepo(db, this.searchIndex, searchReader, this.bodies, ranks, this.messageRaw);
    this.messageArrivals = new MessageArrivalRepo(db);
    this.domains = new DomainRepo(db);
    this.domainAddresses = new DomainAddressRepo(db);
    this.hosting = new HostingRepo(db);
    this.mtaSts = new MtaStsRepo(db);
  }
}
