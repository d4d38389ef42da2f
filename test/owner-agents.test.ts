// Owners and their agents: claims by key and by code, the read-only views (inbox, message,
// outbound, webhooks, keys), mail:draft keys issued by owners only, revocation with the
// owner's 2FA, the owner's own mailbox (3 recipients a day), and no view of another's agents.
import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { funded } from './helpers/agents.js';
import { startApp } from './helpers/app.js';
import { issueAccessKey, totpFromUrl } from './helpers/keys.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';
import { makeOwner } from './helpers/owners.js';
import { startSink } from './helpers/sink.js';

const DRAFT_KEY = { name: 'drafter', kind: 'mail', permissions: ['mail:draft'] };

t.test('claim with the full key: once per agent, idempotent for its owner, 409 for another', async (t) => {
  const app = await startApp(t);
  const [ada, bob] = [await makeOwner(app), await makeOwner(app)];
  const agent = await app.register('claimed');
  const claimed = await app.api('POST', '/api/user/agents/claim', { key: ada.token, body: { apiKey: agent.apiKey } });
  t.equal(claimed.status, 200);
  t.match(claimed.body, { id: agent.userId, email: agent.email, agentId: 'claimed' });
  t.equal((await app.api('POST', '/api/user/agents/claim', { key: ada.token, body: { apiKey: agent.apiKey } })).status, 200, 'again: a no-op');
  t.equal((await app.api('POST', '/api/user/agents/claim', { key: bob.token, body: { apiKey: agent.apiKey } })).status, 409);
  const listed = await app.api('GET', '/api/user/agents', { key: ada.token });
  t.same(
    listed.body.agents.map((item: { id: string }) => item.id),
    [agent.userId],
  );
  t.same((await app.api('GET', '/api/user/agents', { key: bob.token })).body, { agents: [] });
  t.same((await app.api('GET', '/api/v1/agent/owner', { key: agent.apiKey })).body, { owner: { id: ada.id, email: ada.email } });

  const other = await app.register('other');
  const reader = await issueAccessKey(app, other.apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  for (const apiKey of [reader.apiKey, `svc_${'0'.repeat(64)}`, 'not a key']) {
    const refused = await app.api('POST', '/api/user/agents/claim', { key: bob.token, body: { apiKey } });
    t.equal(refused.status, 400, 'only a working full key claims');
    t.equal(refused.body.code, 'invalid_input');
  }
});

t.test('claim codes: the agent redeems once with its full key; used, expired or limited-key attempts fail', async (t) => {
  const clock = new ManualClock('2026-04-01T09:00:00Z');
  const app = await startApp(t, {}, { clock });
  const owner = await makeOwner(app);
  const agent = await app.register();
  t.same((await app.api('GET', '/api/v1/agent/owner', { key: agent.apiKey })).body, { owner: null });
  const made = await app.api('POST', '/api/user/agents/claim-codes', { key: owner.token });
  t.equal(made.status, 200);
  t.equal(made.body.expiresAt, '2026-04-01T10:00:00.000Z', 'owners.claimCodeMinutes (60)');
  const limited = await issueAccessKey(app, agent.apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  t.equal(
    (await app.api('POST', '/api/v1/agent/owner', { key: limited.apiKey, body: { code: made.body.code } })).status,
    403,
    'a limited key cannot take an owner',
  );
  const redeemed = await app.api('POST', '/api/v1/agent/owner', { key: agent.apiKey, body: { code: made.body.code } });
  t.equal(redeemed.status, 200);
  t.same(redeemed.body, { owner: { id: owner.id, email: owner.email } });
  const second = await app.register();
  t.equal((await app.api('POST', '/api/v1/agent/owner', { key: second.apiKey, body: { code: made.body.code } })).status, 404, 'one use');
  const late = await app.api('POST', '/api/user/agents/claim-codes', { key: owner.token });
  clock.advance(61 * 60 * 1000);
  const fresh = await makeOwner(app);
  t.equal((await app.api('POST', '/api/v1/agent/owner', { key: second.apiKey, body: { code: late.body.code } })).status, 404, 'expired');
  const other = await app.api('POST', '/api/user/agents/claim-codes', { key: fresh.token });
  t.equal((await app.api('POST', '/api/v1/agent/owner', { key: agent.apiKey, body: { code: other.body.code } })).status, 409, 'an owned agent keeps its owner');
  t.equal(
    (await app.api('POST', '/api/v1/agent/owner', { key: second.apiKey, body: { code: other.body.code } })).status,
    200,
    'the refused redemption did not use the code',
  );
  t.equal((await app.api('POST', '/api/v1/agent/owner', { key: agent.apiKey, body: { code: 'claim_nope' } })).status, 400);
});

t.test("the owner's views: inbox and message read-only, outbound with outcomes, webhooks, keys", async (t) => {
  const app = await startApp(t, { outbound: { relay: undefined } });
  const sink = await startSink(t);
  const owner = await makeOwner(app);
  const agent = await funded(app, 10, 'viewed');
  await app.api('POST', '/api/user/agents/claim', { key: owner.token, body: { apiKey: agent.apiKey } });
  await deliverDirect(app.app, [agent.email], simpleMessage({ from: 'friend@example.com', to: agent.email, subject: 'Hello owner', body: 'see this' }));
  const inbox = await app.api('GET', `/api/user/agents/${agent.userId}/inbox`, { key: owner.token });
  t.equal(inbox.status, 200);
  t.same(
    inbox.body.emails.map((item: { subject: string }) => item.subject),
    ['Hello owner'],
  );
  const id = inbox.body.emails[0].id;
  const read = await app.api('GET', `/api/user/agents/${agent.userId}/email/${id}`, { key: owner.token });
  t.equal(read.status, 200);
  t.match(read.body, { subject: 'Hello owner', text: /see this/, isRead: false });
  t.equal((await app.api('GET', `/api/user/agents/${agent.userId}/email/${id}?markAsRead=true`, { key: owner.token })).status, 400, 'no markAsRead for owners');
  const agentView = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.equal(agentView.body.emails[0].isRead, false, "the owner's read left the flag alone");

  app.app.config.outbound.port = sink.port;
  const sent = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'someone@remote.test', subject: 'out', text: 'x' } });
  t.equal(sent.status, 200);
  const outbound = await app.api('GET', `/api/user/agents/${agent.userId}/outbound`, { key: owner.token });
  t.same(
    outbound.body.submissions.map((item: { id: string }) => item.id),
    [sent.body.id],
  );
  const detail = await app.api('GET', `/api/user/agents/${agent.userId}/outbound/${sent.body.id}`, { key: owner.token });
  t.match(detail.body.recipients, [{ email: 'someone@remote.test', status: 'queued' }]);

  const overview = await app.api('GET', `/api/user/agents/${agent.userId}`, { key: owner.token });
  t.equal(overview.status, 200);
  t.equal(overview.body.agent.kind, 'agent');
  t.equal(overview.body.sending.state, 'standard');
  t.equal(overview.body.recipientsByDay.length, 14);
  t.equal(overview.body.recipientsByDay[13].recipients, 1, 'today counts the one charged recipient');
  t.same((await app.api('GET', `/api/user/agents/${agent.userId}/webhooks`, { key: owner.token })).body, { webhooks: [] });
  t.match((await app.api('GET', `/api/user/agents/${agent.userId}/webhooks/deliveries`, { key: owner.token })).body, { deliveries: [] });
});

