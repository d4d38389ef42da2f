import { randomBytes } from 'node:crypto';
import type { AddressResolver } from '../../core/address-resolver.js';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { Principal } from '../../core/types.js';
import {
  MESSAGE_RECEIVED,
  newSigningSecret,
  signedHeaders,
  WEBHOOK_VERIFICATION,
  type AttemptOutcome,
  type SubscribableEvent,
  type WebhookEnvelope,
  type WebhookSender,
} from '../../core/webhooks.js';
import { resolveWebhookTarget, TargetRefused, type TargetPolicy } from '../../core/webhook-target.js';
import type { Store } from '../../store/index.js';
import type { WebhookEndpointRecord, WebhookStatus } from '../../store/webhooks.js';
import { requireFullKey, requireFullKeyOrOwner } from '../access/auth.js';
import { currentInbox, pauseIfBaselineBroken } from './inbox-identity.js';
import { webhookView, type WebhookView } from './views.js';

export interface CreateWebhookInput {
  url: string;
  events?: SubscribableEvent[];
  /** No message.received events for mail the junk filter filed in Junk (docs/agents/junk.md). */
  skipJunk?: boolean;
}

export interface CreatedWebhook extends WebhookView {
  /** Shown only in the create response. */
  signingSecret: string;
}

/** schema/webhook-verify-result.json. */
export interface VerifyResult {
  verified: boolean;
  status: WebhookStatus;
  httpStatus?: number;
  error?: string;
}

export interface DeletedWebhook {
  id: string;
  status: 'revoked';
  cancelledEvents: number;
}

/** The endpoint's lifecycle: create, list, verify, delete (docs/agents/webhooks.md). */
export class WebhookService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly resolver: AddressResolver,
    private readonly sender: WebhookSender,
    private readonly policy: TargetPolicy,
  ) {}

  async create(principal: Principal, input: CreateWebhookInput): Promise<CreatedWebhook> {
    requireFullKey(principal);
    if (await this.store.webhookEndpoints.currentOfAccount(principal.accountId)) throw oneEndpointOnly();
    await this.checkTarget(input.url);
    const signingSecret = newSigningSecret();
    const id = newUuid();
    const events = input.events ?? [MESSAGE_RECEIVED];
    await this.store.transaction(async () => {
      // Checked again inside the transaction: two creates may have raced through the DNS check.
      if (await this.store.webhookEndpoints.currentOfAccount(principal.accountId)) throw oneEndpointOnly();
      await this.store.webhookEndpoints.insert({
        id,
        accountId: principal.accountId,
        url: input.url,
        events: [...new Set(events)],
        skipJunk: input.skipJunk === true,
        signingSecret,
        createdAt: this.clock.now().getTime(),
      });
    });
    return { ...webhookView(await this.mustGet(id)), signingSecret };
  }

  async list(principal: Principal): Promise<{ webhooks: WebhookView[] }> {
    requireFullKeyOrOwner(principal);
    const endpoint = await this.store.webhookEndpoints.currentOfAccount(principal.accountId);
    if (endpoint) await pauseIfBaselineBroken(this.store, endpoint);
    return { webhooks: endpoint ? [webhookView(endpoint)] : [] };
  }

  /** docs/agents/webhooks.md: erases the signing configuration and cancels queued notifications; in-flight ones finish. */
  async delete(principal: Principal, id: string): Promise<DeletedWebhook> {
    requireFullKey(principal);
    const endpoint = await this.store.webhookEndpoints.byId(id);
    if (!endpoint || endpoint.accountId !== principal.accountId) throw notFound(id);
    const cancelledEvents = await this.store.transaction(async () =>
      (await this.store.webhookEndpoints.revoke(id, this.clock.now().getTime())) ? await this.store.webhookEvents.cancelPending(id, 'endpoint_deleted') : 0,
    );
    return { id, status: 'revoked', cancelledEvents };
  }

  /**
   * Sends the signed webhook.verification event; only HTTP 200 with a JSON body whose
   * `challenge` equals data.challenge verifies (docs/agents/webhooks.md, verification). Success starts a fresh
   * INBOX baseline: messages already there never produce events.
   */
  async verify(principal: Principal, id: string): Promise<VerifyResult> {
    requireFullKey(principal);
    const endpoint = await this.currentById(principal, id);
    const challenge = randomBytes(24).toString('base64url');
    const now = this.clock.now();
    const envelope: WebhookEnvelope = { id: newUuid(), type: WEBHOOK_VERIFICATION, createdAt: now.toISOString(), data: { challenge } };
    const body = JSON.stringify(envelope);
    const outcome = await this.sender.send({ url: endpoint.url, body, headers: signedHeaders(endpoint.signingSecret ?? '', envelope.id, now, body) });
    const error = verificationError(outcome, challenge);
    if (error === null) {
      await this.store.transaction(async () => {
        const inbox = await currentInbox(this.store, endpoint.accountId);
        if (!inbox) throw new AppError('not_found', 'this account has no mailbox');
        await this.store.webhookEndpoints.markVerified(endpoint.id, inbox, this.clock.now().getTime());
      });
    }
    const status = (await this.store.webhookEndpoints.byId(endpoint.id))?.status ?? 'revoked';
    return {
      verified: error === null && status === 'verified',
      status,
      ...(outcome.httpStatus !== undefined && { httpStatus: outcome.httpStatus }),
      ...(error !== null && { error }),
    };
  }

  private async checkTarget(url: string): Promise<void> {
    try {
      await resolveWebhookTarget(url, this.resolver, this.policy);
    } catch (error) {
      if (error instanceof TargetRefused) throw new AppError('invalid_input', `url refused (${error.code}): ${error.message}`, { field: 'url' });
      throw error;
    }
  }

  private async currentById(principal: Principal, id: string): Promise<WebhookEndpointRecord> {
    const endpoint = await this.store.webhookEndpoints.currentOfAccount(principal.accountId);
    if (!endpoint || endpoint.id !== id) throw notFound(id);
    return endpoint;
  }

  private async mustGet(id: string): Promise<WebhookEndpointRecord> {
    const endpoint = await this.store.webhookEndpoints.byId(id);
    if (!endpoint) throw notFound(id);
    return endpoint;
  }
}

/** A safe reason why a verification did not succeed, or null when it did. */
const verificationError = (outcome: AttemptOutcome, challenge: string): string | null => {
  if (!outcome.ok) return outcome.error ?? 'failed';
  if (outcome.httpStatus !== 200) return `http_${outcome.httpStatus}`;
  try {
    const parsed = JSON.parse(outcome.body ?? '') as unknown;
    const answered = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).challenge : undefined;
    return answered === challenge ? null : 'challenge_mismatch';
  } catch {
    return 'challenge_mismatch';
  }
};

const oneEndpointOnly = (): AppError => new AppError('conflict', 'this agent already has a webhook endpoint; delete it first');

const notFound = (id: string): AppError => new AppError('not_found', `no webhook ${id}`);
