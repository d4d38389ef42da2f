import { AppError, invalidInput } from '../../core/errors.js';
import { hasReplyPrefix, subjectKey, threadKeysOf } from '../../core/thread-keys.js';
import type { Principal } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { ThreadCursor, ThreadListRow } from '../../store/threads.js';
import { requirePermission } from '../access/auth.js';
import { toFtsQuery } from './fts-query.js';
import type { SearchIndexService } from './search-index.js';
import { messageView, type MessageView } from './views.js';

export interface ThreadingConfig {
  /** threads.enabled: off, messages are stored without a thread and the thread reads answer 503. */
  enabled: boolean;
  /** How long after a thread's last activity a message with only its subject to go by may join it. */
  subjectWindowMs: number;
}

/** What threading reads of a message being stored. */
export interface ThreadInput {
  messageId: string | null;
  inReplyTo: string | null;
  references: readonly string[];
  subject: string;
}

export interface ThreadListQuery {
  limit: number;
  before?: string;
  search?: string;
}

export interface ThreadQuery {
  id: string;
  limit: number;
  after?: string;
}

export interface ThreadSummaryView {
  id: string;
  subject: string;
  messageCount: number;
  unreadCount: number;
  lastMessageAt: string;
}

export interface ThreadMessageView extends MessageView {
  folder: string;
  uidValidity: string;
}

export interface ThreadListView {
  threads: ThreadSummaryView[];
  nextCursor: string | null;
}

export interface ThreadView extends ThreadSummaryView {
  messages: ThreadMessageView[];
  nextCursor: string | null;
}

const CURSOR = /^([0-9]{1,16})\.([0-9]{1,16})$/;

/**
 * Conversations. Every message stored in any folder gets a thread when it is stored
 * (`assign`, inside the store transaction), the JWZ way by its headers (RFC 5322 section
 * 3.6.4): a message joins the thread that holds or names its own Message-ID or any id in
 * its In-Reply-To and References; when those ids lead to more than one thread, the threads
 * are one conversation and merge into the oldest. Only a message with neither In-Reply-To
 * nor References, whose subject says it is a reply or forward ("Re:", "Fwd:", "AW:", ...),
 * falls back to its subject: it joins the most recently active thread of the mailbox with
 * the same subject without prefixes, if that thread was active within the window.
 */
export class ThreadService {
  constructor(
    private readonly store: Store,
    private readonly searchIndex: SearchIndexService,
    private readonly config: ThreadingConfig,
  ) {}

  /** The thread of a message being stored at `at` (null when threads are off); inside the store transaction. */
  async assign(mailboxId: string, message: ThreadInput, at: number): Promise<number | null> {
    return this.config.enabled ? await this.threadOf(mailboxId, message, at) : null;
  }

  private async threadOf(mailboxId: string, message: ThreadInput, at: number): Promise<number> {
    const { own, ancestors } = threadKeysOf(message);
    const ids = own ? [own, ...ancestors] : ancestors;
    const found = await this.store.threads.threadsOfMessageIds(mailboxId, ids);
    const key = subjectKey(message.subject);
    if (found.length > 1) await this.store.threads.merge(found[0], found.slice(1));
    const joined = found[0] ?? (ancestors.length === 0 ? await this.bySubject(mailboxId, message.subject, key, at) : null);
    const thread = joined ?? (await this.store.threads.create(mailboxId, message.subject, key, at));
    if (joined !== null) await this.store.threads.touch(thread, at);
    await this.store.threads.remember(mailboxId, ids, thread);
    return thread;
  }

  /** The subject fallback, for a message without In-Reply-To and References. */
  private async bySubject(mailboxId: string, subject: string, key: string, at: number): Promise<number | null> {
    if (key === '' || this.config.subjectWindowMs <= 0 || !hasReplyPrefix(subject)) return null;
    return await this.store.threads.recentBySubject(mailboxId, key, at - this.config.subjectWindowMs);
  }

