import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { newUuid } from '../src/core/ids.js';
import { startApp } from './helpers/app.js';

t.test('outbound list: 50 a page, newest first, before = nextCursor; detail; untracked after 90 days', async (t) => {
  const clock = new ManualClock('2026-02-01T12:00:00Z');
  const app = await startApp(t, {}, { clock });
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 100);
  await app.app.services.sending.setState(agent.email, 'reviewed');
  const ids: string[] = [];
  for (let i = 0; i < 52; i += 1) {
    clock.advance(1000);
    const response = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: `r${i}@example.com`, subject: `n${i}`, text: 'x' } });
    ids.push(response.body.id);
  }
  const first = await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey });
  t.equal(first.body.submissions.length, 50);
  t.equal(first.body.submissions[0].id, ids[51], 'newest first');
  t.match(first.body.submissions[0], {
    subject: 'n51',
    tracked: true,
    via: 'rest',
    recipientCount: 1,
    statusCounts: { queued: 1 },
    createdAt: '2026-02-01T12:00:52.000Z',
  });
  t.type(first.body.nextCursor, 'string');
  const second = await app.api('GET', `/api/v1/agent/outbound?before=${first.body.nextCursor}`, { key: agent.apiKey });
  t.same(
    second.body.submissions.map((s: any) => s.id),
    [ids[1], ids[0]],
  );
  t.equal(second.body.nextCursor, null);
  t.equal((await app.api('GET', '/api/v1/agent/outbound?before=abc', { key: agent.apiKey })).status, 400);

  const detail = await app.api('GET', `/api/v1/agent/outbound/${ids[0]}`, { key: agent.apiKey });
  t.match(detail.body, { id: ids[0], subject: 'n0', tracked: true, recipients: [{ email: 'r0@example.com', status: 'queued' }] });

  const other = await app.register();
  t.equal((await app.api('GET', `/api/v1/agent/outbound/${ids[0]}`, { key: other.apiKey })).status, 404, "another account's submission");
  t.same((await app.api('GET', '/api/v1/agent/outbound', { key: other.apiKey })).body, { submissions: [], nextCursor: null });
  t.equal((await app.api('GET', `/api/v1/agent/outbound/${newUuid()}`, { key: agent.apiKey })).status, 404);
  t.equal((await app.api('GET', '/api/v1/agent/outbound', {})).status, 401);

  clock.advance(90 * 24 * 60 * 60 * 1000 - 10_000);
  const stillTracked = await app.api('GET', `/api/v1/agent/outbound/${ids[51]}`, { key: agent.apiKey });
  t.equal(stillTracked.body.tracked, true);
  clock.advance(60_000);
  const old = await app.api('GET', `/api/v1/agent/outbound/${ids[51]}`, { key: agent.apiKey });
  t.same(old.body, { id: ids[51], messageId: old.body.messageId, subject: 'n51', createdAt: '2026-02-01T12:00:52.000Z', tracked: false });
  const list = await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey });
  t.same(Object.keys(list.body.submissions[0]).sort(), ['createdAt', 'id', 'messageId', 'subject', 'tracked']);
});

t.test('the latest 200 state changes are shown, oldest of them first', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 1);
  const sent = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'a@example.com', subject: 's', text: 'x' } });
  const [row] = await app.app.store.submissions.recipientsOf(sent.body.id);
  // One transaction: 205 separate fsyncs can outlast the client's idle keep-alive socket.
  await app.app.store.transaction(async () => {
    for (let i = 1; i <= 205; i += 1) {
      await app.app.store.submissions.transition(
        row.id,
        { status: 'deferred', smtpCode: 451, enhancedCode: '4.7.1', diagnostic: `try ${i}`, countAttempt: true },
        1_700_000_000_000 + i,
      );
    }
  });
  const detail = await app.api('GET', `/api/v1/agent/outbound/${sent.body.id}`, { key: agent.apiKey });
  t.equal(detail.body.events.length, 200);
  t.equal(detail.body.events[0].diagnostic, 'try 6');
  t.equal(detail.body.events[199].diagnostic, 'try 205');
  t.match(detail.body.recipients[0], { status: 'deferred', attempts: 205, smtpCode: 451, enhancedCode: '4.7.1' });
});

t.test('a limited mail:send key: its own receipts only, its lists and budgets in the accept transaction', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 20);
  await app.app.services.sending.setState(agent.email, 'reviewed');
  const send = (key: string, to: string | string[]) => app.api('POST', '/api/v1/agent/send', { key, body: { to, subject: 's', text: 'x' } });
  const fullSend = await send(agent.apiKey, 'a@example.com');
  const issued = await app.api('POST', '/api/v1/agent/access-keys', {
    key: agent.apiKey,
    body: {
      name: 'helper',
      kind: 'mail',
      permissions: ['mail:send'],
      allowedRecipients: ['a@example.com', 'b@example.com', 'agent-nobody-zzzzzz@agents.localhost'],
      dailyRecipientLimit: 3,
      totalRecipientLimit: 10,
    },
  });
  t.equal(issued.status, 201);
  const limited = issued.body.apiKey as string;
  const own = await send(limited, ['a@example.com', 'b@example.com']);
  t.equal(own.status, 200);
  t.same(
    (await app.api('GET', '/api/v1/agent/outbound', { key: limited })).body.submissions.map((s: any) => s.id),
    [own.body.id],
  );
  t.same(
    (await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey })).body.submissions.map((s: any) => s.id),
    [own.body.id, fullSend.body.id],
  );
  t.equal((await app.api('GET', `/api/v1/agent/outbound/${fullSend.body.id}`, { key: limited })).status, 404, "the account key's submission");
  t.equal((await app.api('GET', `/api/v1/agent/outbound/${own.body.id}`, { key: limited })).status, 200);

  const outside = await send(limited, 'c@example.com');
  t.equal(outside.status, 403, 'not in allowedRecipients');
  // An unknown local address fails at once and releases its unit with the credit.
  t.equal((await send(limited, 'agent-nobody-zzzzzz@agents.localhost')).status, 200);
  t.equal((await send(limited, 'a@example.com')).status, 200, 'the third unit of the day');
  const overBudget = await send(limited, 'b@example.com');
  t.equal(overBudget.status, 429, 'daily budget of 3');
  t.ok(Number(overBudget.headers.get('retry-after')) > 0);
  t.equal(
    (await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits,
    20 - 1 - 2 - 1,
    'refusals charged nothing; the failed local one was refunded',
  );
  t.equal((await app.api('GET', '/api/v1/agent/sending', { key: limited })).status, 200, 'GET /sending works with either key');

  const reader = await app.api('POST', '/api/v1/agent/access-keys', { key: agent.apiKey, body: { name: 'reader', kind: 'mail', permissions: ['mail:read'] } });
  t.equal((await app.api('GET', '/api/v1/agent/outbound', { key: reader.body.apiKey })).status, 403, 'mail:read does not read receipts');
  t.equal((await send(reader.body.apiKey, 'a@example.com')).status, 403);
});
