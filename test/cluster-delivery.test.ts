// Several `serve` processes on one data folder share the delivery queue (docs/design.md,
// "Several processes on one store"): each recipient is handed to the next server once, and the
// claims of a node killed mid-handoff are finished by another once their lease runs out.
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { type Cluster, type ClusterNode, startCluster } from './helpers/cluster.js';
import { restCall } from './helpers/process.js';
import { startSink } from './helpers/sink.js';

// Real processes on a loaded 2-core machine.
t.setTimeout(120_000);

const LEASE_MS = 3000;

const sendingConfig = (relayPort: number) => ({
  outbound: { relay: `smtp://127.0.0.1:${relayPort}`, timeoutMs: 60_000, concurrency: 2 },
  limits: {
    sendRequestsPerMinute: 10_000,
    sendingStates: {
      probation: { recipientsPerDay: 10_000, recipientsPerMinute: 10_000 },
      standard: { recipientsPerDay: 10_000, recipientsPerMinute: 10_000 },
      reviewed: { recipientsPerDay: 10_000, recipientsPerMinute: 10_000 },
    },
  },
});

/** An agent registered through the first node, with credits granted by the operator's CLI. */
const fundedAgent = async (t: Test, cluster: Cluster, credits: number) => {
  const registered = await restCall(cluster.nodes[0].baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'cluster.sender' } });
  const { email, apiKey } = registered.body as { email: string; apiKey: string };
  const granted = await cluster.cli('credits', 'add', email, String(credits));
  t.equal(granted.code, 0, granted.stderr);
  return { email, apiKey };
};

