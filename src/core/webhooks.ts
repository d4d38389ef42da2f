import { createHmac, randomBytes } from 'node:crypto';

/** Event kinds of the contract's Events part. */
export const MESSAGE_RECEIVED = 'message.received';
export const MESSAGE_DELIVERY_UPDATED = 'message.delivery_updated';
export const WEBHOOK_VERIFICATION = 'webhook.verification';

export type SubscribableEvent = typeof MESSAGE_RECEIVED | typeof MESSAGE_DELIVERY_UPDATED;
export type WebhookEventType = SubscribableEvent | typeof WEBHOOK_VERIFICATION;

/** Contract Events "Envelope": createdAt is the observation time, ISO 8601 in UTC. */
export interface WebhookEnvelope {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  data: Record<string, unknown>;
}

/** DESIGN.md "webhook secret": whsec_ + base64 of 32 random bytes. */
export const newSigningSecret = (): string => 'whsec_' + randomBytes(32).toString('base64');

/**
 * Contract Events "Headers and signature" with DESIGN.md's choices: HMAC-SHA256 over
 * "id.timestamp.body", keyed with the complete secret string (prefix included), base64,
 * as `v1,<signature>`; the timestamp is Unix seconds.
 */
export const signatureOf = (secret: string, id: string, timestamp: number, body: string): string =>
  'v1,' + createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('base64');

export const signedHeaders = (secret: string, id: string, at: Date, body: string): Record<string, string> => {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureOf(secret, id, timestamp, body),
  };
};

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** DESIGN.md "webhook retry schedule": attempt n happens this long after the event (8 attempts in 24 h). */
export const RETRY_SCHEDULE_MS: readonly number[] = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 24 * HOUR];

/** Contract Limits: 3 replays per event; history kept 30 days, 50 a page. */
export const MAX_REPLAYS = 3;
export const DELIVERY_RETENTION_MS = 30 * 24 * HOUR;
export const DELIVERIES_PAGE_SIZE = 50;

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

/** Performs one signed POST; implemented by the outgoing HTTP adapter and injected by main.ts. */
export interface WebhookSender {
  send(request: WebhookRequest, signal?: AbortSignal): Promise<AttemptOutcome>;
}
