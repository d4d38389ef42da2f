// The junk filter's parts below the service: the statistics (Robinson's probability, Fisher's
// chi-square combining), the in-memory feature table, the models held in memory against the
// same counts read from SQLite, and the features a stored copy gives against the message as
// it arrived (the training reads stored copies).
import { join } from 'node:path';
import t from 'tap';
import { authenticationResultsField } from '../src/mime/authentication-results.js';
import { featureHash } from '../src/mime/junk-tokens.js';
import { withoutOwnTrace } from '../src/mime/own-trace.js';
import { parseMessage } from '../src/mime/parse.js';
import { createLogger } from '../src/core/logger.js';
import { FeatureTable } from '../src/services/junk/feature-table.js';
import { JunkModels } from '../src/services/junk/models.js';
import { chi2Q, combine, featureProbability } from '../src/services/junk/statistics.js';
import { receivedHeader } from '../src/services/mail/trace.js';
import { SERVER_MODEL_ID } from '../src/store/junk.js';
import { Store } from '../src/store/index.js';
import { simpleMessage } from './helpers/mail.js';

/** The series summed directly, as SpamBayes does (fine while nothing underflows). */
const naiveChi2Q = (x2: number, degrees: number): number => {
  const m = x2 / 2;
  let term = Math.exp(-m);
  let sum = term;
  for (let i = 1; i < degrees / 2; i++) {
    term *= m / i;
    sum += term;
  }
  return Math.min(sum, 1);
};

t.test('chi2Q agrees with the direct series, and stays right where the direct series underflows', async (t) => {
  for (const [x2, degrees] of [
    [1, 2],
    [10, 10],
    [30, 40],
    [200, 150],
  ])
    t.ok(Math.abs(chi2Q(x2, degrees) - naiveChi2Q(x2, degrees)) < 1e-9, `x2 ${x2}, ${degrees} degrees`);
  t.equal(naiveChi2Q(1600, 2000), 0, 'the direct series underflows (e^-800)');
  t.ok(chi2Q(1600, 2000) > 0.99, 'x2 well under its degrees of freedom: almost surely exceeded');
  t.equal(chi2Q(0, 10), 1);
});

t.test('combine: no clues is unsure; junk-like clues near 1, ham-like near 0, both at once unsure', async (t) => {
  t.equal(combine([]), 0.5);
  t.ok(combine([0.99, 0.98, 0.95, 0.9]) > 0.99);
  t.ok(combine([0.01, 0.02, 0.05]) < 0.01);
  t.ok(Math.abs(combine([0.99, 0.99, 0.01, 0.01]) - 0.5) < 0.01);
});

t.test('featureProbability: each class weighed by its size, rare features pulled toward 0.5', async (t) => {
  const size = { ham: 100, junk: 10 };
  t.equal(featureProbability(10, 1, size), (0.45 * 0.5 + 11 * 0.5) / 11.45, 'one in ten of each class: even');
  t.ok(featureProbability(0, 1, size) < featureProbability(0, 5, size), 'seen more often, surer');
  t.equal(featureProbability(0, 0, size), 0.5);
  t.equal(featureProbability(3, 0, { ham: 10, junk: 0 }), (0.45 * 0.5) / 3.45, 'no junk judged yet: only ham evidence');
});

t.test('FeatureTable: counts by feature through growth; takes back to zero, never below', async (t) => {
  const table = new FeatureTable();
  const counts: [number, number] = [0, 0];
  for (let i = 0; i < 20_000; i++) table.add(featureHash(`f${i}`), i % 3, 1);
  t.equal(table.size, 20_000);
  t.ok(table.read(featureHash('f4'), counts));
  t.same(counts, [1, 1]);
  table.add(featureHash('f4'), -5, -1);
  t.ok(table.read(featureHash('f4'), counts), 'a slot is kept at zero');
  t.same(counts, [0, 0]);
  t.notOk(table.read(featureHash('absent'), counts));
  table.add(0, 2, 0);
  t.ok(table.read(0, counts), 'the hash 0 is a feature like any other');
  t.same(counts, [2, 0]);
});

t.test('JunkModels: the clues from memory are those from SQLite; a training after its commit reaches the table once', async (t) => {
  const store = Store.open(join(t.testdir({}), 'agentpost.db'));
  t.teardown(() => store.close());
  const models = new JunkModels(
    store,
    createLogger('silent', () => {}),
    1 << 20,
  );
  const junkish = Int32Array.from(['cheap', 'pills', 'offer'].map(featureHash));
  const hammy = Int32Array.from(['meeting', 'report', 'offer'].map(featureHash));
  await store.transaction(async () => {
    for (let i = 0; i < 5; i++) await store.junk.count(SERVER_MODEL_ID, junkish, true, 1);
    for (let i = 0; i < 5; i++) await store.junk.count(SERVER_MODEL_ID, hammy, false, 1);
  });
  const probe = Int32Array.from(['cheap', 'meeting', 'offer', 'unknown'].map(featureHash));
  const model = await store.junk.model(SERVER_MODEL_ID);
  const fromSql = await models.clues(model, probe);
  t.notOk(models.isHeld(SERVER_MODEL_ID), 'read from SQLite while it loads');
  await new Promise((resolve) => setImmediate(resolve));
  t.ok(models.isHeld(SERVER_MODEL_ID), 'loaded after a turn of the event loop');
  t.ok(models.heldBytes() > 0);
  t.same(await models.clues(model, probe), fromSql, 'the same clues from memory');
  t.equal(fromSql.length, 2, '"offer" is in both classes alike: no clue; "unknown" was never seen');

  models.beginTraining(SERVER_MODEL_ID);
  await store.transaction(() => store.junk.count(SERVER_MODEL_ID, junkish, true, -1));
  models.endTraining(SERVER_MODEL_ID, [{ features: junkish, asJunk: true, delta: -1 }]);
  const after = await store.junk.model(SERVER_MODEL_ID);
  const reloaded = new JunkModels(
    store,
    createLogger('silent', () => {}),
    1 << 20,
  );
  t.same(await models.clues(after, probe), await reloaded.clues(after, probe), 'memory and database agree after the training');
});

t.test('a stored copy read for training has the features the message had when it arrived', async (t) => {
  const arrived = simpleMessage({
    subject: 'Quarterly report',
    body: 'The report draft is ready for review. See https://docs.partner.example/q3 before Monday.',
    headers: ['Received: from relay.partner.example (relay.partner.example [192.0.2.7]) by mx.partner.example; Mon, 2 Mar 2026 10:00:00 +0000'],
  });
  const trace = receivedHeader(
    { id: 'abc', remoteAddress: '198.51.100.4', heloName: 'mx.partner.example', protocol: 'ESMTP', tls: null },
    'mx.agents.test',
    'agent@agents.test',
    new Date('2026-03-02T10:00:01Z'),
  );
  const stored = Buffer.concat([
    Buffer.from(trace),
    Buffer.from(authenticationResultsField('mx.agents.test', ['spf=pass smtp.mailfrom=partner.example'])),
    arrived,
  ]);
  const original = await parseMessage(arrived, { junkFeatures: true });
  const fromStore = await parseMessage(withoutOwnTrace(stored, 'MX.agents.test'), { junkFeatures: true });
  t.ok(original.junkFeatures && original.junkFeatures.length > 20);
  t.same(fromStore.junkFeatures, original.junkFeatures);
  t.not((await parseMessage(stored, { junkFeatures: true })).junkFeatures?.join(), original.junkFeatures?.join(), 'our own Received field would have counted');
  t.equal(withoutOwnTrace(arrived, 'mx.agents.test'), arrived, "another server's Received field stays");
});
