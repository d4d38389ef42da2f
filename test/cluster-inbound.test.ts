// Several `serve` processes on one data folder drain one inbound queue (docs/design.md, "Several
// processes on one store"): each queued message is claimed before it is stored, so it is stored
// once however many nodes drain, and a node killed mid-burst leaves nothing behind.
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { type Cluster, startCluster } from './helpers/cluster.js';
import { restCall } from './helpers/process.js';
import { smtpSend } from './helpers/smtp.js';

t.setTimeout(120_000);

const LEASE_MS = 3000;

/** Every node queues every message (inlineLimit 0): the burst is all in the queue. */
const burstEnv = { AGENTPOST_CLUSTER_LEASE_MS: String(LEASE_MS), AGENTPOST_SMTP_QUEUE_INLINE_LIMIT: '0' };

const claimsIn = (dataDir: string): { claimedBy: string | null; leaseUntil: number | null }[] => {
  const db = new Database(join(dataDir, 'agentpost.db'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return db.prepare('SELECT claimed_by AS claimedBy, lease_until AS leaseUntil FROM inbound_queue WHERE claimed_by IS NOT NULL').all() as {
      claimedBy: string | null;
      leaseUntil: number | null;
    }[];
  } finally {
    db.close();
  }
};

const queuedIn = (dataDir: string): number => {
  const db = new Database(join(dataDir, 'agentpost.db'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return (db.prepare('SELECT count(*) AS n FROM inbound_queue').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

/** The subjects in the agent's INBOX and Junk, one entry per stored copy. */
const storedSubjects = async (baseUrl: string, apiKey: string): Promise<string[]> => {
  const subjects: string[] = [];
  for (const folder of ['INBOX', 'Junk']) {
    for (let offset = 0; ; offset += 100) {
      const query = new URLSearchParams({ folder, limit: '100', offset: String(offset) });
      const page = await restCall(baseUrl, 'GET', `/api/v1/agent/inbox?${query}`, { key: apiKey });
      // A folder the junk filter never filed into does not exist yet.
      if (page.status === 404) break;
      if (page.status !== 200) throw new Error(`inbox: ${page.status} ${JSON.stringify(page.body)}`);
      const emails = page.body.emails as { subject: string }[];
      subjects.push(...emails.map((email) => email.subject));
      if (emails.length < 100) break;
    }
  }
  return subjects;
};

const agentsOn = async (cluster: Cluster, count: number) => {
  const agents: { email: string; apiKey: string }[] = [];
  for (let i = 0; i < count; i += 1) {
    const node = cluster.nodes[i % cluster.nodes.length];
    const registered = await restCall(node.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: `cluster.inbound${i}` } });
    agents.push(registered.body as { email: string; apiKey: string });
  }
  return agents;
};

const waitForEmptyQueue = async (dataDir: string, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (queuedIn(dataDir) > 0) {
    if (Date.now() > deadline) throw new Error(`${queuedIn(dataDir)} messages still queued`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

const counted = (subjects: string[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const subject of subjects) counts.set(subject, (counts.get(subject) ?? 0) + 1);
  return counts;
};

t.test('three nodes take a burst into one queue and drain it together: every message stored once', async (t) => {
  const cluster = await startCluster(t, { nodes: 3, env: burstEnv });
  const agents = await agentsOn(cluster, 2);
  const subjects: string[] = [];
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < 90; i += 1) {
    const subject = `burst ${i}`;
    subjects.push(subject);
    // Ten connections at a time over the three MXs.
    sends.push(smtpSend(cluster.nodes[i % 3].smtpPort, { from: 'sender@example.com', to: agents[i % 2].email, subject, text: `body ${i}` }));
    if (sends.length === 10) await Promise.all(sends.splice(0));
  }
  await Promise.all(sends);
  await waitForEmptyQueue(cluster.dataDir);
  const stored = [...(await storedSubjects(cluster.nodes[0].baseUrl, agents[0].apiKey)), ...(await storedSubjects(cluster.nodes[1].baseUrl, agents[1].apiKey))];
  const counts = counted(stored);
  t.equal(stored.length, 90, 'ninety copies');
  t.same(
    [...counts.entries()].filter(([, n]) => n > 1),
    [],
    'no message stored twice',
  );
  t.same([...counts.keys()].sort(), [...subjects].sort(), 'every message stored');
});

t.test('a node killed while storing queued mail: its claims wait for their lease, then the others store it, once', async (t) => {
  // node-3 asks a blocklist through a DNS server that never answers: it holds its claims in the junk screen.
  const silentDns = createSocket('udp4');
  silentDns.bind(0, '127.0.0.1');
  await once(silentDns, 'listening');
  t.teardown(() => silentDns.close());
  const slowScreen = {
    junk: { blocklists: ['bl.test'], timeoutMs: 30_000 },
    dns: { servers: [`127.0.0.1:${silentDns.address().port}`], timeoutMs: 30_000, tries: 1 },
  };
  const cluster = await startCluster(t, { nodes: 3, env: burstEnv, config: (nodeId) => (nodeId === 'node-3' ? slowScreen : {}) });
  const agents = await agentsOn(cluster, 1);
  const subjects = Array.from({ length: 12 }, (_, i) => `queued ${i}`);
  for (const subject of subjects) await smtpSend(cluster.nodes[2].smtpPort, { from: 'sender@example.com', to: agents[0].email, subject, text: subject });
  const heldBy = () => claimsIn(cluster.dataDir).filter((claim) => claim.claimedBy === 'node-3');
  for (let tries = 0; heldBy().length === 0 && tries < 100; tries += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  const held = heldBy();
  t.ok(held.length > 0, `node-3 holds ${held.length} queued messages`);
  await cluster.nodes[2].kill('SIGKILL');

  await waitForEmptyQueue(cluster.dataDir, LEASE_MS * 10);
  t.ok(Date.now() >= Math.max(...held.map((claim) => claim.leaseUntil ?? 0)), 'its messages were stored only after its lease ran out');
  const counts = counted(await storedSubjects(cluster.nodes[0].baseUrl, agents[0].apiKey));
  t.same(
    [...counts.entries()].filter(([, n]) => n > 1),
    [],
    'no message stored twice',
  );
  t.same([...counts.keys()].sort(), [...subjects].sort(), 'every accepted message is stored');
});
