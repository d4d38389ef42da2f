import type { WebhookEnvelope } from '../../core/webhooks.js';
import type { WebhookAttemptRecord, WebhookEventRecord } from '../../store/webhook-events.js';
import type { WebhookEndpointRecord, WebhookStatus } from '../../store/webhooks.js';

/** schema/webhook.json: the endpoint without its secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  skipJunk: boolean;
  status: WebhookStatus;
  createdAt: string;
  verifiedAt?: string;
  pausedReason?: string;
}

export const webhookView = (endpoint: WebhookEndpointRecord): WebhookView => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  skipJunk: endpoint.skipJunk,
  status: endpoint.status,
  createdAt: iso(endpoint.createdAt),
  ...(endpoint.verifiedAt !== null && { verifiedAt: iso(endpoint.verifiedAt) }),
  ...(endpoint.pausedReason !== null && endpoint.status === 'paused' && { pausedReason: endpoint.pausedReason }),
});

/** schema/webhook-delivery.json: one event in the delivery history. */
export interface DeliveryView {
  id: string;
  type: string;
  status: string;
  createdAt: string;
  attempts: number;
  replays: number;
  lastAttemptAt?: string;
  nextAttemptAt?: string;
  lastHttpStatus?: number;
  lastError?: string;
}

export const deliveryView = (event: WebhookEventRecord): DeliveryView => ({
  id: event.id,
  type: event.type,
  status: event.status,
  createdAt: iso(event.createdAt),
  attempts: event.attempts,
  replays: event.replays,
  ...(event.lastAttemptAt !== null && { lastAttemptAt: iso(event.lastAttemptAt) }),
  ...(event.nextAttemptAt !== null && event.status === 'pending' && { nextAttemptAt: iso(event.nextAttemptAt) }),
  ...(event.lastHttpStatus !== null && { lastHttpStatus: event.lastHttpStatus }),
  ...(event.lastError !== null && { lastError: event.lastError }),
});

/** One HTTP attempt; `replay` is 0 for the scheduled run and n for the n-th replay. */
export interface AttemptView {
  number: number;
  replay: number;
  at: string;
  durationMs: number;
  succeeded: boolean;
  httpStatus?: number;
  error?: string;
}

export const attemptView = (attempt: WebhookAttemptRecord, index: number): AttemptView => ({
  number: index + 1,
  replay: attempt.replay,
  at: iso(attempt.at),
  durationMs: attempt.durationMs,
  succeeded: attempt.error === null,
  ...(attempt.httpStatus !== null && { httpStatus: attempt.httpStatus }),
  ...(attempt.error !== null && { error: attempt.error }),
});

export interface DeliveryDetailView extends DeliveryView {
  event: WebhookEnvelope;
  attemptLog: AttemptView[];
}

export const iso = (ms: number): string => new Date(ms).toISOString();
