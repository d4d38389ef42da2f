import type { Clock } from '../../core/clock.js';
import { AppError, invalidInput } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { Principal } from '../../core/types.js';
import { validateInput } from '../../core/validate.js';
import { parseMessage, type ParsedMessage } from '../../mime/parse.js';
import type { DraftRecord } from '../../store/drafts.js';
import type { Store } from '../../store/index.js';
import type { MailboxService } from '../mail/mailbox.js';
import { composeMessage, parsedOfComposed } from '../sending/compose.js';
import { refuseLoopbackRecipients } from '../sending/local-delivery.js';
import { normalizeSendRequest, recipientsOf, type SendRequest, type MessageLimits } from '../sending/send-input.js';
import { draftView, type Draft, type DraftPage, type DraftSummary, summaryOf } from './views.js';

/** The IMAP folder that shows an account's pending drafts (RFC 6154's \Drafts role). */
export const DRAFTS = 'Drafts';
/** Open drafts (pending or being approved) an account may hold; more answer 409. */
export const MAX_OPEN_DRAFTS = 100;
export const DRAFTS_PAGE_SIZE = 50;

export interface DraftsConfig extends MessageLimits {
  mailDomain: string;
}

/** A draft ready to store: the request, what lists show, and its Drafts folder copy. */
interface Prepared {
  request: SendRequest;
  subject: string;
  recipientCount: number;
  copy: Buffer;
  parsed: ParsedMessage;
}

/**
 * Drafts an agent writes for its owner to approve (docs/agents/drafts.md): a mail:draft key
 * (or the full key) creates, lists, changes and deletes them, with the send request's body and
 * validation; it never sends. Each pending draft has a copy in the account's Drafts folder.
 */
