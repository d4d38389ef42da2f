// Several `serve` processes on one data folder share the webhook queue (docs/design.md, "Several
// processes on one store"): each event is leased to one node at a time; a node killed mid-attempt
// loses the lease when it runs out and another node sends the event again, with the same id.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { startCluster } from './helpers/cluster.js';
import { restCall } from './helpers/process.js';
import { smtpSend } from './helpers/smtp.js';
import { answerChallenge, startReceiver } from './helpers/webhook-receiver.js';

t.setTimeout(120_000);

const LEASE_MS = 3000;

/** Who holds an event's lease, as the store has it (read-only, beside the running nodes). */
const leaseOf = (dataDir: string, eventId: string): { leasedBy: string | null; leaseUntil: number | null } => {
  const db = new Database(join(dataDir, 'agentpost.db'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const row = db.prepare('SELECT leased_by AS leasedBy, lease_until AS leaseUntil FROM webhook_events WHERE id = ?').get(eventId) as
      | { leasedBy: string | null; leaseUntil: number | null }
      | undefined;
    return row ?? { leasedBy: null, leaseUntil: null };
  } finally {
    db.close();
  }
};

t.test('two nodes: every event is posted with its id; a node killed mid-attempt has it sent again by the other', async (t) => {
  const receiver = await startReceiver(t);
  const cluster = await startCluster(t, { nodes: 2, env: { AGENTPOST_CLUSTER_LEASE_MS: String(LEASE_MS), AGENTPOST_WEBHOOKS_ALLOW_INSECURE: 'true' } });
  const [first, second] = cluster.nodes;
  const registered = await restCall(first.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'cluster.hooks' } });
  const { email, apiKey } = registered.body as { email: string; apiKey: string };
  const created = await restCall(first.baseUrl, 'POST', '/api/v1/agent/webhooks', { key: apiKey, body: { url: receiver.url } });
  t.equal(created.status, 201);
  receiver.secret = created.body.signingSecret;
  const verified = await restCall(second.baseUrl, 'POST', `/api/v1/agent/webhooks/${created.body.id}/verify`, { key: apiKey });
  t.equal(verified.body.verified, true, 'verified through the other node');

  // Mail to both nodes' MX at once: each commit kicks its own node's dispatcher.
  await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      smtpSend(cluster.nodes[i % 2].smtpPort, { from: 'sender@example.com', to: email, subject: `mail ${i}`, text: `body ${i}` }),
    ),
  );
  const posted = await receiver.waitFor('message.received', 40);
  await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
  const events = receiver.ofType('message.received');
  t.equal(events.length, 40, 'one POST per event with both nodes up');
  t.equal(new Set(events.map((item) => item.id)).size, 40, 'forty distinct ids');
  t.ok(
    events.every((item) => item.signatureValid && item.event.id === item.id),
    'each signed, its envelope id the header id',
  );
  const listed = await restCall(first.baseUrl, 'GET', '/api/v1/agent/webhooks/deliveries', { key: apiKey });
  t.same(
    new Set((listed.body.deliveries as { id: string; status: string }[]).filter((item) => item.status === 'delivered').map((item) => item.id)),
    new Set(posted.map((item) => item.id)),
    'the ids the service lists are the ids posted',
  );

  // An attempt that takes longer than a lease (the receiver answers after two): its node renews
  // the lease while it waits, so the other node never sends the event too.
  let slow: string | null = null;
  receiver.reply = (event) => {
    if (event.type !== 'message.received' || slow !== null) return answerChallenge(event);
    slow = event.id as string;
    return { status: 200, body: 'ok', delayMs: 2 * LEASE_MS };
  };
  await smtpSend(second.smtpPort, { from: 'sender@example.com', to: email, subject: 'a slow receiver', text: 'wait for it' });
  await receiver.waitFor('message.received', 41);
  const slowId = slow as unknown as string;
  await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
  t.equal(receiver.ofType('message.received').filter((item) => item.id === slowId).length, 1, 'posted once, though it took two leases');
  const slowDelivery = await restCall(first.baseUrl, 'GET', `/api/v1/agent/webhooks/deliveries/${slowId}`, { key: apiKey });
  t.match(slowDelivery.body, { status: 'delivered', attempts: 1 });

  // The next event's first attempt never gets an answer; its node is killed during it.
  let hung: string | null = null;
  receiver.reply = (event) => {
    if (event.type !== 'message.received' || hung !== null) return answerChallenge(event);
    hung = event.id as string;
    return 'hang';
  };
  await smtpSend(first.smtpPort, { from: 'sender@example.com', to: email, subject: 'the killed attempt', text: 'once more' });
  await receiver.waitFor('message.received', 42);
  const eventId = hung as unknown as string;
  const { leasedBy: holder } = leaseOf(cluster.dataDir, eventId);
  t.ok(holder === 'node-1' || holder === 'node-2', `the attempt's node holds the lease (${holder})`);
  const [victim, survivor] = holder === 'node-1' ? [first, second] : [second, first];
  await victim.kill('SIGKILL');
  const leaseEnd = leaseOf(cluster.dataDir, eventId).leaseUntil ?? 0;

  const again = (await receiver.waitFor('message.received', 43)).filter((item) => item.id === eventId);
  t.equal(again.length, 2, 'the event was sent again');
  t.ok(Date.now() >= leaseEnd, 'only once the lease ran out');
  t.equal(again[1].body, again[0].body, 'the same body');
  t.ok(again[1].signatureValid);
  // The receiver has the POST a moment before the survivor records its answer.
  const deliveryOf = () => restCall(survivor.baseUrl, 'GET', `/api/v1/agent/webhooks/deliveries/${eventId}`, { key: apiKey });
  for (let tries = 0; (await deliveryOf()).body.status === 'pending' && tries < 50; tries += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  const delivery = await deliveryOf();
  t.match(delivery.body, { id: eventId, status: 'delivered', attempts: 1 }, `recorded by ${survivor.nodeId}, the killed attempt never`);
  t.same(leaseOf(cluster.dataDir, eventId), { leasedBy: null, leaseUntil: null }, 'no lease is left');
});