t.test("mail:draft keys: issued by the owner only, exclusive; revocation needs the owner's own code with 2FA on", async (t) => {
  const clock = new ManualClock('2026-04-01T09:00:00Z');
  const app = await startApp(t, {}, { clock });
  const owner = await makeOwner(app);
  const agent = await app.register();
  await app.api('POST', '/api/user/agents/claim', { key: owner.token, body: { apiKey: agent.apiKey } });
  const byAgent = await app.api('POST', '/api/v1/agent/access-keys', { key: agent.apiKey, body: DRAFT_KEY });
  t.equal(byAgent.status, 403, "the agent's full key cannot issue mail:draft");
  const issued = await app.api('POST', `/api/user/agents/${agent.userId}/access-keys`, { key: owner.token, body: DRAFT_KEY });
  t.equal(issued.status, 201);
  t.match(issued.body, { permissions: ['mail:draft'], kind: 'mail', status: 'active', apiKey: /^svc_access_/ });
  for (const permissions of [['mail:draft', 'mail:read'], ['mail:read'], ['mail:send']]) {
    const mixed = await app.api('POST', `/api/user/agents/${agent.userId}/access-keys`, {
      key: owner.token,
      body: { ...DRAFT_KEY, permissions, dailyRecipientLimit: 1, totalRecipientLimit: 1 },
    });
    t.equal(mixed.status, 400, `owners issue mail:draft alone, not ${permissions.join('+')}`);
  }
  for (const path of ['/api/v1/agent/balance', '/api/v1/agent/inbox', '/api/v1/agent/sending', '/api/v1/agent/outbound']) {
    t.equal((await app.api('GET', path, { key: issued.body.apiKey })).status, 403, `a draft key is refused on ${path}`);
  }
  t.equal((await app.api('POST', '/api/v1/agent/send', { key: issued.body.apiKey, body: { to: 'a@b.test', subject: 's', text: 't' } })).status, 403);
  const listed = await app.api('GET', `/api/user/agents/${agent.userId}/access-keys`, { key: owner.token });
  t.same(
    listed.body.accessKeys.map((key: { id: string }) => key.id),
    [issued.body.id],
  );

  const enrolled = await app.api('POST', '/api/user/2fa', { key: owner.token, body: { action: 'enroll' } });
  const totp = totpFromUrl(enrolled.body.otpauthUrl);
  await app.api('POST', '/api/user/2fa', { key: owner.token, body: { action: 'confirm', factorCode: totp.generate({ timestamp: clock.now().getTime() }) } });
  clock.advance(60_000);
  const path = `/api/user/agents/${agent.userId}/access-keys/${issued.body.id}`;
  t.equal((await app.api('DELETE', path, { key: owner.token })).status, 403, "the owner's code is needed");
  const revoked = await app.api('DELETE', path, { key: owner.token, body: { factorCode: totp.generate({ timestamp: clock.now().getTime() }) } });
  t.equal(revoked.status, 200);
  t.equal(revoked.body.status, 'revoked');
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: issued.body.apiKey })).status, 401, 'a revoked key no longer works');
});

