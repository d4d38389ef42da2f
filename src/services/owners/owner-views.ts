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

  async overview(session: OwnerSession, accountId: string): Promise<AgentOverview> {
    const principal = await this.deps.ownership.principalFor(session, accountId);
    const account = await this.deps.ownership.visible(session, accountId);
    return {
      agent: agentSummary(account),
      sending: await this.deps.sending.status(principal),
      recipientsByDay: await this.recipientsByDay(account.id),
      twoFactor: await this.deps.twoFactor.statusOf(account.id),
    };
  }

  /** The account alone, after the ownership check (what page headers need). */
  async agent(session: OwnerSession, accountId: string): Promise<AgentSummary> {
    return agentSummary(await this.deps.ownership.visible(session, accountId));
  }

  /** The sending state, limits and today's usage (GET /api/v1/agent/sending's answer). */
  async sending(session: OwnerSession, accountId: string): Promise<SendingStatus> {
    return await this.deps.sending.status(await this.deps.ownership.principalFor(session, accountId));
  }

  async inbox(session: OwnerSession, accountId: string, query: ListQuery) {
    return this.deps.mailbox.list(await this.deps.ownership.principalFor(session, accountId), query);
  }

  async email(session: OwnerSession, accountId: string, folder: string, uid: number) {
    return this.deps.mailbox.read(await this.deps.ownership.principalFor(session, accountId), { uid, folder, markAsRead: false });
  }

  async outbound(session: OwnerSession, accountId: string, before?: string): Promise<OutboundPage> {
    return await this.deps.outbound.list(await this.deps.ownership.principalFor(session, accountId), before);
  }

  async outboundDetail(session: OwnerSession, accountId: string, id: string): Promise<OutboundDetail> {
    return await this.deps.outbound.detail(await this.deps.ownership.principalFor(session, accountId), id);
  }

  async webhooks(session: OwnerSession, accountId: string) {
    return await this.deps.webhooks.list(await this.agentPrincipal(session, accountId));
  }

  async deliveries(session: OwnerSession, accountId: string, before?: string) {
    return await this.deps.webhookDeliveries.list(await this.agentPrincipal(session, accountId), before);
  }

  async delivery(session: OwnerSession, accountId: string, id: string) {
    return await this.deps.webhookDeliveries.get(await this.agentPrincipal(session, accountId), id);
  }

  /** The console's "not junk" (and "junk"): the agent's judgment, made by its owner; the mailbox's filter learns from it. */
  async judgeJunk(session: OwnerSession, accountId: string, folder: string, uid: number, junk: boolean) {
    return this.deps.junkMarking.mark(await this.deps.ownership.principalFor(session, accountId), { uid, folder }, junk);
  }

  async accessKeys(session: OwnerSession, accountId: string): Promise<{ accessKeys: AccessKeyView[] }> {
    return await this.deps.accessKeys.list(await this.agentPrincipal(session, accountId));
  }

  async issueDraftKey(session: OwnerSession, accountId: string, request: AccessKeyRequest): Promise<AccessKeyView> {
    return await this.deps.accessKeys.createDraftKey(await this.agentPrincipal(session, accountId), request);
  }

  /** Needs the owner's own factorCode when the owner has two-factor on. */
  async revokeKey(session: OwnerSession, accountId: string, keyId: string, factorCode?: string): Promise<AccessKeyView> {
    return await this.deps.accessKeys.revoke(await this.agentPrincipal(session, accountId), keyId, factorCode);
  }

  /** The owner's own mailbox sends through the one send service (its credits and daily cap). */
  async send(session: OwnerSession, request: SendRequest, idempotencyKey: string | undefined) {
    return this.deps.sending.send(await this.deps.ownership.principalFor(session, session.ownerId), request, { idempotencyKey, via: 'rest' });
  }

  /** Keys and webhooks belong to agents; the owner's own account has neither. */
  private async agentPrincipal(session: OwnerSession, accountId: string) {
    await this.deps.ownership.ownedAgent(session, accountId);
    return await this.deps.ownership.principalFor(session, accountId);
  }

  /** Counted from the recipient rows the daily limit counts, one index range per day. */
  private async recipientsByDay(accountId: string): Promise<DayUsage[]> {
    const { store, timeZone } = this.deps;
    const starts = [startOfDay(timeZone, this.deps.clock.now().getTime())];
    // The instant before a day's start lies in the day before it.
    while (starts.length < USAGE_DAYS) starts.unshift(startOfDay(timeZone, starts[0] - 1));
    const since = await Promise.all(await Promise.all(starts.map((start) => store.submissions.countAccountRecipientsSince(accountId, start))));
    return starts.map((start, index) => ({ date: this.dayLabel.format(start), recipients: since[index] - (since[index + 1] ?? 0) }));
  }
}
