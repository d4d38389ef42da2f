// Fault suite, several processes: two, then three `serve` processes on one data folder (docs/design.md,
// "Several processes on one store") under a mixed load (mail into every MX, sends through every
// node, an IMAP client on one node, an event stream on another) while one node, picked at random,
// is killed with SIGKILL at a random moment of each round and started again under its name.
// Once the load stops and the work drains, from the shared store and what the sink and the
// webhook receiver saw: every 250 stored exactly once, UIDs dense in every folder, each outbound
// recipient handed to the sink at most once and exactly once when recorded as delivered,
// webhook events posted at least once with unchanged ids and bodies, credits never overspent,
// and the database intact. Prints the seed, the kills and the counts.
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import t, { type Test } from 'tap';
import { type Cluster, type ClusterNode, startCluster } from './helpers/cluster.js';
import { openStream } from './helpers/event-stream.js';
import { faultSeed, integrityCheck, report, seededRandom, sleep, withDatabase } from './helpers/fault.js';
import { restCall } from './helpers/process.js';
import { startSink } from './helpers/sink.js';
import { startReceiver } from './helpers/webhook-receiver.js';

t.setTimeout(600_000);

const ROUNDS = 3;
const LEASE_MS = 3000;
const CREDITS = 6_000;
/** The domain re-check every two seconds instead of daily: a once-per-service job with many periods in the test. */
const EVERY_TWO_SECONDS = '*/2 * * * * *';
const SMTP_SESSIONS_PER_NODE = 2;
const SEND_LOOPS = 3;

interface Agent {
  email: string;
  apiKey: string;
}

/** The periods of the domain re-check a node took, from its log ('calendar job taken', debug). */
const periodsTaken = (node: ClusterNode): number[] =>
  node
    .logLines()
    .filter((line) => line.message === 'calendar job taken' && line.job === 'domain-recheck')
    .map((line) => line.period as number);

/** The nodes alive now, by name; a killed node is started again under its name (new ports). */
class LiveNodes {
  readonly byName = new Map<string, ClusterNode>();

  constructor(nodes: ClusterNode[]) {
    for (const node of nodes) this.byName.set(node.nodeId, node);
  }

  pick(index: number): ClusterNode | null {
    const nodes = [...this.byName.values()];
    return nodes.length === 0 ? null : nodes[index % nodes.length];
  }
}

const sendingConfig = (relayPort: number) => ({
  domains: { recheckSchedule: EVERY_TWO_SECONDS },
  outbound: { relay: `smtp://127.0.0.1:${relayPort}`, timeoutMs: 30_000, concurrency: 2 },
  limits: {
    sendRequestsPerMinute: 100_000,
    registrationsPerIpPerHour: 1_000,
    sendingStates: Object.fromEntries(
      ['probation', 'standard', 'reviewed'].map((state) => [state, { recipientsPerDay: 100_000, recipientsPerMinute: 100_000 }]),
    ),
  },
});

/** Mail into the MX of whichever node is alive, one SMTP session per loop; each 250's Message-ID is kept. */
const smtpLoop = async (live: LiveNodes, loop: number, to: string, acked: Set<string>, running: () => boolean): Promise<void> => {
  for (let n = 0; running(); n += 1) {
    const node = live.pick(loop + n);
    if (!node) {
      await sleep(50);
      continue;
    }
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: node.smtpPort, secure: false, ignoreTLS: true });
    const messageId = `<l${loop}.m${n}@fault-cluster.test>`;
    try {
      await transport.sendMail({ from: `sender${loop}@remote.test`, to, subject: `loop ${loop} #${n}`, messageId, text: `message ${n}\n`.repeat(20) });
      acked.add(messageId);
    } catch {
      // The node died before answering: this message has no 250 (it may still be stored once).
      await sleep(20);
    } finally {
      transport.close();
    }
  }
};

/** Sends of two remote recipients through whichever node is alive. */
const sendLoop = async (live: LiveNodes, loop: number, sender: Agent, running: () => boolean): Promise<number> => {
  let accepted = 0;
  for (let n = 0; running(); n += 1) {
    const node = live.pick(loop + n);
    if (!node) {
      await sleep(50);
      continue;
    }
    try {
      const to = [`user${loop}.${n}@remote.test`, `copy${loop}.${n}@remote.test`];
      const response = await restCall(node.baseUrl, 'POST', '/api/v1/agent/send', {
        key: sender.apiKey,
        body: { to, subject: `send ${loop}.${n}`, text: 'hello' },
      });
      if (response.status === 200) accepted += 1;
    } catch {
      await sleep(50);
    }
  }
  return accepted;
};

