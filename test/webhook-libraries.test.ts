import t from 'tap';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { webhookFixture } from './helpers/webhooks.js';
import { verifySignature, type ReceivedWebhook } from './helpers/webhook-receiver.js';

/**
 * The stock Standard Webhooks libraries check the timestamp against the real time, so this
 * fixture's clock starts at the real time (the tolerance is 5 minutes; nothing here waits).
 */
const headersOf = (item: ReceivedWebhook): Record<string, string> => ({
  'webhook-id': item.id,
  'webhook-timestamp': item.timestamp,
  'webhook-signature': item.signature,
});

const libraries = (secret: string) =>
  [
    ['standardwebhooks', new StandardWebhook(secret)],
    ['svix', new SvixWebhook(secret)],
  ] as const;

t.test('every delivery verifies with standardwebhooks, svix and a contract receiver', async (t) => {
  const f = await webhookFixture(t, { startAt: new Date() });
  await f.mail('hello');
  await f.receiver.waitFor('message.received');
  const received = f.receiver.received;
  t.same(
    received.map((item) => item.event.type),
    ['webhook.verification', 'message.received'],
  );
  for (const item of received) {
    t.ok(verifySignature(f.receiver.secret, item.id, item.timestamp, item.body, item.signature), `${item.event.type}: the contract signature`);
    for (const [name, library] of libraries(f.receiver.secret)) {
      t.same(library.verify(item.body, headersOf(item)), item.event, `${item.event.type}: ${name} verifies and parses`);
    }
  }
});

t.test('the libraries still refuse a changed body, another secret and another id', async (t) => {
  const f = await webhookFixture(t, { startAt: new Date() });
  const [item] = f.receiver.ofType('webhook.verification');
  const otherSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  for (const [name, library] of libraries(f.receiver.secret)) {
    t.throws(() => library.verify(item.body.replace('webhook.verification', 'message.received'), headersOf(item)), /signature/i, `${name}: a changed body`);
    t.throws(() => library.verify(item.body, { ...headersOf(item), 'webhook-id': 'evt_other' }), /signature/i, `${name}: another id`);
  }
  for (const [name, library] of libraries(otherSecret)) {
    t.throws(() => library.verify(item.body, headersOf(item)), /signature/i, `${name}: another secret`);
  }
  t.notOk(verifySignature(otherSecret, item.id, item.timestamp, item.body, item.signature), 'the contract check refuses another secret');
});
