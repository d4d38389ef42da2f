import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { sweepRunOnce } from '../src/app/calendar-jobs.js';
import { startApp, type TestApp } from './helpers/app.js';

const ready = async (app: TestApp, credits = 100) => {
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, credits);
  await app.app.services.sending.setState(agent.email, 'reviewed');
  return agent;
};

const nothingHappened = async (t: any, app: TestApp, agent: { apiKey: string }, credits: number, label: string) => {
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, credits, `${label}: nothing charged`);
  t.same((await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey })).body.submissions, [], `${label}: nothing queued`);
};

t.test('every send request rule answers 400 naming the field, and charges nothing', async (t) => {
  const app = await startApp(t);
  const agent = await ready(app);
  const ok = { to: 'a@example.com', subject: 's', text: 'x' };
  const many = (n: number, domain = 'example.com') => Array.from({ length: n }, (_, i) => `r${i}@${domain}`);
  const cases: [string, unknown, RegExp][] = [
    ['missing to', { subject: 's', text: 'x' }, /to/],
    ['missing subject', { to: 'a@example.com', text: 'x' }, /subject/],
    ['invalid to', { ...ok, to: 'not-an-address' }, /to/],
    ['invalid in a comma list', { ...ok, to: 'a@example.com, b@@example.com' }, /to/],
    ['invalid cc', { ...ok, cc: ['fine@example.com', 'nope'] }, /cc/],
    ['invalid bcc', { ...ok, bcc: 'x@' }, /bcc/],
    ['invalid replyTo', { ...ok, replyTo: 'broken' }, /replyTo/],
    ['empty to list', { ...ok, to: [] }, /^to must not be an empty list$/],
    ['array of 51', { ...ok, to: many(51) }, /^to has too many items: at most 50$/],
    ['comma string of 51', { ...ok, to: many(51).join(',') }, /^to has too many items: 51 addresses, at most 50$/],
    ['51 distinct across to/cc/bcc', { ...ok, to: many(20), cc: many(20, 'example.org'), bcc: many(11, 'example.net') }, /50/],
    ['subject too long', { ...ok, subject: 's'.repeat(999) }, /subject/],
    ['subject with LF', { ...ok, subject: 'a\nb' }, /subject/],
    ['subject with CR', { ...ok, subject: 'a\rb' }, /subject/],
    ['no body', { to: 'a@example.com', subject: 's' }, /body/],
    ['empty bodies', { ...ok, text: '', html: '', body: '' }, /body/],
    ['header not allowed', { ...ok, headers: { 'X-Custom': '1' } }, /X-Custom/],
    ['header with CRLF', { ...ok, headers: { 'List-Unsubscribe': '<https://a.example/u>\r\nBcc: x@example.com' } }, /List-Unsubscribe/],
    [
      'one-click without https',
      { ...ok, headers: { 'List-Unsubscribe': '<mailto:u@example.com>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } },
      /https/,
    ],
    [
      'one-click with http',
      { ...ok, headers: { 'List-Unsubscribe': '<http://example.com/u>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } },
      /https/,
    ],
    ['one-click without List-Unsubscribe', { ...ok, headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } }, /https/],
    [
      'wrong one-click value',
      { ...ok, headers: { 'List-Unsubscribe': '<https://a.example/u>', 'List-Unsubscribe-Post': 'List-Unsubscribe=one-click' } },
      /List-Unsubscribe-Post/,
    ],
    ['malformed List-Unsubscribe', { ...ok, headers: { 'List-Unsubscribe': 'https://a.example/u' } }, /List-Unsubscribe/],
    [
      '21 attachments',
      { ...ok, attachments: Array.from({ length: 21 }, (_, i) => ({ filename: `f${i}.txt`, content: 'x' })) },
      /^attachments has too many items: at most 20$/,
    ],
    ['filename of 256', { ...ok, attachments: [{ filename: 'f'.repeat(256), content: 'x' }] }, /filename/],
    ['attachment without content', { ...ok, attachments: [{ filename: 'a.txt' }] }, /content/],
    ['unknown encoding', { ...ok, attachments: [{ filename: 'a.txt', content: 'x', encoding: 'hex' }] }, /encoding/],
    ['invalid base64', { ...ok, attachments: [{ filename: 'a.bin', content: '!!!', encoding: 'base64' }] }, /content/],
    ['a path is not an attachment source', { ...ok, attachments: [{ filename: 'a.txt', path: '/etc/passwd' }] }, /path|content/],
    ['idempotencyKey too long', { ...ok, idempotencyKey: 'k'.repeat(129) }, /idempotencyKey/],
    ['idempotencyKey empty', { ...ok, idempotencyKey: '' }, /^idempotencyKey must not be empty$/],
    ['unknown field', { ...ok, priority: 'high' }, /priority/],
    ['from invalid', { ...ok, from: 'not an address' }, /from/],
    // Mail goes only to DNS names: address literals and IPv4 addresses in disguise are refused.
    ['address literal', { ...ok, to: 'x@[127.0.0.1]' }, /to/],
    ['IPv6 address literal', { ...ok, cc: 'x@[IPv6:::1]' }, /cc/],
    ['dotted-quad domain', { ...ok, to: 'x@10.0.0.1' }, /to/],
    ['short IPv4 form', { ...ok, bcc: ['x@127.1'] }, /bcc/],
    ['hex IPv4 form', { ...ok, to: 'x@0x7f.1' }, /to/],
    ['metadata address', { ...ok, to: 'x@169.254.169.254' }, /to/],
    // RFC 6761 section 6.3: names under .localhost are this host; only the service's own are mail domains.
    ['a name under .localhost', { ...ok, to: 'x@foo.localhost' }, /^x@foo\.localhost: foo\.localhost names this host/],
    ['a name under the mail domain', { ...ok, cc: 'x@sub.agents.localhost' }, /sub\.agents\.localhost names this host/],
    ['.localhost in upper case', { ...ok, bcc: ['x@Mail.LocalHost'] }, /localhost names this host/],
  ];
  for (const [label, body, field] of cases) {
    const response = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body });
    t.equal(response.status, 400, label);
    t.equal(response.body.code, 'invalid_input', label);
    t.match(response.body.error, field, `${label}: ${response.body.error}`);
  }
  const header = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { ...ok, idempotencyKey: 'a' }, headers: { 'idempotency-key': 'b' } });
  t.equal(header.status, 400, 'header and body keys differ');
  t.match(header.body.error, /Idempotency-Key/);
  const longHeader = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: ok, headers: { 'idempotency-key': 'k'.repeat(129) } });
  t.equal(longHeader.status, 400);
  await nothingHappened(t, app, agent, 100, 'after every 400');
});

