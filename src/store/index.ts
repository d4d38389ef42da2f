import { ScheduledJobRepo } from './scheduled-jobs.js';
import { AccessKeyRepo } from './access-keys.js';
import { AccountRepo } from './accounts.js';
import { CommitFeed } from './commit-feed.js';
import { DeliveryRepo } from './delivery.js';
import { DkimKeyRepo } from './dkim-keys.js';
import { DomainAddressRepo } from './domain-addresses.js';
import { DomainRepo } from './domains.js';
import { openDatabase, type Db, type OpenOptions, stopMapping, unmapPages } from './db.js';
import { unsyncedTransaction } from './statements.js';
import { ForeignCommits } from './data-version.js';
import { FolderRepo } from './folders.js';
import { GroupCommitter } from './group-commit.js';
import { HostingRepo } from './hosting.js';
import { HealthRepo } from './health.js';
import { IdempotencyRepo } from './idempotency.js';
import { InboundQueueRepo } from './inbound-queue.js';
import { InvoiceRepo } from './invoices.js';
import { JunkRepo } from './junk.js';
import { LargeValueRepo, PIECE_SIZE, piecesOf } from './large-values.js';
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
import { prepareSearchIndexFile, searchIndexFile, SearchIndexReader } from './search-db.js';
import { backfillAllMessages, SearchIndexRepo } from './search-index.js';
import { SettingsRepo } from './settings.js';
import { SubmissionRepo } from './submissions.js';
import { SuppressionRepo } from './suppressions.js';
import { RANK_SAMPLE_SPACING, RankSampleRepo } from './rank-samples.js';
import { ThreadRepo } from './threads.js';
import { TwoFactorRepo } from './two-factor.js';
import { WebhookEventRepo } from './webhook-events.js';
import { WebhookEndpointRepo } from './webhooks.js';

export type { OpenOptions } from './db.js';

export interface StoreOptions extends OpenOptions {
  /** Messages between two rank samples of a folder (rank-samples.ts); tests make it small. */
  rankSampleSpacing?: number;
}
export type { CommitFeed, Committed, CommitListener } from './commit-feed.js';

/**
 * Group-commit jobs after which the writer reads without its memory map (db.ts, stopMapping)
 * until the quiet-time unmapPages: a burst of mail, not the odd message between quiet periods,
 * whose reads are few, or an IMAP client's reads, which the map is for. During a burst the map
 * would only hold pages (docs/contributing/benchmarks.md, "The store's page cache and memory map").
 */
export const BURST_JOBS = 256;

/** The one source of truth: every repository over one SQLite connection. */
export class Store {
  /** The one after-commit hook: consumers subscribe by topic (commit-feed.ts). */
  readonly feed = new CommitFeed();
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
  private readonly committer: GroupCommitter;
  private readonly foreignCommits: ForeignCommits;
  private readonly searchReader: SearchIndexReader;
  /** Group-commit jobs since the quiet-time unmapPages; null once the writer stopped mapping. */
  private jobsSinceQuiet: number | null = 0;

  /**
   * `searchFile` is the full-text index's own file (search-db.ts): read here, written by the
   * IndexWriter src/app/workers.ts chooses.
   */
  constructor(
    readonly db: Db,
    readonly searchFile: string,
    options: StoreOptions = {},
  ) {
    const searchReader = SearchIndexReader.open(searchFile, options);
    this.searchReader = searchReader;
    this.accounts = new AccountRepo(db);
    this.keys = new KeyRepo(db, this.feed);
    const ranks = new RankSampleRepo(db, options.rankSampleSpacing ?? RANK_SAMPLE_SPACING);
    this.folders = new FolderRepo(db, ranks);
    this.rateLimits = new RateLimitRepo(db);
    this.changes = new ChangeRecorder(db, this.feed);
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
    this.searchIndex = new SearchIndexRepo(db, this.feed, searchReader, this.messageRaw);
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
    this.committer = new GroupCommitter(db, this.feed);
    this.foreignCommits = new ForeignCommits(db);
  }

