import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { Principal, RecipientKind, RecipientStatus, SubmissionVia } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { RecipientEvent, RecipientRecord, SubmissionRecord } from '../../store/submissions.js';
import { requirePermission } from '../access/auth.js';

/** Outgoing tracking (config `limits.outbound*`, docs/agents/sending.md, Tracking). */
export interface OutboundConfig {
  /** Metadata older than this is listed as untracked (`outboundTrackingDays`). */
  trackingMs: number;
  /** Submissions per page (`outboundPerPage`). */
  perPage: number;
  /** Latest state changes shown per submission (`outboundStateChanges`). */
  stateChanges: number;
}

export interface OutboundSummary {
  id: string;
  messageId: string;
  subject: string;
  createdAt: string;
  tracked: boolean;
  from?: string;
  via?: SubmissionVia;
  recipientCount?: number;
  statusCounts?: Partial<Record<RecipientStatus, number>>;
}

export interface OutboundRecipientView {
  email: string;
  kind: RecipientKind;
  status: RecipientStatus;
  attempts: number;
  creditRefunded: boolean;
  smtpCode?: number;
  enhancedCode?: string;
  diagnostic?: string;
  nextAttemptAt?: string;
  updatedAt: string;
}

export interface OutboundEventView {
  email: string;
  status: RecipientStatus;
  smtpCode?: number;
  enhancedCode?: string;
  diagnostic?: string;
  at: string;
}

export interface OutboundDetail extends OutboundSummary {
  sentCopySaved?: boolean;
  recipients?: OutboundRecipientView[];
  events?: OutboundEventView[];
}

export interface OutboundPage {
  submissions: OutboundSummary[];
  nextCursor: string | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Tracking of outgoing submissions. A limited key (mail:send) reads only the submissions it
 * sent (docs/agents/sending.md, Tracking); a full key reads the whole account. Submissions older
 * than the tracking window are untracked: listed with `tracked: false` and no recipients.
 */
export class OutboundService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: OutboundConfig,
  ) {}

  async list(principal: Principal, before?: string): Promise<OutboundPage> {
    requirePermission(principal, 'mail:send');
    const rows = await this.store.submissions.page(principal.accountId, {
      keyId: ownKeyFilter(principal),
      beforeSeq: before === undefined ? undefined : Number(before),
      limit: this.config.perPage,
    });
    return {
      submissions: await Promise.all(await Promise.all(rows.map((row) => this.summary(row)))),
      nextCursor: rows.length === this.config.perPage ? String(rows[rows.length - 1].seq) : null,
    };
  }

  async detail(principal: Principal, id: string): Promise<OutboundDetail> {
    requirePermission(principal, 'mail:send');
    const row = await this.store.submissions.byId(id);
    const keyId = ownKeyFilter(principal);
    if (!row || row.accountId !== principal.accountId || (keyId !== undefined && row.keyId !== keyId)) {
      throw new AppError('not_found', `no outbound submission ${id}`);
    }
    if (!this.isTracked(row)) return untracked(row);
    return {
      ...base(row),
      tracked: true,
      from: row.fromAddress,
      via: row.via,
      sentCopySaved: row.sentCopySaved,
      recipients: (await this.store.submissions.recipientsOf(row.id)).map(recipientView),
      events: (await this.store.submissions.eventsOf(row.id, this.config.stateChanges)).map(eventView),
    };
  }

  private isTracked(row: SubmissionRecord): boolean {
    return this.clock.now().getTime() - row.createdAt <= this.config.trackingMs;
  }

  private async summary(row: SubmissionRecord): Promise<OutboundSummary> {
    if (!this.isTracked(row)) return untracked(row);
    const recipients = await this.store.submissions.recipientsOf(row.id);
    const statusCounts: Partial<Record<RecipientStatus, number>> = {};
    for (const recipient of recipients) statusCounts[recipient.status] = (statusCounts[recipient.status] ?? 0) + 1;
    return { ...base(row), tracked: true, from: row.fromAddress, via: row.via, recipientCount: recipients.length, statusCounts };
  }
}

/** A limited key sees only its own receipts; a full key (undefined) sees the account's. */
const ownKeyFilter = (principal: Principal): string | undefined => (principal.kind === 'access' ? principal.keyId : undefined);

const base = (row: SubmissionRecord) => ({ id: row.id, messageId: row.messageId, subject: row.subject, createdAt: iso(row.createdAt) });

const untracked = (row: SubmissionRecord): OutboundSummary => ({ ...base(row), tracked: false });

const recipientView = (row: RecipientRecord): OutboundRecipientView => ({
  email: row.address,
  kind: row.kind,
  status: row.status,
  attempts: row.attempts,
  creditRefunded: row.refunded,
  ...(row.lastSmtpCode !== null && { smtpCode: row.lastSmtpCode }),
  ...(row.lastEnhancedCode !== null && { enhancedCode: row.lastEnhancedCode }),
  ...(row.lastDiagnostic !== null && { diagnostic: row.lastDiagnostic }),
  ...(row.nextAttemptAt !== null && (row.status === 'queued' || row.status === 'deferred') && { nextAttemptAt: iso(row.nextAttemptAt) }),
  updatedAt: iso(row.updatedAt),
});

const eventView = (event: RecipientEvent): OutboundEventView => ({
  email: event.address,
  status: event.status,
  ...(event.smtpCode !== null && { smtpCode: event.smtpCode }),
  ...(event.enhancedCode !== null && { enhancedCode: event.enhancedCode }),
  ...(event.diagnostic !== null && { diagnostic: event.diagnostic }),
  at: iso(event.at),
});
