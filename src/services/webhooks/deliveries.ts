import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { Principal } from '../../core/types.js';
import type { WebhookEnvelope, WebhookLimits } from '../../core/webhooks.js';
import type { Store } from '../../store/index.js';
import type { WebhookEventRecord } from '../../store/webhook-events.js';
import { requireFullKey, requireFullKeyOrOwner } from '../access/auth.js';
import type { WebhookDispatchService } from './dispatch.js';
import { pauseIfBaselineBroken } from './inbox-identity.js';
import { attemptView, deliveryView, type AttemptView, type DeliveryDetailView, type DeliveryView } from './views.js';

export interface DeliveryPage {
  deliveries: DeliveryView[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

/** schema/webhook-replay-result.json. */
export interface ReplayResult {
  id: string;
  status: string;
  replays: number;
  replaysRemaining: number;
  attempt: AttemptView;
}

/** Delivery history (by default 30 days, 50 a page, newest first) and replays (3 per event). */
export class WebhookDeliveryService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly dispatch: WebhookDispatchService,
    private readonly limits: WebhookLimits,
  ) {}

  async list(principal: Principal, before?: string): Promise<DeliveryPage> {
    requireFullKeyOrOwner(principal);
    const { perPage, historyMs } = this.limits;
    const since = this.clock.now().getTime() - historyMs;
    const rows = await this.store.webhookEvents.page(principal.accountId, since, before === undefined ? null : Number(before), perPage + 1);
    const page = rows.slice(0, perPage);
    return {
      deliveries: page.map(deliveryView),
      nextCursor: rows.length > perPage ? String(page[page.length - 1].seq) : null,
    };
  }

  async get(principal: Principal, id: string): Promise<DeliveryDetailView> {
    requireFullKeyOrOwner(principal);
    const event = await this.eventOf(principal, id);
    return {
      ...deliveryView(event),
      event: JSON.parse(event.body) as WebhookEnvelope,
      attemptLog: (await this.store.webhookEvents.attemptsOf(event.seq)).map(attemptView),
    };
  }

  /**
   * docs/agents/webhooks.md: a completed (delivered or failed) event can be replayed while fewer
   * than `limits.webhookReplays` (3) replays were made; the same event id and body go out as one signed attempt.
   */
  async replay(principal: Principal, id: string): Promise<ReplayResult> {
    requireFullKey(principal);
    const event = await this.eventOf(principal, id);
    const endpoint = await this.store.webhookEndpoints.byId(event.endpointId);
    if (!endpoint || endpoint.status === 'revoked') throw new AppError('conflict', 'the webhook endpoint of this event was deleted');
    await pauseIfBaselineBroken(this.store, endpoint);
    if (endpoint.status !== 'verified') throw new AppError('conflict', `the webhook endpoint is ${endpoint.status}; verify it first`);
    if (event.status !== 'delivered' && event.status !== 'failed')
      throw new AppError('conflict', `event is ${event.status}; only a delivered or failed event can be replayed`);
    const replay = await this.store.transaction(() => this.store.webhookEvents.claimReplay(event.seq, this.limits.replays));
    if (replay === null) throw new AppError('conflict', `event was already replayed ${this.limits.replays} times`);
    await this.dispatch.perform(event, endpoint, replay);
    const after = await this.eventOf(principal, id);
    const attempts = await this.store.webhookEvents.attemptsOf(after.seq);
    return {
      id: after.id,
      status: after.status,
      replays: after.replays,
      replaysRemaining: Math.max(0, this.limits.replays - after.replays),
      attempt: attemptView(attempts[attempts.length - 1], attempts.length - 1),
    };
  }

  private async eventOf(principal: Principal, id: string): Promise<WebhookEventRecord> {
    const event = await this.store.webhookEvents.byId(principal.accountId, id);
    const since = this.clock.now().getTime() - this.limits.historyMs;
    if (!event || event.createdAt < since) throw new AppError('not_found', `no webhook delivery ${id}`);
    return event;
  }
}
