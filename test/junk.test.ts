// The junk filter end to end over SMTP, REST, MCP, webhooks and the event stream: a new
// mailbox's verdicts, training by POST /api/v1/agent/email/{id}/junk, junk filed in Junk
// (not INBOX), the verdict in the list, the read and MCP, `junk: true` on events (and the
// webhook setting that skips them), the mail:junk permission. Every REST answer is checked
// against the OpenAPI document by the helper.
import t from 'tap';
import { opened, openStream } from './helpers/event-stream.js';
import { FRIEND, ham, judge, mailTo, modelOf, SPAMMER, spam, trainMailbox } from './helpers/junk.js';
import { funded } from './helpers/agents.js';
import { issueAccessKey } from './helpers/keys.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { webhookFixture } from './helpers/webhooks.js';

const FEW = { junk: { minJudgments: 3 } };

t.test('a new mailbox: every message in INBOX with a verdict whose statistics wait for judgments', async (t) => {
  const app = await webhookFixture(t, { config: FEW });
  await mailTo(app, app.agent.email, spam(1));
  const list = await app.api('GET', '/api/v1/agent/inbox', { key: app.agent.apiKey });
  const [listed] = list.body.emails;
  t.equal(listed.isJunk, false);
  t.match(listed.junkVerdict, { junk: false, score: 0, threshold: 3, reasons: [{ rule: 'statistics', points: 0, detail: /needs 3 of each/ }] });
  t.notOk('failed' in listed.junkVerdict);
  const read = await app.api('GET', `/api/v1/agent/email/${listed.id}`, { key: app.agent.apiKey });
  t.same(read.body.junkVerdict, listed.junkVerdict, 'the read shows the same verdict');
  t.equal(read.body.isJunk, false);
  const [event] = await app.receiver.waitFor('message.received');
  t.same(event.event.data, { folder: 'INBOX', uidValidity: list.body.uidValidity, uid: listed.id, junk: false });
});

t.test('trained by its judgments, the mailbox files junk in Junk; REST, MCP, webhooks and the stream say so', async (t) => {
  const app = await webhookFixture(t, { config: FEW });
  const key = app.agent.apiKey;
  await trainMailbox(app, app.agent, 3);
  t.same(await modelOf(app, app.agent.email), { ham: 3, junk: 3 }, 'each judgment trained the model once');
  const stream = openStream(t, app.baseUrl, key);
  await opened(stream);

  await mailTo(app, app.agent.email, spam(4));
  await mailTo(app, app.agent.email, ham(4));
  const junk = await app.api('GET', '/api/v1/agent/inbox?folder=Junk', { key });
  const filed = junk.body.emails.find((email: { subject: string }) => email.subject === spam(4).subject);
  t.ok(filed, 'the new junk is in Junk');
  t.equal(filed.isJunk, true);
  t.equal(filed.junkVerdict.junk, true);
  t.ok(filed.junkVerdict.score >= filed.junkVerdict.threshold);
  t.match(filed.junkVerdict.reasons, [
    { rule: 'statistics', detail: /this mailbox's model \(3 junk and 3 not-junk judgments\)/ },
    { rule: 'sender-history', points: 2, detail: new RegExp(`judged 3 earlier message\\(s\\) from ${SPAMMER} junk`) },
  ]);
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key });
  t.notOk(
    inbox.body.emails.some((email: { subject: string }) => email.subject === spam(4).subject),
    'not in INBOX',
  );
  const kept = inbox.body.emails.find((email: { subject: string }) => email.subject === ham(4).subject);
  t.match(kept, { isJunk: false, junkVerdict: { junk: false, reasons: [{ rule: 'statistics' }, { rule: 'sender-history', points: -2 }] } });
  t.ok(kept.junkVerdict.score < 0, 'the statistics and the sender both say ham');

  // Events: the junk from Junk with junk true, the ham from INBOX.
  const events = await app.receiver.waitFor('message.received', 8);
  const junkEvent = events.find((event) => event.event.data.folder === 'Junk');
  t.same(junkEvent?.event.data, { folder: 'Junk', uidValidity: junk.body.uidValidity, uid: filed.id, junk: true });
  const streamed = await stream.waitForCount(2);
  t.same(
    streamed.map((event) => [event.data.data.folder, event.data.data.junk]),
    [
      ['Junk', true],
      ['INBOX', false],
    ],
  );

  // MCP shows the same verdict and judges the same way.
  const client = await mcpClient(t, app.baseUrl, { key });
  const listedOverMcp = await callTool(client, 'check_inbox', { folder: 'Junk' });
  t.same(
    listedOverMcp.body.emails.find((email: { id: string }) => email.id === filed.id),
    filed,
  );
  const readOverMcp = await callTool(client, 'get_email', { id: filed.id, folder: 'Junk', markAsRead: false });
  t.same(readOverMcp.body.junkVerdict, filed.junkVerdict);
  const notJunk = await callTool(client, 'mark_junk', { id: filed.id, folder: 'Junk', junk: false });
  t.match(notJunk.body, { folder: 'INBOX', junk: false, trained: true, from: { id: filed.id, folder: 'Junk' } });
  t.same(await modelOf(app, app.agent.email), { ham: 4, junk: 3 }, 'a message the filter filed but nobody judged was not trained; now it is, as ham');
  const moved = await app.api('GET', `/api/v1/agent/email/${notJunk.body.id}?markAsRead=false`, { key });
  t.match(moved.body, { isJunk: false, keywords: ['$NotJunk'], junkVerdict: { junk: true } }, 'the judgment wins over the verdict');
});