export class DraftService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly mailbox: MailboxService,
    private readonly config: DraftsConfig,
  ) {}

  async create(principal: Principal, request: SendRequest): Promise<Draft> {
    requireDrafts(principal);
    const prepared = await this.prepare(principal.accountId, request);
    const id = newUuid();
    await this.store.transaction(async () => {
      if ((await this.store.drafts.countOpen(principal.accountId)) >= MAX_OPEN_DRAFTS) {
        throw new AppError('conflict', `an account holds at most ${MAX_OPEN_DRAFTS} drafts waiting for approval; delete one or ask the owner to decide`);
      }
      const now = this.clock.now().getTime();
      await this.store.drafts.insert({
        id,
        accountId: principal.accountId,
        keyId: principal.keyId,
        requestJson: JSON.stringify(prepared.request),
        subject: prepared.subject,
        recipientCount: prepared.recipientCount,
        status: 'pending',
        ...(await this.storeCopy(principal.accountId, prepared)),
        createdAt: now,
        updatedAt: now,
      });
    });
    return await this.view((await this.store.drafts.byId(id)) as DraftRecord);
  }

  /** Newest first; a mail:draft key sees the drafts it wrote, the full key all of them. */
  async list(principal: Principal, before?: string): Promise<DraftPage> {
    requireDrafts(principal);
    const rows = await this.store.drafts.page(principal.accountId, {
      keyId: principal.kind === 'access' ? principal.keyId : undefined,
      beforeSeq: before === undefined ? undefined : Number(before),
      limit: DRAFTS_PAGE_SIZE + 1,
    });
    const page = rows.slice(0, DRAFTS_PAGE_SIZE);
    return {
      drafts: await Promise.all(page.map(async (row) => summaryOf(row, await this.deciderEmail(row)))),
      nextCursor: rows.length > DRAFTS_PAGE_SIZE ? String(page[page.length - 1].seq) : null,
    };
  }

  async get(principal: Principal, id: string): Promise<Draft> {
    return await this.view(await this.own(principal, id));
  }

  /**
   * JSON merge patch (RFC 7396) over the stored request: given fields replace, null removes;
   * the result must be a valid send request. Only while pending (409 after a decision).
   */
  async update(principal: Principal, id: string, patch: Record<string, unknown>): Promise<Draft> {
    const record = await this.own(principal, id);
    requirePending(record);
    const merged: Record<string, unknown> = { ...(JSON.parse(record.requestJson) as Record<string, unknown>) };
    for (const [field, value] of Object.entries(patch)) {
      if (value === null) delete merged[field];
      else merged[field] = value;
    }
    const prepared = await this.prepare(record.accountId, validateInput<SendRequest>('send-request.json', merged));
    await this.store.transaction(async () => {
      const now = this.clock.now().getTime();
      const current = (await this.store.drafts.byId(id)) as DraftRecord;
      requirePending(current);
      await this.removeCopy(current);
      await this.store.drafts.update(id, {
        requestJson: JSON.stringify(prepared.request),
        subject: prepared.subject,
        recipientCount: prepared.recipientCount,
        ...(await this.storeCopy(record.accountId, prepared)),
        updatedAt: now,
      });
    });
    return await this.view((await this.store.drafts.byId(id)) as DraftRecord);
  }

  /** Deletes a pending draft and its Drafts copy; decided drafts stay as the record of the decision (409). */
  async delete(principal: Principal, id: string): Promise<{ id: string; deleted: true }> {
    const record = await this.own(principal, id);
    await this.store.transaction(async () => {
      const current = (await this.store.drafts.byId(id)) as DraftRecord;
      requirePending(current);
      await this.removeCopy(current);
      await this.store.drafts.delete(id);
    });
    return { id: record.id, deleted: true };
  }

  async view(record: DraftRecord): Promise<Draft> {
    return draftView(record, await this.deciderEmail(record));
  }

  async summary(record: DraftRecord): Promise<DraftSummary> {
    return summaryOf(record, await this.deciderEmail(record));
  }

  /** Drops the draft's copy from the Drafts folder (IMAP sessions see an EXPUNGE); inside the caller's transaction. */
  async removeCopy(record: DraftRecord): Promise<void> {
    if (record.folderUid === null) return;
    await this.mailbox.remove(await this.mailbox.mailboxOfAccount(record.accountId), DRAFTS, record.folderUid, record.folderUidValidity);
  }

  /** Validated as a send would be (400, 403 for a foreign from, 413), then composed for the Drafts copy. */
  private async prepare(accountId: string, request: SendRequest): Promise<Prepared> {
    if (request.idempotencyKey !== undefined) {
      throw invalidInput('idempotencyKey', 'a draft has no idempotency key: approving it sends it with the draft id as the key');
    }
    const account = await this.store.accounts.byId(accountId);
    if (!account) throw new AppError('unauthorized', 'missing or invalid API key');
    const message = await normalizeSendRequest(request, account.email, this.config);
    const recipients = recipientsOf(message);
    await refuseLoopbackRecipients(this.store, this.config.mailDomain, recipients);
    const messageId = `<${newUuid()}@${this.config.mailDomain}>`;
    const date = this.clock.now();
    const { sentRaw } = await composeMessage(message, messageId, date);
    const parsed = parsedOfComposed(message, messageId, date) ?? (await parseMessage(sentRaw));
    return { request, subject: message.subject, recipientCount: recipients.length, copy: sentRaw, parsed };
  }

  /** Inside the caller's transaction: the copy in Drafts (made on first use), seen, as a mail client keeps it. */
  private async storeCopy(accountId: string, prepared: Prepared): Promise<{ folderUid: number; folderUidValidity: number }> {
    const mailbox = await this.mailbox.mailboxOfAccount(accountId);
    await this.mailbox.ensureFolder(mailbox, DRAFTS);
    const { uid, uidValidity } = await this.mailbox.append(mailbox, DRAFTS, prepared.copy, prepared.parsed, { seen: true });
    return { folderUid: uid, folderUidValidity: uidValidity };
  }

  /** A draft of this account that this key may see; another key's draft is 404 to a mail:draft key. */
  private async own(principal: Principal, id: string): Promise<DraftRecord> {
    requireDrafts(principal);
    const record = await this.store.drafts.byId(id);
    const visible = record && record.accountId === principal.accountId && (principal.kind !== 'access' || record.keyId === principal.keyId);
    if (!visible) throw new AppError('not_found', `no draft ${id}`);
    return record;
  }

  private async deciderEmail(record: DraftRecord): Promise<string | null> {
    return record.decidedBy ? ((await this.store.owners.loginOf(record.decidedBy))?.loginEmail ?? null) : null;
  }
}

/** The full key, or a mail:draft key (docs/agents/drafts.md); mail:read and mail:send keys cannot. */
export const requireDrafts = (principal: Principal): void => {
  if (principal.kind === 'full' || (principal.kind === 'access' && principal.permissions.includes('mail:draft'))) return;
  throw new AppError('forbidden', 'drafts need a mail:draft key or the full account key');
};

const requirePending = (record: DraftRecord): void => {
  if (record.status !== 'pending') throw new AppError('conflict', `this draft is ${record.status}; only a pending draft can change`);
};
