import type { Clock } from '../../core/clock.js';
import { startOfDay } from '../../core/time-zone.js';
import type { Store } from '../../store/index.js';
import type { JunkMarking } from '../junk/marking.js';
import type { TwoFactorResult, TwoFactorService } from '../access/two-factor.js';
import type { AccessKeyRequest, AccessKeyService, AccessKeyView } from '../keys/access-keys.js';
import type { ListQuery, MailboxService } from '../mail/mailbox.js';
import type { OutboundDetail, OutboundPage, OutboundService } from '../sending/outbound.js';
import type { SendingService } from '../sending/sending.js';
import type { SendRequest } from '../sending/send-input.js';
import type { SendingStatus } from '../sending/send-limits.js';
import type { WebhookDeliveryService } from '../webhooks/deliveries.js';
import type { WebhookService } from '../webhooks/endpoints.js';
import { agentSummary, type AgentSummary, type OwnershipService } from './ownership.js';
import type { OwnerSession } from './sessions.js';

/** Days the overview's recipients-per-day bar covers, today included. */
export const USAGE_DAYS = 14;

export interface DayUsage {
  /** The local date (service time zone), YYYY-MM-DD. */
  date: string;
  recipients: number;
}

/** What the owner sees of one account at a glance. */
export interface AgentOverview {
  agent: AgentSummary;
  sending: SendingStatus;
  /** Charged recipients per local day, oldest first, against sending.limits.recipientsPerDay. */
  recipientsByDay: DayUsage[];
  twoFactor: TwoFactorResult['status'];
}

export interface OwnerViewDeps {
  store: Store;
  clock: Clock;
  timeZone: string;
  ownership: OwnershipService;
  mailbox: MailboxService;
  sending: SendingService;
  outbound: OutboundService;
  webhooks: WebhookService;
  webhookDeliveries: WebhookDeliveryService;
  accessKeys: AccessKeyService;
  twoFactor: TwoFactorService;
  junkMarking: JunkMarking;
}

/**
 * The owner's views of an account it may see (an owned agent, or its own): each is the
 * agent-facing service called with the owner principal that `OwnershipService.principalFor`
 * builds after checking ownership. Reads never change flags (markAsRead is never set).
 */
export class OwnerViewService {
  private readonly dayLabel: Intl.DateTimeFormat;

  constructor(private readonly deps: OwnerViewDeps) {
    this.dayLabel = new Intl.DateTimeFormat('en-CA', { timeZone: deps.timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  }

  overview(session: OwnerSession, accountId: string): AgentOverview {
    const principal = this.deps.ownership.principalFor(session, accountId);
    const account = this.deps.ownership.visible(session, accountId);
    return {
      agent: agentSummary(account),
      sending: this.deps.sending.status(principal),
      recipientsByDay: this.recipientsByDay(account.id),
      twoFactor: this.deps.twoFactor.statusOf(account.id),
    };
  }

  /** The account alone, after the ownership check (what page headers need). */
  agent(session: OwnerSession, accountId: string): AgentSummary {
    return agentSummary(this.deps.ownership.visible(session, accountId));
  }

  /** The sending state, limits and today's usage (GET /api/v1/agent/sending's answer). */
  sending(session: OwnerSession, accountId: string): SendingStatus {
    return this.deps.sending.status(this.deps.ownership.principalFor(session, accountId));
  }

  inbox(session: OwnerSession, accountId: string, query: ListQuery) {
    return this.deps.mailbox.list(this.deps.ownership.principalFor(session, accountId), query);
  }

  email(session: OwnerSession, accountId: string, folder: string, uid: number) {
    return this.deps.mailbox.read(this.deps.ownership.principalFor(session, accountId), { uid, folder, markAsRead: false });
  }

  outbound(session: OwnerSession, accountId: string, before?: string): OutboundPage {
    return this.deps.outbound.list(this.deps.ownership.principalFor(session, accountId), before);
  }

  outboundDetail(session: OwnerSession, accountId: string, id: string): OutboundDetail {
    return this.deps.outbound.detail(this.deps.ownership.principalFor(session, accountId), id);
  }

  webhooks(session: OwnerSession, accountId: string) {
    return this.deps.webhooks.list(this.agentPrincipal(session, accountId));
  }

  deliveries(session: OwnerSession, accountId: string, before?: string) {
    return this.deps.webhookDeliveries.list(this.agentPrincipal(session, accountId), before);
  }

  delivery(session: OwnerSession, accountId: string, id: string) {
    return this.deps.webhookDeliveries.get(this.agentPrincipal(session, accountId), id);
  }

  /** The console's "not junk" (and "junk"): the agent's judgment, made by its owner; the mailbox's filter learns from it. */
  judgeJunk(session: OwnerSession, accountId: string, folder: string, uid: number, junk: boolean) {
    return this.deps.junkMarking.mark(this.deps.ownership.principalFor(session, accountId), { uid, folder }, junk);
  }

  accessKeys(session: OwnerSession, accountId: string): { accessKeys: AccessKeyView[] } {
    return this.deps.accessKeys.list(this.agentPrincipal(session, accountId));
  }

  issueDraftKey(session: OwnerSession, accountId: string, request: AccessKeyRequest): AccessKeyView {
    return this.deps.accessKeys.createDraftKey(this.agentPrincipal(session, accountId), request);
  }

  /** Needs the owner's own factorCode when the owner has two-factor on. */
  revokeKey(session: OwnerSession, accountId: string, keyId: string, factorCode?: string): AccessKeyView {
    return this.deps.accessKeys.revoke(this.agentPrincipal(session, accountId), keyId, factorCode);
  }

  /** The owner's own mailbox sends through the one send service (its credits and daily cap). */
  send(session: OwnerSession, request: SendRequest, idempotencyKey: string | undefined) {
    return this.deps.sending.send(this.deps.ownership.principalFor(session, session.ownerId), request, { idempotencyKey, via: 'rest' });
  }

  /** Keys and webhooks belong to agents; the owner's own account has neither. */
  private agentPrincipal(session: OwnerSession, accountId: string) {
    this.deps.ownership.ownedAgent(session, accountId);
    return this.deps.ownership.principalFor(session, accountId);
  }

  /** Counted from the recipient rows the daily limit counts, one index range per day. */
  private recipientsByDay(accountId: string): DayUsage[] {
    const { store, timeZone } = this.deps;
    const starts = [startOfDay(timeZone, this.deps.clock.now().getTime())];
    // The instant before a day's start lies in the day before it.
    while (starts.length < USAGE_DAYS) starts.unshift(startOfDay(timeZone, starts[0] - 1));
    const since = starts.map((start) => store.submissions.countAccountRecipientsSince(accountId, start));
    return starts.map((start, index) => ({ date: this.dayLabel.format(start), recipients: since[index] - (since[index + 1] ?? 0) }));
  }
}
