import t from 'tap';
import { startApp } from './helpers/app.js';
import { creditsOf, funded } from './helpers/agents.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { issueAccessKey } from './helpers/keys.js';

/** send_email over MCP: the same send service, rules and idempotency as POST /api/v1/agent/send. */

t.test('send_email sends through the send service, records via mcp and delivers locally', async (t) => {
  const app = await startApp(t);
  const sender = await funded(app, 5, 'sender');
  const friend = await funded(app, 0, 'friend');
  const client = await mcpClient(t, app.baseUrl, { key: sender.apiKey });
  const sent = await callTool(client, 'send_email', {
    to: [friend.email],
    subject: 'Over MCP',
    text: 'hello from a tool',
    attachments: [{ filename: 'a.txt', content: 'attached' }],
  });
  t.equal(sent.isError, false);
  t.match(sent.body, { success: true, status: 'accepted', id: /^[0-9a-f-]{36}$/, messageId: /^<[0-9a-f-]{36}@agents\.localhost>$/, sentCopySaved: true });
  t.notOk('replayed' in sent.body);
  t.equal(await creditsOf(app, sender.apiKey), 4, 'one credit for one recipient');

  const detail = await app.api('GET', `/api/v1/agent/outbound/${sent.body.id}`, { key: sender.apiKey });
  t.match(detail.body, { via: 'mcp', subject: 'Over MCP' });
  const friendClient = await mcpClient(t, app.baseUrl, { key: friend.apiKey });
  const inbox = await callTool(friendClient, 'check_inbox');
  t.equal(inbox.body.emails[0].subject, 'Over MCP');
  const read = await callTool(friendClient, 'get_email', { id: inbox.body.emails[0].id });
  t.match(read.body, { messageId: sent.body.messageId, text: /hello from a tool/ });
  t.equal(Buffer.from(read.body.attachments[0].content, 'base64').toString(), 'attached');
});

t.test('send_email idempotencyKey in the arguments has the REST semantics', async (t) => {
  const app = await startApp(t);
  const sender = await funded(app, 5);
  const client = await mcpClient(t, app.baseUrl, { key: sender.apiKey });
  const message = { to: 'remote@example.com', subject: 'Once', text: 'only once', idempotencyKey: 'order-42' };
  const first = await callTool(client, 'send_email', message);
  t.equal(first.isError, false);
  const again = await callTool(client, 'send_email', message);
  t.equal(again.isError, false);
  const { sentCopySaved, ...firstAnswer } = first.body;
  t.equal(sentCopySaved, true);
  t.same(again.body, { ...firstAnswer, replayed: true }, 'the first answer, marked replayed');
  t.equal(await creditsOf(app, sender.apiKey), 4, 'charged once');

  const changed = await callTool(client, 'send_email', { ...message, text: 'something else' });
  t.equal(changed.isError, true);
  t.equal(changed.body.code, 'conflict');

  const overRest = await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: message });
  t.equal(overRest.status, 200);
  t.same(overRest.body, again.body, 'one idempotency record for REST and MCP');

  const tooLong = await callTool(client, 'send_email', { ...message, idempotencyKey: 'k'.repeat(129) });
  t.equal(tooLong.body.code, 'invalid_input');
  t.match(tooLong.body.error, /idempotencyKey/);
});

