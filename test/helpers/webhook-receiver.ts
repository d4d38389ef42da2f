import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  event: any;
  /** Checked here with node:crypto alone, as a receiver would, not with the service's code. */
  signatureValid: boolean;
}

/** How the receiver answers one request: a status and body (after `delayMs`, if given), or 'hang' (never answer). */
export type Reply = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** Set after create: the signing secret the receiver verifies with. */
  secret: string;
  /** Decides each answer; by default verification is answered and everything else gets 200. */
  reply: (event: any, received: ReceivedWebhook[]) => Reply;
  /** Resolves once `count` requests of `type` have arrived (no timers: it listens for them). */
  waitFor(type: string, count?: number): Promise<ReceivedWebhook[]>;
  ofType(type: string): ReceivedWebhook[];
}

export const answerChallenge = (event: any): Reply =>
  event.type === 'webhook.verification'
    ? { status: 200, body: JSON.stringify({ challenge: event.data.challenge }), headers: { 'content-type': 'application/json' } }
    : { status: 200, body: 'ok' };

/** A real HTTP receiver on loopback that checks every signature on its own. */
export const startReceiver = async (t: Test): Promise<Receiver> => {
  const waiters: (() => void)[] = [];
  const hanging: ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    secret: '',
    reply: answerChallenge,
    waitFor(type, count = 1) {
      return new Promise((resolve) => {
        const check = () => {
          const matching = receiver.ofType(type);
          if (matching.length >= count) resolve(matching);
          else waiters.push(check);
        };
        check();
      });
    },
    ofType: (type) => receiver.received.filter((item) => item.event?.type === type),
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const item = record(req, body, receiver.secret);
    receiver.received.push(item);
    const reply = receiver.reply(item.event, receiver.received);
    if (reply === 'hang') hanging.push(res);
    else if (reply.delayMs) {
      hanging.push(res);
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? '');
      }, reply.delayMs);
    } else res.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? '');
    for (const waiter of waiters.splice(0)) waiter();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/agentpost`;
  t.teardown(() => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return receiver;
};

const header = (req: IncomingMessage, name: string): string => String(req.headers[name] ?? '');

const record = (req: IncomingMessage, body: string, secret: string): ReceivedWebhook => {
  const id = header(req, 'webhook-id');
  const timestamp = header(req, 'webhook-timestamp');
  const signature = header(req, 'webhook-signature');
  let event: any = null;
  try {
    event = JSON.parse(body);
  } catch {
    /* left null: the test sees a body that is not JSON */
  }
  return { id, timestamp, signature, body, event, signatureValid: verifySignature(secret, id, timestamp, body, signature) };
};

/** The receiver's side of docs/design.md "webhook signature": v1,<base64 HMAC-SHA256 of id.timestamp.body>. */
export const verifySignature = (secret: string, id: string, timestamp: string, body: string, header: string): boolean => {
  if (!secret || !/^\d+$/.test(timestamp)) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('base64'));
  return header.split(' ').some((part) => {
    const [version, value] = part.split(',');
    const given = Buffer.from(value ?? '');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
};