t.test("the owner's own mailbox: read like an agent's, sends 3 recipients a day", async (t) => {
  const app = await startApp(t);
  const owner = await makeOwner(app, 'human@example.com');
  const me = (await app.api('GET', '/api/user/me', { key: owner.token })).body;
  await app.app.services.accounts.addCredits(me.address, 10);
  await app.app.services.sending.setState(me.address, 'standard');
  const friends = [await app.register(), await app.register(), await app.register(), await app.register()];
  const first = await app.api('POST', '/api/user/send', {
    key: owner.token,
    body: { to: friends.slice(0, 2).map((f) => f.email), subject: 'hi', text: 'from a person' },
  });
  t.equal(first.status, 200);
  const third = await app.api('POST', '/api/user/send', { key: owner.token, body: { to: friends[2].email, subject: 'hi', text: 'again' } });
  t.equal(third.status, 200);
  const fourth = await app.api('POST', '/api/user/send', { key: owner.token, body: { to: friends[3].email, subject: 'hi', text: 'one too many' } });
  t.equal(fourth.status, 429, 'limits.humanRecipientsPerDay');
  t.match(fourth.body.error, /daily sending limit of 3/);
  const friendInbox = await app.api('GET', '/api/v1/agent/inbox', { key: friends[0].apiKey });
  t.equal(friendInbox.body.emails[0].from.email, me.address);
  const overview = await app.api('GET', `/api/user/agents/${owner.id}`, { key: owner.token });
  t.match(overview.body, { agent: { kind: 'human', email: me.address }, sending: { limits: { recipientsPerDay: 3 }, usage: { recipientsToday: 3 } } });
  t.equal((await app.api('GET', `/api/user/agents/${owner.id}/outbound`, { key: owner.token })).body.submissions.length, 2);
  t.equal((await app.api('GET', `/api/user/agents/${owner.id}/access-keys`, { key: owner.token })).status, 404, 'keys are for agents');
});

t.test('another owner sees none of it: every /api/user/agents path answers 404, keys of an agent 403 on /api/user', async (t) => {
  const app = await startApp(t);
  const [ada, eve] = [await makeOwner(app), await makeOwner(app)];
  const agent = await app.register();
  await app.api('POST', '/api/user/agents/claim', { key: ada.token, body: { apiKey: agent.apiKey } });
  const key = await app.api('POST', `/api/user/agents/${agent.userId}/access-keys`, { key: ada.token, body: DRAFT_KEY });
  const sent = { id: '00000000-0000-4000-8000-000000000000' };
  for (const [method, path, body] of [
    ['GET', `/api/user/agents/${agent.userId}`],
    ['GET', `/api/user/agents/${agent.userId}/inbox`],
    ['GET', `/api/user/agents/${agent.userId}/email/1`],
    ['GET', `/api/user/agents/${agent.userId}/outbound`],
    ['GET', `/api/user/agents/${agent.userId}/outbound/${sent.id}`],
    ['GET', `/api/user/agents/${agent.userId}/webhooks`],
    ['GET', `/api/user/agents/${agent.userId}/webhooks/deliveries`],
    ['GET', `/api/user/agents/${agent.userId}/webhooks/deliveries/${sent.id}`],
    ['GET', `/api/user/agents/${agent.userId}/access-keys`],
    ['POST', `/api/user/agents/${agent.userId}/access-keys`, DRAFT_KEY],
    ['DELETE', `/api/user/agents/${agent.userId}/access-keys/${key.body.id}`],
    ['GET', `/api/user/agents/${ada.id}`],
    ['GET', `/api/user/agents/${ada.id}/inbox`],
  ] as [string, string, unknown?][]) {
    const response = await app.api(method, path, { key: eve.token, body });
    t.equal(response.status, 404, `${method} ${path}`);
  }
  t.equal((await app.api('GET', `/api/user/agents/${agent.userId}/access-keys`, { key: ada.token })).body.accessKeys[0].status, 'active', 'untouched');
});
