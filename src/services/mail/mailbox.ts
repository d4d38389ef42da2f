import type { AuthenticationVerdict } from '../../core/authentication.js';
import type { JunkVerdict } from '../../core/junk.js';
import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { MESSAGE_STORED, type MessageStoredEvent } from '../../core/events.js';
import { newUuid } from '../../core/ids.js';
import { NO_FLAGS, type Folder, type MessageFlags, type Principal } from '../../core/types.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { PostmasterRoute } from './postmaster.js';
import type { Arrival } from '../../store/message-arrivals.js';
import type { StagedValues } from '../../core/stored-message.js';
import type { Store } from '../../store/index.js';
import type { FullSummary, MessagePage } from '../../store/messages.js';
import { requirePermission } from '../access/auth.js';
import { previewOf, searchTextOf, type ParsedMessage } from '../../mime/parse.js';
import { decodeBody } from '../../mime/transfer-encoding.js';
import { wireLength } from '../../mime/crlf.js';
import type { MessageBodyService } from './bodies.js';
import { canonicalFolderName, INBOX, SENT } from './folder-names.js';
import { MessageStaging } from './staging.js';
import type { FolderService } from './folders.js';
import type { MessageOps } from './message-ops.js';
import type { SearchIndexService } from './search-index.js';
import type { ThreadService } from './threads.js';
import { fullMessageView, messageView, type FullMessageView, type MessageView } from './views.js';
import { toFtsQuery } from './fts-query.js';

export { canonicalFolderName, INBOX, JUNK, SENT } from './folder-names.js';

export interface ListQuery {
  folder: string;
  limit: number;
  offset: number;
  search?: string;
}

export interface InboxView {
  folder: string;
  uidValidity: string;
  totalMessages: number;
  returnedMessages: number;
  emails: MessageView[];
}

export interface ReadQuery {
  uid: number;
  folder: string;
  /** undefined means the default: a full key marks read, a limited key does not. */
  markAsRead?: boolean;
  uidValidity?: string;
}

export interface LocatedMessage {
  mailbox: MailboxRecord;
  folder: Folder;
  summary: FullSummary;
}

export interface AppendOptions {
  seen?: boolean;
  /** Set for mail that arrived at the MX: whether its SMTP session was encrypted. */
  arrival?: Arrival;
  /** All of its flags (IMAP APPEND); `seen` is the short form. */
  flags?: MessageFlags;
  /** The INTERNALDATE an IMAP APPEND gave; now when absent. */
  receivedAt?: number;
  /** The verdict on received mail, stored with it. */
  authentication?: AuthenticationVerdict;
  /** The junk filter's verdict on received mail (src/services/junk/filter.ts), stored with it. */
  junk?: JunkVerdict;
  /** What `staging.stage` wrote of this message ahead of the commit. */
  staged?: StagedValues;
}

export interface Appended {
  folder: string;
  uid: number;
  uidValidity: number;
}

