import { resolve } from 'node:path';
import type { ScheduledJobRepo } from './scheduled-jobs.js';
import type { AccessKeyRepo } from './access-keys.js';
import type { AccountRepo } from './accounts.js';
import { CommitFeed } from './commit-feed.js';
import type { DeliveryRepo } from './delivery.js';
import type { DkimKeyRepo } from './dkim-keys.js';
import type { DomainAddressRepo } from './domain-addresses.js';
import type { DomainRepo } from './domains.js';
import { openDatabase, type Db, type OpenOptions, stopMapping, unmapPages } from './db.js';
import { keptStatement, transactionOf, unsyncedTransaction } from './statements.js';
import { ForeignCommits } from './data-version.js';
import type { FolderRepo } from './folders.js';
import { GroupCommitter } from './group-commit.js';
import type { HostingRepo } from './hosting.js';
import type { HealthRepo } from './health.js';
import type { IdempotencyRepo } from './idempotency.js';
import type { InboundQueueRepo } from './inbound-queue.js';
import type { InvoiceRepo } from './invoices.js';
import type { JunkRepo } from './junk.js';
import { type LargeValueRepo, PIECE_SIZE, piecesOf } from './large-values.js';
import type { MessageRawRepo } from './message-raw.js';
import type { RecipientCountRepo } from './recipient-counts.js';
import type { ImapRepo } from './imap.js';
import type { KeyRepo } from './keys.js';
import type { MessageBodyRepo } from './message-bodies.js';
import type { MessageArrivalRepo } from './message-arrivals.js';
import type { MtaStsRepo } from './mta-sts.js';
import type { MessageRepo } from './messages.js';
import type { ChangeRecorder, LegacyOutboxRepo } from './outbox.js';
import type { OwnerRepo } from './owners.js';
import type { DraftRepo } from './drafts.js';
import type { RateLimitRepo } from './rate-limits.js';
import { prepareSearchIndexFile, searchIndexFile, SearchIndexReader } from './search-db.js';
import { backfillAllMessages, type SearchIndexRepo } from './search-index.js';
import type { SettingsRepo } from './settings.js';
import type { SubmissionRepo } from './submissions.js';
import type { SuppressionRepo } from './suppressions.js';
import type { ThreadRepo } from './threads.js';
import type { TwoFactorRepo } from './two-factor.js';
import type { WebhookEventRepo } from './webhook-events.js';
import type { WebhookEndpointRepo } from './webhooks.js';
import { Repositories } from './repositories.js';
import { type Async, asyncRepo, ConnectionTurns } from './unit.js';

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
  declare readonly accounts: Async<AccountRepo>;
  declare readonly keys: Async<KeyRepo>;
  declare readonly folders: Async<FolderRepo>;
  declare readonly messages: Async<MessageRepo>;
  declare readonly bodies: Async<MessageBodyRepo>;
  /** Messages' raw bytes, in their rows or in pieces. */
  declare readonly messageRaw: Async<MessageRawRepo>;
  declare readonly messageArrivals: Async<MessageArrivalRepo>;
  declare readonly mtaSts: Async<MtaStsRepo>;
  declare readonly rateLimits: Async<RateLimitRepo>;
  /** Changes others react to, announced with the transaction that made them. */
  declare readonly changes: Async<ChangeRecorder>;
  declare readonly legacyOutbox: Async<LegacyOutboxRepo>;
  declare readonly submissions: Async<SubmissionRepo>;
  declare readonly idempotency: Async<IdempotencyRepo>;
  declare readonly suppressions: Async<SuppressionRepo>;
  declare readonly accessKeys: Async<AccessKeyRepo>;
  declare readonly twoFactor: Async<TwoFactorRepo>;
  declare readonly delivery: Async<DeliveryRepo>;
  declare readonly settings: Async<SettingsRepo>;
  declare readonly dkimKeys: Async<DkimKeyRepo>;
  declare readonly webhookEndpoints: Async<WebhookEndpointRepo>;
  declare readonly webhookEvents: Async<WebhookEventRepo>;
  declare readonly imap: Async<ImapRepo>;
  declare readonly searchIndex: Async<SearchIndexRepo>;
  declare readonly owners: Async<OwnerRepo>;
  declare readonly drafts: Async<DraftRepo>;
  declare readonly domains: Async<DomainRepo>;
  declare readonly domainAddresses: Async<DomainAddressRepo>;
  declare readonly hosting: Async<HostingRepo>;
  declare readonly invoices: Async<InvoiceRepo>;
  declare readonly threads: Async<ThreadRepo>;
  declare readonly health: Async<HealthRepo>;
  declare readonly inboundQueue: Async<InboundQueueRepo>;
  declare readonly scheduledJobs: Async<ScheduledJobRepo>;
  declare readonly junk: Async<JunkRepo>;
  declare readonly largeValues: Async<LargeValueRepo>;
  /** Charged recipients per account, day and second, for the sending limits. */
  declare readonly recipientCounts: Async<RecipientCountRepo>;
  /** The repositories themselves, synchronous, for the store's own code (repositories.ts). */
  private readonly sync: Repositories;
  /** Whose turn it is on the connection: one unit of work at a time (unit.ts). */
  private readonly turns: ConnectionTurns;
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
    this.turns = ConnectionTurns.forFile(db.memory ? null : resolve(db.name));
    this.sync = new Repositories(db, this.feed, searchReader, options.rankSampleSpacing);
    for (const [name, repo] of Object.entries(this.sync)) Object.assign(this, { [name]: asyncRepo(repo, this.turns) });
    this.committer = new GroupCommitter(db, this.feed, this.turns);
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
   * Runs `work` as one unit of work: one IMMEDIATE transaction, or a savepoint when called
   * inside a unit. Other callers wait for the connection until it ends (unit.ts). The outermost
   * commit (synchronous=FULL, so durable) publishes what it staged on the feed; a rollback, of
   * a savepoint too, forgets it. `work` must await only the store (ConnectionTurns).
   */
  transaction<T>(work: () => Promise<T> | T): Promise<T> {
    if (this.turns.inUnit()) return this.savepoint(work);
    return this.turns.open(() => this.outermost('BEGIN IMMEDIATE', work));
  }

  /**
   * Runs `work` on one snapshot (a deferred transaction: it only reads, so it waits for no
   * other process's writer and holds none up), or inside the unit in progress.
   */
  read<T>(work: () => Promise<T> | T): Promise<T> {
    if (this.turns.inUnit()) return Promise.resolve(work());
    return this.turns.open(() => this.outermost('BEGIN DEFERRED', work));
  }

  private async outermost<T>(begin: string, work: () => Promise<T> | T): Promise<T> {
    const mark = this.feed.mark();
    let result: T;
    try {
      result = await transactionOf(this.db, begin, async () => {
        const value = await work();
        await this.feed.prepare(mark);
        this.turns.checkTurn();
        return value;
      });
    } catch (error) {
      this.feed.rewind(mark);
      throw error;
    }
    this.feed.publish(this.feed.take(mark));
    return result;
  }

  /** A nested unit: its own savepoint inside the transaction in progress. */
  private async savepoint<T>(work: () => Promise<T> | T): Promise<T> {
    const mark = this.feed.mark();
    this.statement('SAVEPOINT nested');
    try {
      const result = await work();
      this.statement('RELEASE nested');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.statement('ROLLBACK TO nested'), this.statement('RELEASE nested');
      this.feed.rewind(mark);
      throw error;
    }
  }

  private statement(text: string): void {
    keptStatement(this.db, text).run();
  }

  /**
   * A fact for whoever listens now, never stored (an IMAP client idling on a folder whose
   * flags changed): published with the unit in progress, or at once outside one.
   */
  notice(topic: string, payload: unknown): void {
    if (this.turns.inUnit()) this.feed.stage(topic, payload);
    else this.feed.publish([{ topic, payload }]);
  }

  /**
   * Writes `value` in pieces ahead of the commit that will name it (large-values.ts): a piece
   * per transaction, a turn of the event loop between two. Null when it is small enough to be
   * written in that commit. A value the commit never names is swept (sweepUnattached).
   */
  async stage(value: Buffer | string, now: number): Promise<number | null> {
    if (value.length <= PIECE_SIZE) return null;
    const { largeValues } = this.sync;
    const valueId = await this.turns.call(() => unsyncedTransaction(this.db, () => largeValues.create(value.length, now)));
    for (const [seq, piece] of piecesOf(value).entries()) {
      await new Promise(setImmediate);
      await this.turns.call(() => unsyncedTransaction(this.db, () => largeValues.writePiece(valueId, seq, piece)));
    }
    return valueId;
  }

  /**
   * Runs `work` in a transaction shared with other callers of this turn; settles after commit.
   * `work` must await only the store, like a unit's (transaction).
   */
  groupCommit<T>(work: () => Promise<T> | T): Promise<T> {
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
