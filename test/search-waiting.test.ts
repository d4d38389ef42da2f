// Several processes on one store and the full-text index (migration 88,
// src/services/mail/search-index.ts): each node indexes what it stored, from memory; a node's row
// of search_waiting covers what waits there. Mail a node stored and never indexed is not lost
// when another node has moved the index's mark past it: after the node's lease runs out another
// node takes its row over, and a node that starts again takes its own over at once. Two apps on
// one data folder in this process stand for two nodes; their search queues run only when told.
import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp, type TestApp } from './helpers/app.js';
import { deliverDirect, plainRaw } from './helpers/mail.js';

const LEASE_MS = 60_000;

const node = (t: Parameters<typeof startApp>[0], dataDir: string, nodeId: string, clock: ManualClock) =>
  startApp(t, { dataDir, cluster: { nodeId, leaseMs: LEASE_MS } }, { clock, manual: ['search'] });

const found = async (app: TestApp, key: string, word: string): Promise<number> =>
  (await app.api('GET', `/api/v1/agent/inbox?search=${word}`, { key })).body.totalMessages as number;

const waitingRows = (app: TestApp) => app.app.store.db.prepare('SELECT node_id AS nodeId FROM search_waiting ORDER BY node_id').all() as { nodeId: string }[];

/** Two nodes on one data folder and one clock, and an agent registered through the first. */
const twoNodes = async (t: Parameters<typeof startApp>[0], agentId: string) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const dataDir = t.testdir({});
  const a = await node(t, dataDir, 'node-a', clock);
  const b = await node(t, dataDir, 'node-b', clock);
  return { clock, dataDir, a, b, agent: await a.register(agentId) };
};

t.test("a dead node's unindexed mail is indexed by another once its lease runs out", async (t) => {
  const { clock, a, b, agent } = await twoNodes(t, 'searcher');
  await deliverDirect(a.app, [agent.email], plainRaw('first', 'alphaword in the first message'));
  t.same(waitingRows(a), [{ nodeId: 'node-a' }], "node-a's row covers the text waiting in its memory");
  await deliverDirect(b.app, [agent.email], plainRaw('second', 'betaword in the second message'));
  await b.app.queues.search.runOnce();
  t.equal(await found(b, agent.apiKey, 'betaword'), 1, 'node-b indexed its own mail (the mark is past the first message now)');
  t.equal(await found(b, agent.apiKey, 'alphaword'), 0, "node-a's text is still in node-a's memory");
  t.same(waitingRows(b), [{ nodeId: 'node-a' }], 'node-b has nothing waiting: its row went');

  clock.advance(LEASE_MS - 1_000);
  await b.app.queues.search.runOnce();
  t.equal(await found(b, agent.apiKey, 'alphaword'), 0, 'nothing is taken over while the lease holds');
  clock.advance(2_000);
  await b.app.queues.search.runOnce();
  t.equal(await found(b, agent.apiKey, 'alphaword'), 1, "past the lease node-b indexes node-a's mail from its raw bytes");
  t.same(waitingRows(b), [], 'the row is taken over');
  t.equal(await found(b, agent.apiKey, 'betaword'), 1, 'and nothing else changed');
});

t.test('a node that starts again takes its own waiting mail over at once', async (t) => {
  const { clock, dataDir, a, b, agent } = await twoNodes(t, 'restarter');
  await deliverDirect(a.app, [agent.email], plainRaw('kept', 'gammaword stored and never indexed'));
  await deliverDirect(b.app, [agent.email], plainRaw('other', 'deltaword from the other node'));
  await b.app.queues.search.runOnce();
  // A stop hands nothing over: what waited is what a crash would have left.
  await a.app.stop();
  const again = await node(t, dataDir, 'node-a', clock);
  t.equal(await found(again, agent.apiKey, 'gammaword'), 1, 'indexed at start, within the lease');
  t.same(waitingRows(again), [], 'its row is gone');
});

t.test('a node with nothing waiting has no row; its lease moves on with each storing commit', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await node(t, t.testdir({}), 'solo', clock);
  const agent = await app.register('solo');
  t.same(waitingRows(app), []);
  await deliverDirect(app.app, [agent.email], plainRaw('one', 'epsilonword'));
  const leaseOf = () => app.app.store.db.prepare('SELECT lease_until FROM search_waiting').pluck().get() as number;
  const firstLease = leaseOf();
  clock.advance(10_000);
  await deliverDirect(app.app, [agent.email], plainRaw('two', 'zetaword'));
  t.equal(leaseOf(), firstLease + 10_000, 'the next storing commit moved the lease');
  await app.app.queues.search.runOnce();
  t.same(waitingRows(app), [], 'all indexed: no row');
  t.equal(await found(app, agent.apiKey, 'zetaword'), 1);
});
