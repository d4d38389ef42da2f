import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/** A Checkout Session as this stand-in keeps it (the fields the service reads, as Stripe names them). */
export interface FakeSession {
  id: string;
  object: 'checkout.session';
  url: string | null;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  amount_total: number;
  currency: string;
  expires_at: number;
  mode: 'payment';
  success_url: string | null;
  cancel_url: string | null;
}

export interface StripeStandIn {
  url: string;
  sessions: Map<string, FakeSession>;
  /** Requests it was not made for (the service must make none). */
  unexpected: string[];
  /** How many sessions were created and retrieved. */
  calls: { create: number; retrieve: number };
  /** While true, every request is answered 500 (Stripe down). */
  failing: boolean;
  pay(sessionId: string): FakeSession;
  expire(sessionId: string): FakeSession;
  /** A signed callback, signed with the stripe package's own test header. */
  callback(type: string, session: FakeSession, options?: { secret?: string; timestamp?: number; eventId?: string }): { body: string; signature: string };
  close(): Promise<void>;
}

/**
 * Stands in for api.stripe.com on loopback, for exactly the two calls the service makes:
 * POST /v1/checkout/sessions (honouring Idempotency-Key, as Stripe does) and
 * GET /v1/checkout/sessions/{id}. Anything else is 404 and noted in `unexpected`.
 */
export const startStripeStandIn = async (webhookSecret: string): Promise<StripeStandIn> => {
  const sessions = new Map<string, FakeSession>();
  const byIdempotencyKey = new Map<string, string>();
  const standIn: StripeStandIn = {
    url: '',
    sessions,
    unexpected: [],
    calls: { create: 0, retrieve: 0 },
    failing: false,
    pay: (id) => Object.assign(sessions.get(id) as FakeSession, { status: 'complete', payment_status: 'paid' }),
    expire: (id) => Object.assign(sessions.get(id) as FakeSession, { status: 'expired' }),
    callback: (type, session, options = {}) => {
      const event = {
        id: options.eventId ?? `evt_${randomBytes(12).toString('hex')}`,
        object: 'event',
        type,
        api_version: '2025-01-01',
        created: Math.floor(Date.now() / 1000),
        data: { object: session },
      };
      const body = JSON.stringify(event);
      const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: options.secret ?? webhookSecret, timestamp: options.timestamp });
      return { body, signature };
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readAll(req);
    const answer = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
      res.end(JSON.stringify(value));
    };
    if (standIn.failing) return answer(500, { error: { type: 'api_error', message: 'down for the test' } });
    const path = (req.url ?? '').split('?')[0];
    const retrieve = /^\/v1\/checkout\/sessions\/([A-Za-z0-9_]+)$/.exec(path);
    if (req.method === 'POST' && path === '/v1/checkout/sessions') {
      standIn.calls.create += 1;
      const key = String(req.headers['idempotency-key'] ?? '');
      const known = byIdempotencyKey.get(key);
      if (known) return answer(200, sessions.get(known));
      const session = sessionFrom(new URLSearchParams(body));
      sessions.set(session.id, session);
      if (key) byIdempotencyKey.set(key, session.id);
      return answer(200, session);
    }
    if (req.method === 'GET' && retrieve) {
      standIn.calls.retrieve += 1;
      const session = sessions.get(retrieve[1]);
      return session
        ? answer(200, session)
        : answer(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such checkout.session' } });
    }
    standIn.unexpected.push(`${req.method} ${path}`);
    return answer(404, { error: { type: 'invalid_request_error', message: 'not part of this stand-in' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return standIn;
};

const sessionFrom = (form: URLSearchParams): FakeSession => {
  const id = `cs_test_${randomBytes(16).toString('hex')}`;
  const unitAmount = Number(form.get('line_items[0][price_data][unit_amount]'));
  const quantity = Number(form.get('line_items[0][quantity]'));
  return {
    id,
    object: 'checkout.session',
    url: `https://checkout.stripe.test/c/pay/${id}`,
    client_reference_id: form.get('client_reference_id'),
    metadata: { token: form.get('metadata[token]') ?? '' },
    status: 'open',
    payment_status: 'unpaid',
    amount_total: unitAmount * quantity,
    currency: form.get('line_items[0][price_data][currency]') ?? '',
    expires_at: Number(form.get('expires_at')),
    mode: 'payment',
    success_url: form.get('success_url'),
    cancel_url: form.get('cancel_url'),
  };
};

const readAll = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};