export class MailboxService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly readMaxBytes: number,
    private readonly searchIndex: SearchIndexService,
    private readonly bodies: MessageBodyService,
    private readonly folders: FolderService,
    private readonly ops: MessageOps,
    private readonly threads: ThreadService,
    /** postmaster@ of a domain received here, when no mailbox or alias has that address. */
    private readonly postmaster: PostmasterRoute | null = null,
  ) {
    this.staging = new MessageStaging(store, clock);
  }

  /** Writes a large message's parts ahead of the commit that appends it (`AppendOptions.staged`). */
  readonly staging: MessageStaging;

  /** Creates the mailbox with INBOX and Sent; runs inside the caller's transaction. */
  async createMailbox(accountId: string, address: string): Promise<string> {
    const now = this.clock.now().getTime();
    const id = newUuid();
    await this.store.accounts.insertMailbox({ id, accountId, address, createdAt: now });
    const mailbox = await this.store.accounts.mailboxOfAccount(accountId);
    if (!mailbox) throw new Error('the mailbox just made is not there');
    for (const name of [INBOX, SENT]) await this.folders.ensure(mailbox, name);
    return id;
  }

  async mailboxOfAccount(accountId: string): Promise<MailboxRecord> {
    const mailbox = await this.store.accounts.mailboxOfAccount(accountId);
    if (!mailbox) throw new AppError('not_found', 'this account has no mailbox');
    return mailbox;
  }

  /**
   * The open mailbox that receives mail for an address: its own, or the one an alias on a
   * custom domain names. Null: SMTP answers 550 5.1.1, a local send fails the same way.
   */
  async mailboxForAddress(address: string): Promise<MailboxRecord | null> {
    const normalized = address.trim().toLowerCase();
    return (await this.store.accounts.mailboxByAddress(normalized)) ?? (await this.store.domainAddresses.mailboxOfAlias(normalized));
  }

  /**
   * Where mail to `address` is delivered: `mailboxForAddress`, and for a postmaster@ address
   * that is none of those, the domain's postmaster (RFC 5321 section 4.5.1). Not for signing in:
   * postmaster@ names a role, not an account.
   */
  async mailboxForRecipient(address: string): Promise<MailboxRecord | null> {
    const own = await this.mailboxForAddress(address);
    if (own) return own;
    const postmaster = await this.postmaster?.deliveredTo(address.trim());
    return postmaster ? await this.mailboxForAddress(postmaster) : null;
  }

  async folder(mailboxId: string, name: string): Promise<Folder> {
    const folder = await this.store.folders.byName(mailboxId, canonicalFolderName(name));
    if (!folder) throw new AppError('not_found', `folder ${name} does not exist`);
    return folder;
  }

  /**
   * Stores one copy of a message. Must run inside a transaction: the UID, the row, the
   * search index and the outbox event commit together.
   */
  async append(mailbox: MailboxRecord, folderName: string, raw: Buffer, parsed: ParsedMessage, options: AppendOptions = {}): Promise<Appended> {
    const folder = await this.folders.open(mailbox, folderName);
    const now = this.clock.now().getTime();
    const { uid, modseq } = await this.store.folders.allocateUid(folder.id);
    const flags = options.flags ?? { ...NO_FLAGS, seen: options.seen ?? false };
    const threadId = await this.threads.assign(mailbox.id, parsed, now);
    const rowId = await this.store.messages.insert({
      folderId: folder.id,
      uid,
      messageId: parsed.messageId,
      inReplyTo: parsed.inReplyTo,
      subject: parsed.subject,
      from: parsed.from,
      to: parsed.to,
      cc: parsed.cc,
      date: parsed.date,
      preview: previewOf(parsed),
      // RFC822.SIZE: the size IMAP sends, CRLF line ends (src/mime/crlf.ts).
      size: parsed.body?.structure.size ?? wireLength(raw),
      attachments: parsed.attachments.map(({ filename, contentType, size }) => ({ filename, contentType, size })),
      encrypted: parsed.encrypted,
      flags,
      modseq,
      receivedAt: options.receivedAt ?? now,
      raw,
      ...(options.staged && { staged: options.staged }),
      searchText: searchTextOf(parsed),
      body: parsed.body,
      threadId,
      authentication: options.authentication,
      junk: options.junk,
    });
    if (options.arrival) await this.store.messageArrivals.record(rowId, options.arrival);
    if (flags.keywords.length > 0) await this.store.folders.addKeywords(folder.id, flags.keywords);
    const event: MessageStoredEvent = {
      mailboxId: mailbox.id,
      accountId: mailbox.accountId,
      folder: folder.name,
      uidValidity: String(folder.uidValidity),
      uid: String(uid),
      storedAt: now,
      // Received mail the filter filed as junk: webhooks and event streams report it from the Junk folder.
      ...(options.junk?.junk ? { junk: true } : {}),
    };
    await this.store.changes.record(MESSAGE_STORED, event);
    return { folder: folder.name, uid, uidValidity: folder.uidValidity };
  }

  /** The folder, made (empty, a fresh uidValidity) if it does not exist yet; inside the caller's transaction. */
  async ensureFolder(mailbox: MailboxRecord, name: string): Promise<Folder> {
    return await this.folders.ensure(mailbox, name);
  }

  /**
   * Removes one message; inside the caller's transaction. IMAP sessions of the mailbox hear
   * of it after the commit (RFC 3501 section 7.4.1 EXPUNGE). False when it was not there.
   */
  async remove(mailbox: MailboxRecord, folderName: string, uid: number, uidValidity: number | null = null): Promise<boolean> {
    const folder = await this.store.folders.byName(mailbox.id, canonicalFolderName(folderName));
    // A UID names a message only within its UIDVALIDITY (RFC 3501 section 2.3.1.1): a folder
    // deleted and made again numbers from 1 again. null: not known (kept from before).
    if (folder === null || (uidValidity !== null && folder.uidValidity !== uidValidity)) return false;
    return (await this.ops.expunge(mailbox, folder, [uid])).length > 0;
  }

  async list(principal: Principal, query: ListQuery): Promise<InboxView> {
    requirePermission(principal, 'mail:read');
    const mailbox = await this.mailboxOfAccount(principal.accountId);
    // A plain list reads its folder, the total and the page from one snapshot, so they agree.
    const { search } = query;
    const { folder, page } =
      search === undefined || search.trim() === ''
        ? await this.store.read(() => this.plainPage(mailbox.id, query))
        : await this.searchPage(mailbox.id, query, search);
    return {
      folder: folder.name,
      uidValidity: String(folder.uidValidity),
      totalMessages: page.total,
      returnedMessages: page.items.length,
      emails: page.items.map(messageView),
    };
  }

  private async plainPage(mailboxId: string, query: ListQuery): Promise<{ folder: Folder; page: MessagePage }> {
    const folder = await this.folder(mailboxId, query.folder);
    return { folder, page: await this.store.messages.page(folder, query.limit, boundedOffset(query)) };
  }

  private async searchPage(mailboxId: string, query: ListQuery, search: string): Promise<{ folder: Folder; page: MessagePage }> {
    const folder = await this.folder(mailboxId, query.folder);
    const match = toFtsQuery(search);
    // A search with no letters or digits in it can match nothing.
    if (!match) return { folder, page: { total: 0, items: [] } };
    await this.searchIndex.catchUp();
    // The folder's counts may have changed while the index caught up: search reads them now.
    return { folder, page: await this.store.messages.search(folder.id, match, query.limit, boundedOffset(query)) };
  }

  async read(principal: Principal, query: ReadQuery): Promise<FullMessageView> {
    requirePermission(principal, 'mail:read');
    const markAsRead = this.resolveMarkAsRead(principal, query.markAsRead);
    const { mailbox, folder, summary } = await this.locate(principal.accountId, query);
    if (summary.size > this.readMaxBytes) {
      throw new AppError('too_large', `message is ${summary.size} bytes, over the ${this.readMaxBytes}-byte read limit; use an IMAP client to read it`);
    }
    // Served from what ingest stored: no parse here, only the attachments' own bytes decoded.
    const content = await this.bodies.content(summary.rowId);
    const attachments = await Promise.all(
      content.attachments.map(async (attachment) =>
        decodeBody(await this.store.messageRaw.range(summary.rowId, attachment.bodyStart, attachment.end), attachment.encoding),
      ),
    );
    if (markAsRead && !summary.seen) {
      // Through the flag change IMAP makes too: a new mod-sequence, and IDLE clients hear of it.
      await this.ops.setFlags(mailbox, folder, [summary.uid], { mode: 'add', system: new Set(['seen']), keywords: [] });
      summary.seen = true;
    }
    return fullMessageView(summary, content, attachments, folder, await this.store.messageArrivals.of(summary.rowId));
  }

  /** One message of the account's mailbox, by folder and UID (404), guarded by uidValidity (409). */
  async locate(accountId: string, query: Pick<ReadQuery, 'uid' | 'folder' | 'uidValidity'>): Promise<LocatedMessage> {
    const mailbox = await this.mailboxOfAccount(accountId);
    const folder = await this.folder(mailbox.id, query.folder);
    if (query.uidValidity !== undefined && query.uidValidity !== String(folder.uidValidity)) {
      throw new AppError('conflict', `uidValidity of ${folder.name} is now ${folder.uidValidity}; list the folder again`);
    }
    const summary = await this.store.messages.summaryByUid(folder.id, query.uid);
    if (!summary) throw new AppError('not_found', `no message ${query.uid} in ${folder.name}`);
    return { mailbox, folder, summary };
  }

  /** A limited key always reads without changing flags and is refused markAsRead=true (docs/agents/keys.md, mail:read). */
  private resolveMarkAsRead(principal: Principal, requested: boolean | undefined): boolean {
    if (principal.kind === 'full') return requested ?? true;
    if (requested === true) {
      throw new AppError('invalid_input', 'a limited access key cannot mark messages read; omit markAsRead or pass false', { field: 'markAsRead' });
    }
    return false;
  }
}

/** Larger than any folder can hold (UIDs are 32-bit, RFC 3501 section 2.3.1.1) and bindable by SQLite. */
const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

/**
 * No upper bound on offset (docs/agents/contract-decisions.md, "Deep pages"); past the last UID the page is empty, and SQLite
 * cannot bind an integer beyond 64 bits, so any larger offset is the same page.
 */
const boundedOffset = (query: ListQuery): number => Math.min(query.offset, MAX_OFFSET);