t.test(
  "a recipient on the service's own .localhost mail domain is delivered; another .localhost name is refused everywhere a message is written",
  async (t) => {
    const app = await startApp(t);
    const agent = await ready(app, 5);
    const peer = await app.register();
    t.match(peer.email, /@agents\.localhost$/, 'the development mail domain is under .localhost');
    const local = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: peer.email, subject: 'next door', text: 'x' } });
    t.equal(local.status, 200);
    t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: peer.apiKey })).body.emails[0].subject, 'next door');
    const draft = await app.api('POST', '/api/v1/agent/drafts', { key: agent.apiKey, body: { to: 'x@foo.localhost', subject: 's', text: 'x' } });
    t.equal(draft.status, 400, 'a draft is validated as a send');
    t.match(draft.body, { code: 'invalid_input', error: /foo\.localhost names this host/ });
    const mcp = app.app.services.sending.send(
      { accountId: agent.userId, keyId: 'k', kind: 'full', permissions: ['mail:send'] },
      { to: 'x@foo.localhost', subject: 's', text: 'x' },
      { via: 'mcp' },
    );
    await t.rejects(mcp, { code: 'invalid_input' }, 'the one send service refuses it, whatever the adapter');
    t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 4, 'only the local message was charged');
  },
);

t.test('50 distinct recipients are fine; duplicates across lists count once', async (t) => {
  const app = await startApp(t);
  const agent = await ready(app);
  const fifty = Array.from({ length: 50 }, (_, i) => `r${i}@example.com`);
  const response = await app.api('POST', '/api/v1/agent/send', {
    key: agent.apiKey,
    body: { to: fifty, cc: fifty.slice(0, 10).map((a) => a.toUpperCase()), bcc: fifty[49], subject: 's', text: 'x' },
  });
  t.equal(response.status, 200);
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 50);
});

t.test('413 for text plus html over 1 MB and attachments over 8 MB decoded', async (t) => {
  const app = await startApp(t);
  const agent = await ready(app);
  const half = 'x'.repeat(512 * 1024);
  const ok = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'a@example.com', subject: 's', text: half, html: half } });
  t.equal(ok.status, 200, 'exactly 1 MB is allowed');
  const text = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'a@example.com', subject: 's', text: half, html: `${half}x` } });
  t.equal(text.status, 413);
  t.match(text.body, { code: 'too_large', error: /1048576/ });
  const fourMb = Buffer.alloc(4 * 1024 * 1024, 1).toString('base64');
  const attachments = await app.api('POST', '/api/v1/agent/send', {
    key: agent.apiKey,
    body: {
      to: 'a@example.com',
      subject: 's',
      text: 'x',
      attachments: [
        { filename: 'a', content: fourMb, encoding: 'base64' },
        { filename: 'b', content: fourMb, encoding: 'base64' },
        { filename: 'c', content: 'x' },
      ],
    },
  });
  t.equal(attachments.status, 413);
  t.match(attachments.body.error, /attachments/);
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 99, 'only the 1 MB send was charged');
});