const send = async (node: ClusterNode, apiKey: string, to: string[], subject: string): Promise<string> => {
  const response = await restCall(node.baseUrl, 'POST', '/api/v1/agent/send', { key: apiKey, body: { to, subject, text: `body of ${subject}` } });
  if (response.status !== 200) throw new Error(`send failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.id as string;
};

const statuses = async (node: ClusterNode, apiKey: string, ids: string[]): Promise<string[]> => {
  const all: string[] = [];
  for (const id of ids) {
    const response = await restCall(node.baseUrl, 'GET', `/api/v1/agent/outbound/${id}`, { key: apiKey });
    for (const recipient of response.body.recipients as { status: string }[]) all.push(recipient.status);
  }
  return all;
};

const waitUntil = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** The recipients' claims as the store has them (read-only, beside the running nodes). */
interface ClaimRow {
  address: string;
  claimedBy: string | null;
  leaseUntil: number | null;
  dataSent: number;
}

const claimsIn = (dataDir: string): ClaimRow[] => {
  const db = new Database(join(dataDir, 'agentpost.db'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return db
      .prepare(
        `SELECT address, claimed_by AS claimedBy, lease_until AS leaseUntil, data_sent_at IS NOT NULL AS dataSent
         FROM submission_recipients WHERE claimed_at IS NOT NULL ORDER BY id`,
      )
      .all() as ClaimRow[];
  } finally {
    db.close();
  }
};

/** A next server that accepts connections and never says a word: a handoff to it waits in its greeting, claimed. */
const startSilentServer = async (t: Test) => {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, connections: () => sockets.length };
};

t.test('two nodes, sends through both: every recipient is handed to the sink exactly once', async (t) => {
  const sink = await startSink(t);
  const cluster = await startCluster(t, { nodes: 2, config: sendingConfig(sink.port), env: { AGENTPOST_CLUSTER_LEASE_MS: String(LEASE_MS) } });
  const agent = await fundedAgent(t, cluster, 200);
  const ids: string[] = [];
  const expected: string[] = [];
  const sends: Promise<string>[] = [];
  for (let i = 0; i < 60; i += 1) {
    const to = [`r${i}a@remote.test`, `r${i}b@remote.test`];
    expected.push(...to);
    // Both nodes take sends at once: each kicks its own delivery queue, and both look for work.
    sends.push(send(cluster.nodes[i % 2], agent.apiKey, to, `message ${i}`));
  }
  ids.push(...(await Promise.all(sends)));
  await waitUntil('every recipient is delivered', async () => (await statuses(cluster.nodes[1], agent.apiKey, ids)).every((status) => status === 'delivered'));
  // A little longer: a second handoff of anything would show now.
  await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
  const handed = sink.messages.flatMap((message) => message.to).sort();
  t.same(handed, [...expected].sort(), 'each of the 120 recipients reached the sink once');
  t.equal(new Set(handed).size, handed.length, 'no recipient twice');
  t.same(claimsIn(cluster.dataDir), [], 'no claim is left');
});

t.test('a node killed mid-handoff: its claims wait for their lease, then the other node delivers them, once', async (t) => {
  const sink = await startSink(t);
  const silent = await startSilentServer(t);
  // node-2's next server never answers, so its handoffs hang with their recipients claimed.
  const cluster = await startCluster(t, {
    nodes: 2,
    config: (nodeId) => sendingConfig(nodeId === 'node-2' ? silent.port : sink.port),
    env: { AGENTPOST_CLUSTER_LEASE_MS: String(LEASE_MS) },
  });
  const [first, second] = cluster.nodes;
  const agent = await fundedAgent(t, cluster, 10);
  // Sent through node-2, which kicks its own queue at once and claims the batch (one per submission through a relay).
  const ids = [await send(second, agent.apiKey, ['held1@remote.test', 'held2@remote.test'], 'held')];
  await waitUntil(
    'node-2 holds both recipients and waits in its handoff',
    () => claimsIn(cluster.dataDir).filter((claim) => claim.claimedBy === 'node-2').length === 2 && silent.connections() >= 1,
  );
  const killed = await second.kill('SIGKILL');
  t.equal(killed.signal, 'SIGKILL');
  const held = claimsIn(cluster.dataDir);
  t.same(
    held.map((claim) => claim.claimedBy),
    ['node-2', 'node-2'],
    'the dead node still holds its claims',
  );

  // node-1 looks every third of a lease; it leaves a claim alone until the lease runs out.
  const leaseEnd = Math.max(...held.map((claim) => claim.leaseUntil ?? 0));
  let seenEarly = 0;
  while (Date.now() < leaseEnd - 300 && seenEarly === 0) {
    seenEarly = sink.messages.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.equal(seenEarly, 0, 'nothing is taken over before the lease runs out');
  await sink.waitFor(1);
  await waitUntil('both are delivered', async () => (await statuses(first, agent.apiKey, ids)).every((status) => status === 'delivered'));
  t.ok(Date.now() >= leaseEnd, 'delivered only after the lease ran out');
  t.same(sink.messages.flatMap((message) => message.to).sort(), ['held1@remote.test', 'held2@remote.test'], 'by node-1, once each');
  t.same(claimsIn(cluster.dataDir), [], 'no claim is left');
});

t.test('a node killed after the next server took the message data: the other settles it as unresolved and never resends it', async (t) => {
  const sink = await startSink(t);
  const cluster = await startCluster(t, { nodes: 2, config: sendingConfig(sink.port), env: { AGENTPOST_CLUSTER_LEASE_MS: String(LEASE_MS) } });
  const [first, second] = cluster.nodes;
  const agent = await fundedAgent(t, cluster, 5);
  // The sink takes the data for hang... and never answers it: node-2 is past DATA, waiting.
  const id = await send(second, agent.apiKey, ['hang1@remote.test'], 'past data');
  await waitUntil('node-2 is past DATA', () => claimsIn(cluster.dataDir).some((claim) => claim.claimedBy === 'node-2' && claim.dataSent === 1));
  await second.kill('SIGKILL');

  await waitUntil('the recipient is settled', async () => (await statuses(first, agent.apiKey, [id]))[0] === 'unresolved');
  await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
  t.same(await statuses(first, agent.apiKey, [id]), ['unresolved'], 'the outcome is unknown, and recorded');
  t.equal(sink.commands.filter((line) => /^RCPT TO:<hang1@remote\.test>/i.test(line)).length, 1, 'handed over once, never again');
  t.same(claimsIn(cluster.dataDir), [], 'no claim is left');
  const balance = await restCall(first.baseUrl, 'GET', '/api/v1/agent/balance', { key: agent.apiKey });
  t.equal(balance.body.credits, 4, 'its credit stays charged');
});