t.test('a judgment changed takes the earlier training back; judging again is no change', async (t) => {
  const app = await webhookFixture(t, { config: FEW });
  const key = app.agent.apiKey;
  await mailTo(app, app.agent.email, ham(1));
  const first = await judge(app, key, ham(1).subject, true);
  t.match(first.body, { folder: 'Junk', junk: true, trained: true, from: { folder: 'INBOX' } });
  t.same(await modelOf(app, app.agent.email), { ham: 0, junk: 1 });
  const again = await app.api('POST', `/api/v1/agent/email/${first.body.id}/junk`, { key, body: { junk: true, folder: 'Junk' } });
  t.match(again.body, { id: first.body.id, folder: 'Junk', junk: true, trained: true }, 'already in Junk: it stays');
  t.same(await modelOf(app, app.agent.email), { ham: 0, junk: 1 }, 'counted once');
  const back = await app.api('POST', `/api/v1/agent/email/${first.body.id}/junk`, { key, body: { junk: false, folder: 'Junk' } });
  t.match(back.body, { folder: 'INBOX', junk: false, trained: true });
  t.same(await modelOf(app, app.agent.email), { ham: 1, junk: 0 }, 'the junk training taken back, the ham one added');
  const stays = await app.api('POST', `/api/v1/agent/email/${back.body.id}/junk`, { key, body: { junk: false } });
  t.match(stays.body, { id: back.body.id, folder: 'INBOX', junk: false }, 'not junk outside Junk: it stays where it is');
  const sender = await app.app.store.junk.sender((await app.app.store.accounts.mailboxByAddress(app.agent.email))?.id ?? '', FRIEND);
  t.same(sender, { ham: 1, junk: 0 }, "the sender's history follows the judgment");
});