t.test('send_email failures are isError results with the REST {error, code}', async (t) => {
  const app = await startApp(t, { limits: { sendTextMaxBytes: 100 } });
  const rich = await funded(app, 5);
  const poor = await funded(app, 0);
  const rich_ = await mcpClient(t, app.baseUrl, { key: rich.apiKey });
  const poor_ = await mcpClient(t, app.baseUrl, { key: poor.apiKey });
  const anonymous = await mcpClient(t, app.baseUrl);
  const ok = { to: 'remote@example.com', subject: 'Hi', text: 'short' };
  const cases: [typeof rich_, Record<string, unknown>, string, string][] = [
    [anonymous, ok, 'unauthorized', 'no key'],
    [anonymous, { ...ok, apiKey: rich.apiKey }, 'unauthorized', 'a key in the arguments'],
    [rich_, { to: 'remote@example.com' }, 'invalid_input', 'no subject'],
    [rich_, { ...ok, subject: 'a\r\nBcc: x@example.com' }, 'invalid_input', 'CR LF in subject'],
    [rich_, { ...ok, to: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) }, 'invalid_input', '51 addresses'],
    [rich_, { ...ok, from: 'someone@example.com' }, 'forbidden', 'a foreign from'],
    [rich_, { ...ok, text: 'x'.repeat(101) }, 'too_large', 'text over the limit'],
    [poor_, ok, 'insufficient_credits', 'no credits'],
  ];
  for (const [client, args, code, label] of cases) {
    const outcome = await callTool(client, 'send_email', args);
    t.equal(outcome.isError, true, label);
    t.equal(outcome.body.code, code, label);
    t.same(Object.keys(outcome.body).sort(), ['code', 'error']);
  }
  t.equal(await creditsOf(app, rich.apiKey), 5, 'no failure charged anything');
});

t.test('send_email shares the probation per-minute limit with REST (429 as rate_limited)', async (t) => {
  const app = await startApp(t);
  const sender = await app.register();
  await app.app.services.accounts.addCredits(sender.email, 10);
  const client = await mcpClient(t, app.baseUrl, { key: sender.apiKey });
  const rest = await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: ['a@example.com', 'b@example.com'], subject: 's', text: 't' } });
  t.equal(rest.status, 200);
  t.equal((await callTool(client, 'send_email', { to: 'c@example.com', subject: 's', text: 't' })).isError, false, 'the third this minute');
  const fourth = await callTool(client, 'send_email', { to: 'd@example.com', subject: 's', text: 't' });
  t.equal(fourth.isError, true);
  t.equal(fourth.body.code, 'rate_limited');
});

t.test('send_email with a limited access key: permission and budget as over REST', async (t) => {
  const app = await startApp(t);
  const owner = await funded(app, 10);
  const reader = await issueAccessKey(app, owner.apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'] });
  const sender = await issueAccessKey(app, owner.apiKey, {
    name: 'sender',
    kind: 'mail',
    permissions: ['mail:send'],
    dailyRecipientLimit: 2,
    totalRecipientLimit: 5,
  });
  const message = { to: 'remote@example.com', subject: 'limited', text: 'from an access key' };
  const refused = await callTool(await mcpClient(t, app.baseUrl, { key: reader.apiKey }), 'send_email', message);
  t.equal(refused.isError, true);
  t.equal(refused.body.code, 'forbidden', 'mail:read alone cannot send');

  const client = await mcpClient(t, app.baseUrl, { key: sender.apiKey });
  t.equal((await callTool(client, 'send_email', message)).isError, false);
  const balance = await callTool(client, 'check_balance');
  t.match(balance.body.accessKey, { id: sender.id, dailyRecipientsUsed: 1, totalRecipientsUsed: 1 });
  const overBudget = await callTool(client, 'send_email', { ...message, to: ['a@example.com', 'b@example.com'] });
  t.equal(overBudget.isError, true);
  t.equal(overBudget.body.code, 'rate_limited', 'the daily recipient limit of the key');
});

t.test('send_email refuses IP-address recipient domains as REST does (invalid_input), charging nothing', async (t) => {
  const app = await startApp(t);
  const sender = await funded(app, 5);
  const client = await mcpClient(t, app.baseUrl, { key: sender.apiKey });
  for (const to of ['x@[127.0.0.1]', 'x@10.0.0.1', 'x@169.254.169.254']) {
    const refused = await callTool(client, 'send_email', { to, subject: 's', text: 'x' });
    t.equal(refused.isError, true, to);
    t.equal(refused.body.code, 'invalid_input', to);
  }
  t.equal(await creditsOf(app, sender.apiKey), 5);
});
