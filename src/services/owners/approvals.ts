import type { Clock } from '../../core/clock.js';
import { AppError, isAppError } from '../../core/errors.js';
import type { DraftRecord, DraftStatus } from '../../store/drafts.js';
import type { Store } from '../../store/index.js';
import type { DraftService } from '../drafts/drafts.js';
import { draftVersion, type Draft, type DraftSummary } from '../drafts/views.js';
import type { SendingService, SendResult } from '../sending/sending.js';
import type { SendRequest } from '../sending/send-input.js';
import type { OwnershipService } from './ownership.js';
import type { OwnerSession } from './sessions.js';

export interface DraftAgent {
  id: string;
  agentId: string;
  email: string;
}

export type OwnerDraftSummary = DraftSummary & { agent: DraftAgent };
export type OwnerDraft = Draft & { agent: DraftAgent };

export interface Approval {
  draft: OwnerDraft;
  send: SendResult;
}

/** The owner's list: what waits by default; `all` adds the decided ones. */
export type DraftFilter = 'open' | 'sent' | 'rejected' | 'all';
const STATUSES: Record<DraftFilter, readonly DraftStatus[]> = {
  open: ['pending', 'approving'],
  sent: ['sent'],
  rejected: ['rejected'],
  all: ['pending', 'approving', 'sent', 'rejected'],
};
const OWNER_LIST_LIMIT = 100;

/** The draft id is the send's idempotency key, so an approval cut off by a crash resumes, never sends twice. */
export const draftIdempotencyKey = (draftId: string): string => `draft:${draftId}`;

/**
 * The owner's side of drafts: list, read, approve (sent through the one send service, with
 * the agent's credits and limits, recording who approved) and reject. Only the owner of the
 * draft's agent reaches it; anyone else gets 404.
 */
export class DraftApprovalService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ownership: OwnershipService,
    private readonly drafts: DraftService,
    private readonly sending: SendingService,
  ) {}

  /** The newest 100 across the owner's agents (no further pages: nextCursor is always null). */
  async list(session: OwnerSession, filter: DraftFilter = 'open'): Promise<{ drafts: OwnerDraftSummary[]; nextCursor: null }> {
    const rows = await this.store.drafts.ofOwner(session.ownerId, STATUSES[filter], OWNER_LIST_LIMIT);
    return { drafts: await Promise.all(rows.map(async (row) => ({ ...(await this.drafts.summary(row)), agent: await this.agentOf(row) }))), nextCursor: null };
  }

  async get(session: OwnerSession, id: string): Promise<OwnerDraft> {
    const record = await this.ownedDraft(session, id);
    return { ...(await this.drafts.view(record)), agent: await this.agentOf(record) };
  }

  /**
   * pending -> approving (who, when) -> send -> sent, with the Drafts copy gone. `version` is
   * the draft's version the owner read: a draft changed since is not sent (409), so what is
   * sent is what the owner approved. A refused send (credits, limits, a paused account) puts
   * the draft back to pending and answers the refusal.
   */
  async approve(session: OwnerSession, id: string, version: string): Promise<Approval> {
    const record = await this.ownedDraft(session, id);
    const principal = await this.ownership.principalFor(session, record.accountId);
    const now = this.clock.now().getTime();
    // The version is compared and the draft claimed in one transaction: no change slips in between.
    const approved = await this.store.transaction(async () => {
      const current = await this.store.drafts.byId(id);
      if (current && (current.status === 'pending' || current.status === 'approving') && draftVersion(current) !== version) {
        throw new AppError('conflict', 'this draft changed since the version you read; read it again and approve what it holds now');
      }
      const claimed = await this.store.drafts.transition(id, ['pending', 'approving'], 'approving', {
        decidedBy: session.ownerId,
        decidedAt: now,
        updatedAt: now,
      });
      if (!current || !claimed) throw new AppError('conflict', `this draft is ${current?.status ?? 'gone'}; it can no longer be approved`);
      return current;
    });
    let send: SendResult;
    try {
      send = await this.sending.send(principal, JSON.parse(approved.requestJson) as SendRequest, { idempotencyKey: draftIdempotencyKey(id), via: 'rest' });
    } catch (error) {
      if (isAppError(error)) {
        await this.store.transaction(() =>
          this.store.drafts.transition(id, ['approving'], 'pending', { decidedBy: null, decidedAt: null, updatedAt: this.clock.now().getTime() }),
        );
      }
      throw error;
    }
    await this.store.transaction(async () => {
      const current = (await this.store.drafts.byId(id)) as DraftRecord;
      await this.drafts.removeCopy(current);
      await this.store.drafts.transition(id, ['approving'], 'sent', { submissionId: send.id, folderUid: null, updatedAt: this.clock.now().getTime() });
    });
    return { draft: await this.get(session, id), send };
  }

  async reject(session: OwnerSession, id: string, reason?: string): Promise<OwnerDraft> {
    await this.ownedDraft(session, id);
    await this.store.transaction(async () => {
      const current = (await this.store.drafts.byId(id)) as DraftRecord;
      const now = this.clock.now().getTime();
      if (
        !(await this.store.drafts.transition(id, ['pending'], 'rejected', {
          decidedBy: session.ownerId,
          decidedAt: now,
          reason: reason ?? null,
          folderUid: null,
          updatedAt: now,
        }))
      ) {
        throw new AppError('conflict', `this draft is ${current.status}; only a pending draft can be rejected`);
      }
      await this.drafts.removeCopy(current);
    });
    return await this.get(session, id);
  }

  private async ownedDraft(session: OwnerSession, id: string): Promise<DraftRecord> {
    const record = await this.store.drafts.byId(id);
    if (!record) throw new AppError('not_found', `no draft ${id}`);
    try {
      await this.ownership.ownedAgent(session, record.accountId);
    } catch {
      throw new AppError('not_found', `no draft ${id}`);
    }
    return record;
  }

  private async agentOf(record: DraftRecord): Promise<DraftAgent> {
    const account = await this.store.accounts.byId(record.accountId);
    return { id: record.accountId, agentId: account?.agentId ?? '', email: account?.email ?? '' };
  }
}