t.test('who may judge: the full key, a limited key with mail:read and mail:junk; 404, 409 and 400 as for a move', async (t) => {
  const app = await webhookFixture(t, { config: FEW, verified: false });
  const key = app.agent.apiKey;
  await mailTo(app, app.agent.email, spam(1));
  const reader = await issueAccessKey(app, key, { name: 'reader', kind: 'mail', permissions: ['mail:read'] });
  const forbidden = await app.api('POST', '/api/v1/agent/email/1/junk', { key: reader.apiKey, body: { junk: true } });
  t.equal(forbidden.status, 403);
  t.match(forbidden.body.error, /mail:junk/);
  const refused = await app.api('POST', '/api/v1/agent/access-keys', { key, body: { name: 'judge only', kind: 'mail', permissions: ['mail:junk'] } });
  t.equal(refused.status, 400, 'mail:junk needs mail:read on the same key');
  const judgeKey = await issueAccessKey(app, key, { name: 'judge', kind: 'mail', permissions: ['mail:read', 'mail:junk'] });
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key });
  t.equal((await app.api('POST', '/api/v1/agent/email/1/junk', { key: judgeKey.apiKey, body: { junk: true, uidValidity: '1' } })).status, 409);
  const judged = await app.api('POST', '/api/v1/agent/email/1/junk', { key: judgeKey.apiKey, body: { junk: true, uidValidity: inbox.body.uidValidity } });
  t.match(judged.body, { folder: 'Junk', junk: true, trained: true });
  t.equal((await app.api('POST', '/api/v1/agent/email/1/junk', { key, body: { junk: true } })).status, 404, 'gone from INBOX');
  t.equal((await app.api('POST', '/api/v1/agent/email/1/junk', { key, body: { junk: 'yes' } })).status, 400);
  t.equal((await app.api('POST', '/api/v1/agent/email/1/junk', { key, body: {} })).status, 400);
  t.equal((await app.api('POST', '/api/v1/agent/email/1/junk', { body: { junk: true } })).status, 401);
});

t.test('a webhook with skipJunk gets no event for mail filed in Junk; the event stream still says junk: true', async (t) => {
  const app = await webhookFixture(t, { config: FEW, verified: false });
  const key = app.agent.apiKey;
  const created = await app.api('POST', '/api/v1/agent/webhooks', { key, body: { url: app.receiver.url, skipJunk: true } });
  t.equal(created.body.skipJunk, true);
  app.receiver.secret = created.body.signingSecret;
  await app.api('POST', `/api/v1/agent/webhooks/${created.body.id}/verify`, { key });
  await trainMailbox(app, app.agent, 3);
  const stream = openStream(t, app.baseUrl, key);
  await opened(stream);
  await mailTo(app, app.agent.email, spam(9));
  await mailTo(app, app.agent.email, ham(9));
  const streamed = await stream.waitForCount(2);
  t.same(
    streamed.map((event) => event.data.data.junk),
    [true, false],
  );
  const delivered = await app.receiver.waitFor('message.received', 7);
  t.notOk(
    delivered.some((event) => event.event.data.junk === true),
    'no junk event reached the webhook',
  );
  // The junk event was logged before the ham one: had the endpoint taken it, its history would show it.
  const history = await app.api('GET', '/api/v1/agent/webhooks/deliveries', { key });
  t.equal(
    history.body.deliveries.filter((delivery: { type: string }) => delivery.type === 'message.received').length,
    7,
    'six from training, the ham; not the junk',
  );
  t.same((await app.api('GET', '/api/v1/agent/webhooks', { key })).body.webhooks[0].skipJunk, true);
});

t.test('a send to a mailbox of this service is judged on its way in, as mail from the MX is', async (t) => {
  const app = await webhookFixture(t, { config: FEW });
  const sender = await funded(app, 5);
  const sent = await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: app.agent.email, subject: 'from a neighbour', text: 'hello' } });
  t.equal(sent.status, 200);
  const [listed] = (await app.api('GET', '/api/v1/agent/inbox', { key: app.agent.apiKey })).body.emails;
  t.equal(listed.subject, 'from a neighbour');
  t.match(listed.junkVerdict, { junk: false, threshold: 3, reasons: [{ rule: 'statistics' }] }, 'the same verdict a message from the MX gets');
  t.notOk('failed' in listed.junkVerdict, 'judged, not failed');
});