  /**
   * Whether another process committed to the database since the last call (data-version.ts):
   * its changes reach this process's watchers only through a look at the database.
   */
  committedElsewhere(): boolean {
    return this.foreignCommits.changed();
  }

  /** Opens the store and its search index file; an index that starts empty gets every message queued for it. */
  static open(file: string, options: StoreOptions = {}): Store {
    const db = openDatabase(file, options);
    const searchFile = searchIndexFile(file);
    prepareSearchIndexFile(searchFile, options, () => backfillAllMessages(db));
    return new Store(db, searchFile, options);
  }

  /**
   * Runs `work` in one IMMEDIATE transaction (a savepoint when already inside one). The
   * outermost commit (synchronous=FULL, so durable) publishes what it staged on the feed;
   * a rollback, of a savepoint too, forgets it.
   */
  transaction<T>(work: () => T): T {
    const mark = this.feed.mark();
    const outermost = !this.db.inTransaction;
    let result: T;
    try {
      result = outermost ? this.db.transaction(() => this.prepared(work, mark)).immediate() : this.db.transaction(work)();
    } catch (error) {
      this.feed.rewind(mark);
      throw error;
    }
    if (outermost) this.feed.publish(this.feed.take(mark));
    return result;
  }

  /** `work`, then the feed's beforeCommit hooks over what it staged: one transaction's body. */
  private prepared<T>(work: () => T, mark: number): T {
    const result = work();
    this.feed.prepare(mark);
    return result;
  }

  /**
   * Runs `work` on one snapshot (a deferred transaction: it only reads, so it waits for no
   * writer and holds none up), or inside the transaction in progress.
   */
  read<T>(work: () => T): T {
    return this.db.inTransaction ? work() : this.db.transaction(work).deferred();
  }

  /**
   * A fact for whoever listens now, never stored (an IMAP client idling on a folder whose
   * flags changed): published with the transaction in progress, or at once outside one.
   */
  notice(topic: string, payload: unknown): void {
    if (this.db.inTransaction) this.feed.stage(topic, payload);
    else this.feed.publish([{ topic, payload }]);
  }

  /**
   * Writes `value` in pieces ahead of the commit that will name it (large-values.ts): a piece
   * per transaction, a turn of the event loop between two. Null when it is small enough to be
   * written in that commit. A value the commit never names is swept (sweepUnattached).
   */
  async stage(value: Buffer | string, now: number): Promise<number | null> {
    if (value.length <= PIECE_SIZE) return null;
    const valueId = unsyncedTransaction(this.db, () => this.largeValues.create(value.length, now));
    for (const [seq, piece] of piecesOf(value).entries()) {
      await new Promise(setImmediate);
      unsyncedTransaction(this.db, () => this.largeValues.writePiece(valueId, seq, piece));
    }
    return valueId;
  }

  /** Runs `work` in a transaction shared with other callers of this turn; settles after commit. */
  groupCommit<T>(work: () => T): Promise<T> {
    this.countBurstJob();
    return this.committer.run(work);
  }

  /** The writer stops mapping once BURST_JOBS jobs have come since the quiet-time unmapPages. */
  private countBurstJob(): void {
    if (this.jobsSinceQuiet === null) return;
    this.jobsSinceQuiet += 1;
    if (this.jobsSinceQuiet >= BURST_JOBS && stopMapping(this.db)) this.jobsSinceQuiet = null;
  }

  /**
   * Hands back the pages both connections' memory maps hold (see unmapPages in db.ts), once a
   * burst of work is over; the next read maps again, from the OS page cache. A writer that a
   * burst left without its map (BURST_JOBS) reads through it again.
   */
  unmapPages(): void {
    if (unmapPages(this.db)) this.jobsSinceQuiet = 0;
    this.searchReader.unmapPages();
  }

  close(): void {
    this.committer.close();
    this.searchReader.close();
    if (this.db.open) this.db.close();
  }
}
