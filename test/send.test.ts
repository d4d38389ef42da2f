import t from 'tap';
import { OUTBOUND_RECIPIENT_UPDATED } from '../src/core/events.js';
import { startApp } from './helpers/app.js';
import { heardChanges } from './helpers/changes.js';
import { creditsOf, funded } from './helpers/agents.js';
import type { TestApp } from './helpers/app.js';

/** Counts the kicks the after-commit reactions give the delivery queue (driven by hand here, so a kick runs nothing). */
const onDeliveryKick = (app: TestApp, kick: () => void): void => {
  const queue = app.app.queues.delivery;
  const original = queue.kick.bind(queue);
  queue.kick = () => {
    kick();
    original();
  };
};

t.test('a send charges one credit per recipient, delivers locally and saves a Sent copy', async (t) => {
  const app = await startApp(t);
  const outbox = heardChanges(app.app.store, OUTBOUND_RECIPIENT_UPDATED);
  const stored = heardChanges(app.app.store, 'message.stored');
  const sender = await funded(app, 10, 'sender');
  const local = await funded(app, 0, 'local');
  const unknownLocal = 'agent-nobody-zzzzzz@agents.localhost';
  const response = await app.api('POST', '/api/v1/agent/send', {
    key: sender.apiKey,
    body: {
      to: `Local Friend <${local.email}>, remote@example.com`,
      cc: [unknownLocal],
      bcc: 'hidden@example.org',
      subject: 'Quarterly numbers',
      text: 'See attached.',
      html: '<p>See attached.</p>',
      from: { email: sender.email, name: 'Sender Bot' },
      replyTo: 'replies@example.com',
      headers: { 'List-Unsubscribe': '<https://example.com/u/1>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      attachments: [
        { filename: 'numbers.csv', content: 'a,b\n1,2\n' },
        { filename: 'x.bin', content: 'AAEC', encoding: 'base64' },
      ],
    },
  });
  t.equal(response.status, 200);
  t.match(response.body, { success: true, status: 'accepted', sentCopySaved: true, messageId: /^<[0-9a-f-]{36}@agents\.localhost>$/ });
  t.notOk('replayed' in response.body);
  // 4 recipients charged, the unknown local one refunded at once.
  t.equal(await creditsOf(app, sender.apiKey), 10 - 4 + 1);

  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: local.apiKey });
  t.equal(inbox.body.emails.length, 1);
  const delivered = await app.api('GET', `/api/v1/agent/email/${inbox.body.emails[0].id}`, { key: local.apiKey });
  t.match(delivered.body, {
    subject: 'Quarterly numbers',
    messageId: response.body.messageId,
    from: { name: 'Sender Bot', email: sender.email },
    text: /See attached/,
    html: /<p>See attached.<\/p>/,
  });
  t.equal(delivered.body.attachments.length, 2);
  t.equal(Buffer.from(delivered.body.attachments[0].content, 'base64').toString(), 'a,b\n1,2\n');
  t.notOk(JSON.stringify(delivered.body).includes('hidden@example.org'), 'no Bcc in the delivered copy');

  const sent = await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: sender.apiKey });
  t.equal(sent.body.emails.length, 1);
  t.equal(sent.body.emails[0].isRead, true, 'the Sent copy is seen');
  const sentCopy = await app.app.store.imap.raw(
    (await app.app.services.mailbox.folder((await app.app.services.mailbox.mailboxOfAccount(sender.userId)).id, 'Sent')).id,
    1,
  );
  const head = sentCopy!.toString().split('\r\n\r\n')[0];
  t.match(head, /^Bcc: hidden@example\.org$/m, 'the Sent copy keeps Bcc');
  t.match(head, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
  t.match(head, /^Reply-To: replies@example\.com$/m);
  t.match(head, /^Date: /m);

  const detail = await app.api('GET', `/api/v1/agent/outbound/${response.body.id}`, { key: sender.apiKey });
  t.equal(detail.status, 200);
  const byEmail = Object.fromEntries(detail.body.recipients.map((r: any) => [r.email, r]));
  t.match(byEmail[local.email], { kind: 'to', status: 'delivered', attempts: 1, creditRefunded: false });
  t.match(byEmail['remote@example.com'], { kind: 'to', status: 'queued', attempts: 0, nextAttemptAt: String });
  t.match(byEmail[unknownLocal], { kind: 'cc', status: 'failed', smtpCode: 550, enhancedCode: '5.1.1', creditRefunded: true });
  t.match(byEmail['hidden@example.org'], { kind: 'bcc', status: 'queued' });
  t.match(detail.body, { tracked: true, sentCopySaved: true, via: 'rest', from: sender.email, subject: 'Quarterly numbers' });
  t.same(
    detail.body.events.map((e: any) => e.status),
    ['queued', 'queued', 'queued', 'queued', 'delivered', 'failed'],
  );

  t.equal(outbox.length, 6);
  t.match(outbox[5], { submissionId: response.body.id, recipient: unknownLocal, status: 'failed', smtpCode: 550, enhancedCode: '5.1.1' });
  // The local INBOX and the Sent copy each wrote message.stored.
  t.same(stored.map((entry) => entry.folder).sort(), ['INBOX', 'Sent']);
});