  /** Threads up to `limit` messages stored before threads existed, oldest first; returns how many. */
  private async backfill(limit: number): Promise<number> {
    return await this.store.transaction(async () => {
      const rows = await this.store.threads.unthreaded(limit);
      for (const row of rows) await this.store.threads.setThread(row.rowId, await this.threadOf(row.mailboxId, row, row.receivedAt));
      return rows.length;
    });
  }

  /** Threads every message that has no thread yet, in batches of one transaction each; returns how many. */
  async backfillAll(batch = 1000): Promise<number> {
    if (!this.config.enabled) return 0;
    let total = 0;
    for (let done = await this.backfill(batch); done > 0; done = await this.backfill(batch)) total += done;
    return total;
  }

  async list(principal: Principal, query: ThreadListQuery): Promise<ThreadListView> {
    requirePermission(principal, 'mail:read');
    this.requireEnabled();
    const mailbox = await this.mailboxOf(principal);
    const after = query.before === undefined ? null : parseListCursor(query.before);
    const only = query.search === undefined || query.search.trim() === '' ? undefined : await this.matching(mailbox.id, query.search);
    if (only?.length === 0) return { threads: [], nextCursor: null };
    const rows = await this.store.threads.page(mailbox.id, after, query.limit + 1, only);
    const more = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return { threads: page.map(summaryView), nextCursor: more && last ? `${last.lastAt}.${last.id}` : null };
  }

  async get(principal: Principal, query: ThreadQuery): Promise<ThreadView> {
    requirePermission(principal, 'mail:read');
    this.requireEnabled();
    const mailbox = await this.mailboxOf(principal);
    const thread = /^[1-9][0-9]{0,15}$/.test(query.id) ? await this.store.threads.byId(mailbox.id, Number(query.id)) : null;
    if (!thread || thread.messageCount === 0) throw new AppError('not_found', `no thread ${query.id} in this mailbox`);
    const after = query.after === undefined ? null : parseMessageCursor(query.after);
    const rows = await this.store.messages.inThread(thread.id, after, query.limit + 1);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      ...summaryView(thread),
      messages: page.map((row) => ({ ...messageView(row), folder: row.folder, uidValidity: String(row.uidValidity) })),
      nextCursor: rows.length > query.limit && last ? `${last.receivedAt}.${last.rowId}` : null,
    };
  }

  /** The threads with a message in any folder that matches the search (the inbox search's rules). */
  private async matching(mailboxId: string, search: string): Promise<number[]> {
    const match = toFtsQuery(search);
    if (!match) return [];
    await this.searchIndex.catchUp();
    const folders = (await this.store.folders.listOfMailbox(mailboxId)).map((folder) => folder.id);
    return await this.store.threads.threadsOfRows(await this.store.messages.searchRowIds(folders, match));
  }

  private requireEnabled(): void {
    if (!this.config.enabled) throw new AppError('unavailable', 'threads are turned off on this server (threads.enabled)');
  }

  private async mailboxOf(principal: Principal) {
    const mailbox = await this.store.accounts.mailboxOfAccount(principal.accountId);
    if (!mailbox) throw new AppError('not_found', 'this account has no mailbox');
    return mailbox;
  }
}

const summaryView = (row: ThreadListRow): ThreadSummaryView => ({
  id: String(row.id),
  subject: row.subject,
  messageCount: row.messageCount,
  unreadCount: row.unreadCount,
  lastMessageAt: new Date(row.lastMessageAt).toISOString(),
});

const parseListCursor = (value: string): ThreadCursor => {
  const match = CURSOR.exec(value);
  if (!match) throw invalidInput('before', 'before must be a nextCursor value from an earlier page');
  return { lastAt: Number(match[1]), id: Number(match[2]) };
};

const parseMessageCursor = (value: string): { receivedAt: number; rowId: number } => {
  const match = CURSOR.exec(value);
  if (!match) throw invalidInput('after', 'after must be a nextCursor value from an earlier page');
  return { receivedAt: Number(match[1]), rowId: Number(match[2]) };
};