/** An IMAP client on the first node, selecting and reading INBOX again and again. */
const imapLoop = async (live: LiveNodes, agent: Agent, running: () => boolean): Promise<number> => {
  let sessions = 0;
  while (running()) {
    const node = live.byName.get('node-1');
    if (!node) {
      await sleep(100);
      continue;
    }
    const client = new ImapFlow({ host: '127.0.0.1', port: node.imapPort, secure: false, auth: { user: agent.email, pass: agent.apiKey }, logger: false });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.mailboxOpen('INBOX');
      for await (const _message of client.fetch('1:*', { uid: true, flags: true })) {
        // read through
      }
      await client.logout();
      sessions += 1;
    } catch {
      client.close();
    }
    await sleep(200);
  }
  return sessions;
};

const readStore = <T>(cluster: Cluster, work: Parameters<typeof withDatabase<T>>[1]): T => withDatabase(join(cluster.dataDir, 'agentpost.db'), work);

const waitUntil = async (what: string, check: () => boolean, timeoutMs = 120_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(200);
  }
};

const register = async (node: ClusterNode, agentId: string): Promise<Agent> => {
  const response = await restCall(node.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId } });
  return response.body as Agent;
};

const setUp = async (t: Test, nodes: number) => {
  const sink = await startSink(t);
  const receiver = await startReceiver(t);
  const cluster = await startCluster(t, {
    nodes,
    env: { AGENTPOST_CLUSTER_LEASE_MS: String(LEASE_MS), AGENTPOST_WEBHOOKS_ALLOW_INSECURE: 'true', AGENTPOST_LOG_LEVEL: 'debug' },
    config: sendingConfig(sink.port),
  });
  const [first, second] = cluster.nodes;
  const inbox = await register(first, 'cluster.inbox');
  const other = await register(second, 'cluster.other');
  const sender = await register(first, 'cluster.sender');
  const granted = await cluster.cli('credits', 'add', sender.email, String(CREDITS));
  t.equal(granted.code, 0, granted.stderr);
  const created = await restCall(first.baseUrl, 'POST', '/api/v1/agent/webhooks', { key: inbox.apiKey, body: { url: receiver.url } });
  receiver.secret = created.body.signingSecret;
  const verified = await restCall(second.baseUrl, 'POST', `/api/v1/agent/webhooks/${created.body.id}/verify`, { key: inbox.apiKey });
  t.equal(verified.body.verified, true);
  return { sink, receiver, cluster, inbox, other, sender };
};