t.test('remote recipients wake the delivery observer after the commit', async (t) => {
  const app = await startApp(t);
  const sender = await funded(app, 5);
  let kicks = 0;
  onDeliveryKick(app, () => (kicks += 1));
  const local = await funded(app, 0);
  await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: local.email, subject: 'local only', text: 'x' } });
  t.equal(kicks, 0, 'nothing queued for the worker');
  await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: 'a@example.com', subject: 'remote', text: 'x' } });
  t.equal(kicks, 1);
});

t.test('not enough credits: 402 and nothing reserved, queued or saved', async (t) => {
  const app = await startApp(t);
  const sender = await funded(app, 2);
  const response = await app.api('POST', '/api/v1/agent/send', {
    key: sender.apiKey,
    body: { to: ['a@example.com', 'b@example.com', 'c@example.com'], subject: 's', text: 'x' },
  });
  t.equal(response.status, 402);
  t.equal(response.body.code, 'insufficient_credits');
  t.equal(await creditsOf(app, sender.apiKey), 2);
  t.same((await app.api('GET', '/api/v1/agent/outbound', { key: sender.apiKey })).body.submissions, []);
  t.equal((await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: sender.apiKey })).body.totalMessages, 0);
  const zero = await funded(app, 0);
  t.equal((await app.api('POST', '/api/v1/agent/send', { key: zero.apiKey, body: { to: 'a@example.com', subject: 's', text: 'x' } })).status, 402);
  const exact = await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: 'a@example.com, b@example.com', subject: 's', text: 'x' } });
  t.equal(exact.status, 200, 'exactly enough is enough');
  t.equal(await creditsOf(app, sender.apiKey), 0);
});

t.test('suppressed recipients are neither sent nor charged', async (t) => {
  const app = await startApp(t);
  const sender = await funded(app, 5);
  await app.app.store.suppressions.add({
    id: 'sup-1',
    accountId: sender.userId,
    address: 'gone@example.com',
    reason: 'bounce',
    canRelease: true,
    createdAt: 0,
  });
  let kicks = 0;
  onDeliveryKick(app, () => (kicks += 1));
  const onlySuppressed = await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: 'Gone@Example.com', subject: 's', text: 'x' } });
  t.equal(onlySuppressed.status, 200);
  t.equal(await creditsOf(app, sender.apiKey), 5);
  t.equal(kicks, 0);
  const mixed = await app.api('POST', '/api/v1/agent/send', {
    key: sender.apiKey,
    body: { to: 'gone@example.com', cc: 'ok@example.com', subject: 's2', text: 'x' },
  });
  t.equal(await creditsOf(app, sender.apiKey), 4);
  const detail = await app.api('GET', `/api/v1/agent/outbound/${mixed.body.id}`, { key: sender.apiKey });
  t.same(
    detail.body.recipients.map((r: any) => [r.email, r.status]),
    [
      ['gone@example.com', 'suppressed'],
      ['ok@example.com', 'queued'],
    ],
  );
});
