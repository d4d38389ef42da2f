import { createHmac, randomBytes } from 'node:crypto';

/** Event kinds (docs/agents/webhooks.md). */
export const MESSAGE_RECEIVED = 'message.received';
export const MESSAGE_DELIVERY_UPDATED = 'message.delivery_updated';
export const WEBHOOK_VERIFICATION = 'webhook.verification';

export type SubscribableEvent = typeof MESSAGE_RECEIVED | typeof MESSAGE_DELIVERY_UPDATED;
export type WebhookEventType = SubscribableEvent | typeof WEBHOOK_VERIFICATION;

/** The event body (docs/agents/webhooks.md, Events): createdAt is the observation time, ISO 8601 in UTC. */
export interface WebhookEnvelope {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  data: Record<string, unknown>;
}

const SECRET_PREFIX = 'whsec_';

/** docs/design.md "webhook secret": whsec_ + base64 of 32 random bytes. */
export const newSigningSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

const hmacBase64 = (key: string | Buffer, id: string, timestamp: number, body: string): string =>
  createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');

/**
 * Two signatures of the same content, space-separated as the scheme allows several:
 * 1. the contract's (docs/agents/webhooks.md, Signature): HMAC-SHA256 over "id.timestamp.body"
 *    keyed with the complete secret string, prefix included;
 * 2. the Standard Webhooks one (standardwebhooks.com, spec "Signature scheme"): the same
 *    HMAC keyed with the base64-decoded part after `whsec_`, which is what the stock
 *    `standardwebhooks` and `svix` libraries verify.
 * A hand-written receiver (the docs' own example) finds the first, the libraries the second;
 * both are `v1,<base64>` and the timestamp is Unix seconds (docs/design.md "webhook signature").
 */
export const signatureOf = (secret: string, id: string, timestamp: number, body: string): string => {
  const contract = `v1,${hmacBase64(secret, id, timestamp, body)}`;
  if (!secret.startsWith(SECRET_PREFIX)) return contract;
  const standard = `v1,${hmacBase64(Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'), id, timestamp, body)}`;
  return `${contract} ${standard}`;
};

export const signedHeaders = (secret: string, id: string, at: Date, body: string): Record<string, string> => {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureOf(secret, id, timestamp, body),
  };
};

/**
 * Config `limits.webhook*` (docs/operators/configuration.md): attempt n happens `retryMs[n-1]`
 * after the event (docs/design.md "webhook retry schedule": 8 attempts in 24 h), replays per
 * event, history kept and paged.
 */
export interface WebhookLimits {
  retryMs: readonly number[];
  replays: number;
  historyMs: number;
  perPage: number;
}

/** What one HTTP attempt came to. `error` is a safe code, never a response body or a secret. */
export interface AttemptOutcome {
  ok: boolean;
  httpStatus?: number;
  error?: string;
  /** The response body, capped; only verification reads it. */
  body?: string;
}

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

/** Performs one signed POST; implemented by the outgoing HTTP client (src/net/webhook-http.ts), injected by src/app/core.ts. */
export interface WebhookSender {
  send(request: WebhookRequest, signal?: AbortSignal): Promise<AttemptOutcome>;
}