t.test('from must be the account address (or an alias of its mailbox, domain-mail.test.ts): anyone else is 403', async (t) => {
  const app = await startApp(t);
  const agent = await ready(app);
  const other = await ready(app);
  for (const from of [other.email, { email: 'ceo@example.com', name: 'CEO' }, `Someone <${other.email}>`]) {
    const response = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'a@example.com', subject: 's', text: 'x', from } });
    t.equal(response.status, 403, JSON.stringify(from));
    t.match(response.body.error, /from/);
  }
  await nothingHappened(t, app, agent, 100, 'after 403');
  const own = await app.api('POST', '/api/v1/agent/send', {
    key: agent.apiKey,
    body: { to: 'a@example.com', subject: 's', text: 'x', from: `Me <${agent.email.toUpperCase()}>` },
  });
  t.equal(own.status, 200, 'the own address in any case, with a display name');
});

t.test('idempotency: replay, conflicting content, an unresolved earlier send', async (t) => {
  const app = await startApp(t);
  const agent = await ready(app);
  const body = { to: 'a@example.com, b@example.com', subject: 'once', text: 'x', idempotencyKey: 'order-17' };
  const first = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body });
  t.equal(first.status, 200);
  t.equal(first.body.sentCopySaved, true);
  const again = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body });
  t.same(again.body, { success: true, id: first.body.id, messageId: first.body.messageId, status: 'accepted', replayed: true });
  const viaHeader = await app.api('POST', '/api/v1/agent/send', {
    key: agent.apiKey,
    body: { ...body, idempotencyKey: undefined },
    headers: { 'idempotency-key': 'order-17' },
  });
  t.equal(viaHeader.body.replayed, true, 'the header carries the same key');
  const different = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { ...body, text: 'y' } });
  t.equal(different.status, 409);
  t.equal(different.body.code, 'conflict');
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 98, 'charged once');
  t.equal((await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey })).body.submissions.length, 1);
  t.equal((await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: agent.apiKey })).body.totalMessages, 1);

  // The delivery worker reports an unknown outcome for one recipient.
  const [recipient] = await app.app.store.submissions.recipientsOf(first.body.id);
  await app.app.store.transaction(() =>
    app.app.store.submissions.transition(recipient.id, { status: 'unresolved', diagnostic: 'connection lost after DATA' }, Date.now()),
  );
  const newKey = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { ...body, idempotencyKey: 'order-17-retry' } });
  t.equal(newKey.status, 409, 'an identical message may not go out under a new key while unresolved');
  t.match(newKey.body.error, /unresolved/);
  const noKey = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { ...body, idempotencyKey: undefined } });
  t.equal(noKey.status, 409, 'nor without a key');
  const sameKey = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body });
  t.equal(sameKey.body.replayed, true, 'the original key still replays');
  const changed = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { ...body, subject: 'once more', idempotencyKey: undefined } });
  t.equal(changed.status, 200, 'a different message is fine');
});

t.test('20 identical requests racing on one key: one submission, one charge', async (t) => {
  const app = await startApp(t);
  const agent = await ready(app, 10);
  const body = { to: 'a@example.com, b@example.com', subject: 'race', text: 'x' };
  const responses = await Promise.all(
    Array.from({ length: 20 }, () => app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body, headers: { 'idempotency-key': 'race-1' } })),
  );
  t.same(
    responses.map((r) => r.status),
    Array(20).fill(200),
  );
  t.equal(new Set(responses.map((r) => r.body.id)).size, 1, 'one id');
  t.equal(responses.filter((r) => r.body.replayed === true).length, 19);
  t.equal(responses.filter((r) => r.body.sentCopySaved === true).length, 1);
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 8);
  t.equal((await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey })).body.submissions.length, 1);
  t.equal((await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: agent.apiKey })).body.totalMessages, 1);
});

t.test('idempotency keys are kept 24 hours, then swept; the key can then send anew', async (t) => {
  const clock = new ManualClock('2026-04-01T08:00:00Z');
  const app = await startApp(t, {}, { clock });
  const agent = await ready(app, 10);
  const body = { to: 'a@example.com', subject: 'daily report', text: 'x', idempotencyKey: 'report-2026-04-01' };
  const first = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body });
  clock.advance(24 * 60 * 60 * 1000 - 1);
  t.equal((await sweepRunOnce(app.app.services)).idempotencyRecordsSwept, 0);
  t.equal((await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body })).body.replayed, true, 'still a replay just under 24 h');
  clock.advance(2);
  t.equal((await sweepRunOnce(app.app.services)).idempotencyRecordsSwept, 1);
  const fresh = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body });
  t.equal(fresh.status, 200);
  t.not(fresh.body.id, first.body.id);
  t.equal(fresh.body.sentCopySaved, true);
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 8);
});
