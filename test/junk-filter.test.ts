// What the junk filter knows besides its statistics, and how it fails: DNS blocklists of the
// connecting address (zones in junk.blocklists, asked through dns.servers: here a real DNS
// server on loopback), the addresses the mailbox has written to, and a filter that fails or
// runs out of time: the message is then delivered to INBOX with a verdict that says so.
import t from 'tap';
import { funded } from './helpers/agents.js';
import { startApp } from './helpers/app.js';
import { SERVER_MODEL_ID } from '../src/store/junk.js';
import { FRIEND, ham, mailTo, modelOf, spam, trainMailbox } from './helpers/junk.js';

/** The client is 127.0.0.1: its name under a zone (RFC 5782 section 2.1). */
const listedName = (zone: string) => `1.0.0.127.${zone}`;

const onlyMessage = async (app: Awaited<ReturnType<typeof startApp>>, key: string, folder: string) => {
  const list = await app.api('GET', `/api/v1/agent/inbox?folder=${folder}`, { key });
  t.equal(list.body.emails.length, 1, `one message in ${folder}`);
  return list.body.emails[0];
};

t.test('a listing in a configured blocklist files the message in Junk; a list that fails to answer counts nothing', async (t) => {
  const app = await startApp(t, { junk: { blocklists: ['bl.test', 'broken.test'] } });
  app.dns?.set(listedName('bl.test'), { A: ['127.0.0.2'] });
  app.dns?.set(listedName('broken.test'), { A: ['127.255.255.254'] });
  const agent = await app.register();
  await mailTo(app, agent.email, ham(1));
  const filed = await onlyMessage(app, agent.apiKey, 'Junk');
  t.match(filed.junkVerdict, {
    junk: true,
    score: 3,
    reasons: [
      { rule: 'statistics', points: 0 },
      { rule: 'blocklist', points: 3, detail: "the sending server's address is listed in bl.test" },
      { rule: 'blocklist', points: 0, detail: "broken.test did not answer for the sending server's address" },
    ],
  });
  t.ok(app.dns?.queries.includes(`A ${listedName('bl.test')}`), 'asked through dns.servers');
});

t.test('not listed: no blocklist reason; blocklists are off by default and ask nothing', async (t) => {
  const app = await startApp(t, { junk: { blocklists: ['bl.test'] } });
  const agent = await app.register();
  await mailTo(app, agent.email, ham(1));
  const kept = await onlyMessage(app, agent.apiKey, 'INBOX');
  t.same(
    kept.junkVerdict.reasons.map((reason: { rule: string }) => reason.rule),
    ['statistics'],
  );
  const plain = await startApp(t);
  const other = await plain.register();
  await mailTo(plain, other.email, ham(1));
  t.notOk(
    plain.dns?.queries.some((query) => query.includes('1.0.0.127')),
    'no blocklist lookup without zones',
  );
});

t.test('a blocklist that never answers: the filter runs out of time and the message goes to INBOX, saying so', async (t) => {
  const app = await startApp(t, { junk: { blocklists: ['slow.test'], timeoutMs: 300 } });
  app.dns?.silence(listedName('slow.test'));
  const agent = await app.register();
  await mailTo(app, agent.email, spam(1));
  const kept = await onlyMessage(app, agent.apiKey, 'INBOX');
  t.same(kept.junkVerdict, { junk: false, score: 0, threshold: 3, reasons: [], failed: 'the blocklist lookups took longer than 300 ms' });
  t.equal(kept.isJunk, false);
});

t.test('a filter that fails delivers to INBOX with a verdict that says why', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  // A real fault: the models' table is gone from under the filter.
  app.app.store.db.exec('ALTER TABLE junk_models RENAME TO junk_models_gone');
  await mailTo(app, agent.email, spam(1));
  const kept = await onlyMessage(app, agent.apiKey, 'INBOX');
  t.match(kept.junkVerdict, { junk: false, score: 0, reasons: [], failed: /^the junk filter failed: .*junk_models/ });
});

t.test('a sender the mailbox has written to counts toward not junk', async (t) => {
  const app = await startApp(t);
  const agent = await funded(app, 5);
  const sent = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: FRIEND, subject: 'hello', text: 'hi' } });
  t.equal(sent.status, 200);
  await mailTo(app, agent.email, ham(1));
  const kept = await onlyMessage(app, agent.apiKey, 'INBOX');
  t.match(kept.junkVerdict.reasons, [
    { rule: 'statistics' },
    { rule: 'correspondent', points: -2, detail: `this mailbox has written to ${FRIEND} (unauthenticated sender)` },
  ]);
  t.equal(kept.junkVerdict.score, -2);
});

t.test('junk.enabled false: every message goes to INBOX without a verdict; judging still trains', async (t) => {
  const app = await startApp(t, { junk: { enabled: false } });
  const agent = await app.register();
  await mailTo(app, agent.email, spam(1));
  const kept = await onlyMessage(app, agent.apiKey, 'INBOX');
  t.notOk('junkVerdict' in kept);
  t.equal(kept.isJunk, false);
  const judged = await app.api('POST', `/api/v1/agent/email/${kept.id}/junk`, { key: agent.apiKey, body: { junk: true } });
  t.match(judged.body, { folder: 'Junk', trained: true });
});

t.test("the server-wide model: trained only by the operator's mailboxes, it judges for a mailbox with too few judgments of its own", async (t) => {
  // The trainers are named by address, and a mailbox address is random: registered first, then the server restarted with it.
  const dataDir = t.testdir({});
  const before = await startApp(t, { dataDir });
  const operator = await before.register('ops');
  const tenant = await before.register('tenant');
  const newcomer = await before.register('newcomer');
  await before.app.stop();
  const app = await startApp(t, { dataDir, junk: { minJudgments: 3, serverModelTrainers: [operator.email.toUpperCase()] } });
  await trainMailbox(app, tenant, 3);
  t.same(await app.app.store.junk.model(SERVER_MODEL_ID), { id: SERVER_MODEL_ID, ham: 0, junk: 0 }, "a tenant's judgments never reach the server-wide model");
  await trainMailbox(app, operator, 3);
  t.same(
    await app.app.store.junk.model(SERVER_MODEL_ID),
    { id: SERVER_MODEL_ID, ham: 3, junk: 3 },
    "the operator's judgments train it, besides the operator's own model",
  );
  t.same(await modelOf(app, operator.email), { ham: 3, junk: 3 });

  await mailTo(app, newcomer.email, spam(7));
  const filed = await onlyMessage(app, newcomer.apiKey, 'Junk');
  t.match(filed.junkVerdict.reasons, [{ rule: 'statistics', detail: /^the server-wide model \(3 junk and 3 not-junk judgments\) rates it/ }]);
  t.ok(filed.junkVerdict.reasons[0].points > 3);
  t.notMatch(JSON.stringify(filed.junkVerdict), /pills|viagra|colleague/i, 'no word of the mail that trained it');

  // The operator changes its mind: the server-wide model takes the training back too.
  const judged = await app.api('GET', '/api/v1/agent/inbox?folder=Junk', { key: operator.apiKey });
  const first = judged.body.emails.at(-1);
  await app.api('POST', `/api/v1/agent/email/${first.id}/junk`, { key: operator.apiKey, body: { junk: false, folder: 'Junk' } });
  t.same(await app.app.store.junk.model(SERVER_MODEL_ID), { id: SERVER_MODEL_ID, ham: 4, junk: 2 });
});