const mixedLoad = async (t: Test, nodes: number): Promise<void> => {
  const seed = faultSeed();
  const random = seededRandom(seed);
  const { sink, receiver, cluster, inbox, other, sender } = await setUp(t, nodes);
  const live = new LiveNodes(cluster.nodes);
  /** Every process that ran, the killed ones too: their logs say which periods they took. */
  const processes = [...cluster.nodes];
  const stream = openStream(t, live.byName.get('node-2')?.baseUrl ?? '', inbox.apiKey);
  let running = true;
  // A failed assertion ends the test early: the load stops with it.
  t.teardown(() => {
    running = false;
  });
  const acked = new Set<string>();
  const mail = Promise.all(
    Array.from({ length: nodes * SMTP_SESSIONS_PER_NODE }, (_, loop) => smtpLoop(live, loop, loop % 3 === 2 ? other.email : inbox.email, acked, () => running)),
  );
  const sends = Promise.all(Array.from({ length: SEND_LOOPS }, (_, loop) => sendLoop(live, loop, sender, () => running)));
  const imap = imapLoop(live, inbox, () => running);
  const kills: string[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    await sleep(1500 + random() * 2500);
    const victim = [...live.byName.keys()][Math.floor(random() * live.byName.size)];
    const node = live.byName.get(victim) as ClusterNode;
    live.byName.delete(victim);
    await node.kill('SIGKILL');
    kills.push(`${victim} after ${acked.size} acks`);
    await sleep(300 + random() * 1200);
    const restarted = await cluster.start(victim);
    processes.push(restarted);
    live.byName.set(victim, restarted);
  }
  await sleep(1000);
  running = false;
  await mail;
  const sendsAccepted = (await sends).reduce((sum, count) => sum + count, 0);
  const imapSessions = await imap;

  // Drained: the inbound queue empty, every recipient settled, every event delivered.
  await waitUntil(
    'the inbound queue is empty',
    () => readStore(cluster, (db) => db.prepare('SELECT count(*) FROM inbound_queue').pluck().get() as number) === 0,
  );
  await waitUntil(
    'every recipient is settled',
    () =>
      readStore(cluster, (db) => db.prepare("SELECT count(*) FROM submission_recipients WHERE status IN ('queued', 'deferred')").pluck().get() as number) === 0,
  );
  await waitUntil(
    'every webhook event is delivered',
    () => readStore(cluster, (db) => db.prepare("SELECT count(*) FROM webhook_events WHERE status = 'pending'").pluck().get() as number) === 0,
  );

  readStore(cluster, (db) => {
    // Every 250 stored exactly once; nothing stored twice.
    const storedIds = db
      .prepare('SELECT message_id AS id, count(*) AS n FROM messages WHERE message_id LIKE ? GROUP BY message_id')
      .all('%@fault-cluster.test>') as {
      id: string;
      n: number;
    }[];
    const stored = new Map(storedIds.map((row) => [row.id, row.n]));
    const missing = [...acked].filter((id) => !stored.has(id));
    t.same(missing, [], `every one of the ${acked.size} messages answered 250 is stored`);
    t.same(
      storedIds.filter((row) => row.n > 1),
      [],
      'no message stored twice',
    );
    // UIDs dense in every folder.
    const folders = db
      .prepare(
        'SELECT f.id, f.name, f.uid_next AS uidNext, count(m.id) AS n, coalesce(max(m.uid), 0) AS top FROM folders f LEFT JOIN messages m ON m.folder_id = f.id GROUP BY f.id',
      )
      .all() as { id: number; name: string; uidNext: number; n: number; top: number }[];
    t.same(
      folders.filter((folder) => folder.n !== folder.top || folder.uidNext !== folder.top + 1),
      [],
      `UIDs dense in all ${folders.length} folders`,
    );
    // Each recipient handed to the sink at most once, exactly once when recorded as delivered.
    const handed = new Map<string, number>();
    for (const message of sink.messages) {
      const messageId = /^Message-ID:\s*(<[^>]+>)/im.exec(message.raw.toString('latin1'))?.[1] ?? '';
      for (const rcpt of message.to) handed.set(`${messageId}|${rcpt}`, (handed.get(`${messageId}|${rcpt}`) ?? 0) + 1);
    }
    const recipients = db
      .prepare('SELECT s.message_id AS messageId, r.address, r.status FROM submission_recipients r JOIN submissions s ON s.id = r.submission_id')
      .all() as { messageId: string; address: string; status: string }[];
    t.same(
      [...handed].filter(([, n]) => n > 1),
      [],
      `no recipient handed over twice (${sink.messages.length} messages at the sink)`,
    );
    t.same(
      recipients.filter((row) => row.status === 'delivered' && handed.get(`${row.messageId}|${row.address}`) !== 1),
      [],
      `each of ${recipients.filter((row) => row.status === 'delivered').length} delivered recipients reached the sink once`,
    );
    const statuses = db.prepare('SELECT status, count(*) AS n FROM submission_recipients GROUP BY status').all() as { status: string; n: number }[];
    // Credits: never below zero, and exactly what was granted, charged and refunded.
    const account = db.prepare('SELECT credits FROM accounts WHERE email = ?').get(sender.email) as {
      credits: number;
    };
    const charged = db
      .prepare('SELECT coalesce(sum(credit_reserved), 0) AS reserved, coalesce(sum(refunded), 0) AS refunded FROM submission_recipients')
      .get() as { reserved: number; refunded: number };
    t.ok(account.credits >= 0, 'credits never overspent');
    t.equal(account.credits, CREDITS - charged.reserved + charged.refunded, 'the balance is what was granted, charged and refunded');
    // Webhook events: every delivered one posted, each id with one body.
    const events = db.prepare("SELECT id FROM webhook_events WHERE status = 'delivered' AND type = 'message.received'").pluck().all() as string[];
    const posted = new Map<string, Set<string>>();
    for (const item of receiver.ofType('message.received')) posted.set(item.id, (posted.get(item.id) ?? new Set()).add(item.body));
    t.same(
      events.filter((id) => !posted.has(id)),
      [],
      `each of ${events.length} delivered events was posted`,
    );
    t.same(
      [...posted].filter(([, bodies]) => bodies.size > 1),
      [],
      'an event posted again has its id and its body',
    );
    t.ok(
      receiver.ofType('message.received').every((item) => item.signatureValid),
      'every POST signed',
    );
    t.equal(integrityCheck(db), 'ok', 'integrity_check');
    report(
      t,
      `seed ${seed}; kills: ${kills.join(', ')}; ${acked.size} messages answered 250, ${storedIds.length} stored; ${sendsAccepted} sends accepted, recipients ${statuses.map((row) => `${row.n} ${row.status}`).join(', ')}; ${receiver.ofType('message.received').length} webhook POSTs for ${events.length} events; ${stream.events.length} streamed events; ${imapSessions} IMAP sessions`,
    );
  });
  const periods = processes.flatMap(periodsTaken);
  t.ok(periods.length >= 3, `the re-check ran in ${periods.length} periods`);
  t.equal(new Set(periods).size, periods.length, 'no period of the once-per-service job ran twice');
  const streamedIds = stream.events.map((event) => event.id);
  t.equal(new Set(streamedIds).size, streamedIds.length, 'the event stream gave no event twice');
};

for (const nodes of [2, 3]) {
  t.test(`${nodes} nodes under a mixed load, one killed at random each round: nothing lost, nothing twice`, (t) => mixedLoad(t, nodes));
}
