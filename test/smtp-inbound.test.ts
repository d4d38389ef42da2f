import { join } from 'node:path';
import Database from 'better-sqlite3';
import nodemailer from 'nodemailer';
import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp } from './helpers/app.js';
import { folderOf, simpleMessage, storedRaw } from './helpers/mail.js';
import { smtpDialog, smtpSend, smtpSendRaw } from './helpers/smtp.js';

/** Inbound SMTP (issue 2): refusals at RCPT, size limit, one copy per recipient, trace, durability. */

const rejection = async (promise: Promise<unknown>): Promise<{ responseCode?: number; response?: string }> => {
  try {
    await promise;
  } catch (error) {
    return error as { responseCode?: number; response?: string };
  }
  throw new Error('expected the SMTP transaction to be refused');
};

const inboxOf = async (api: any, key: string) => (await api('GET', '/api/v1/agent/inbox?limit=100', { key })).body;

t.test('the greetings of the MX and of submission say ESMTP once (RFC 5321 section 4.3.1)', async (t) => {
  const app = await startApp(t);
  const hostname = app.app.config.smtp.hostname;
  const [mx] = await smtpDialog(app.smtpPort, []);
  t.equal(mx, `220 ${hostname} ESMTP agentpost`);
  const [submission] = await smtpDialog(app.submissionPort, []);
  t.equal(submission, `220 ${hostname} ESMTP agentpost submission`);
});

t.test('a recipient that is not a local mailbox is refused at RCPT with 550 5.1.1', async (t) => {
  const { smtpPort, register, api } = await startApp(t);
  const agent = await register();
  for (const stranger of ['nobody@agents.localhost', 'someone@example.com', `x${agent.email}`]) {
    const error = await rejection(smtpSendRaw(smtpPort, 'a@example.org', [stranger], simpleMessage({ subject: 'hi' })));
    t.equal(error.responseCode, 550, stranger);
    t.match(error.response, /^550 5\.1\.1 /, stranger);
  }
  const dialog = await smtpDialog(smtpPort, ['EHLO client.test', 'MAIL FROM:<a@example.org>', 'RCPT TO:<nobody@agents.localhost>']);
  t.match(dialog[3], /^550 5\.1\.1 /, 'the refusal comes at RCPT, before DATA');
  t.equal((await inboxOf(api, agent.apiKey)).totalMessages, 0);
});

t.test('in a mixed envelope only the unknown recipient is refused; the local one gets its copy', async (t) => {
  const { smtpPort, register, api } = await startApp(t);
  const agent = await register();
  const sent = await smtpSendRaw(smtpPort, 'a@example.org', ['nobody@agents.localhost', agent.email], simpleMessage({ subject: 'mixed' }));
  t.same(sent.accepted, [agent.email]);
  t.same(sent.rejected, ['nobody@agents.localhost']);
  const inbox = await inboxOf(api, agent.apiKey);
  t.equal(inbox.totalMessages, 1);
  t.equal(inbox.emails[0].subject, 'mixed');
});

t.test('recipient addresses match case-insensitively, and a repeated recipient gets one copy', async (t) => {
  const { smtpPort, register, api } = await startApp(t);
  const agent = await register();
  const raw = simpleMessage({ subject: 'twice' }).toString();
  const dialog = await smtpDialog(smtpPort, [
    'EHLO client.test',
    'MAIL FROM:<a@example.org>',
    `RCPT TO:<${agent.email.toUpperCase()}>`,
    `RCPT TO:<${agent.email}>`,
    'DATA',
    `${raw}.\r\n`,
  ]);
  t.match(dialog[3], /^250 /);
  t.match(dialog[4], /^250 /);
  t.match(dialog[6], /^250 /);
  t.equal((await inboxOf(api, agent.apiKey)).totalMessages, 1);
});

t.test('a message over smtp.maxMessageBytes gets 552 and nothing is stored', async (t) => {
  const { smtpPort, register, api } = await startApp(t, { smtp: { maxMessageBytes: 2048 } });
  const agent = await register();
  const big = simpleMessage({ subject: 'too big', body: 'x'.repeat(70).concat('\r\n').repeat(60) });
  t.ok(big.length > 2048);
  const atData = await rejection(smtpSendRaw(smtpPort, 'a@example.org', [agent.email], big));
  t.equal(atData.responseCode, 552, 'refused after DATA when no SIZE was declared');
  t.match(atData.response, /^552 5\.3\.4 /);
  // nodemailer itself refuses to send what the EHLO SIZE forbids, so speak SMTP directly.
  const dialog = await smtpDialog(smtpPort, ['EHLO client.test', `MAIL FROM:<a@example.org> SIZE=${big.length}`]);
  t.match(dialog[1], /SIZE 2048/, 'EHLO advertises the limit (RFC 1870)');
  t.match(dialog[2], /^552 /, 'refused at MAIL FROM when SIZE= declares too much');
  const fits = await smtpSendRaw(smtpPort, 'a@example.org', [agent.email], simpleMessage({ subject: 'fits' }));
  t.match(fits.response, /^250 /, 'the session limit does not affect a small message');
  const inbox = await inboxOf(api, agent.apiKey);
  t.same(
    inbox.emails.map((email: any) => email.subject),
    ['fits'],
  );
});

t.test('each local recipient gets its own copy with its own UID and Received header', async (t) => {
  const { smtpPort, register, api, app } = await startApp(t);
  const alice = await register();
  const bob = await register();
  await smtpSendRaw(smtpPort, 'a@example.org', [bob.email], simpleMessage({ subject: 'bob only' }));
  const raw = simpleMessage({ subject: 'for both', to: `${alice.email}, ${bob.email}` });
  const sent = await smtpSendRaw(smtpPort, 'a@example.org', [alice.email, bob.email], raw);
  t.same(sent.accepted, [alice.email, bob.email]);
  const aliceInbox = await inboxOf(api, alice.apiKey);
  const bobInbox = await inboxOf(api, bob.apiKey);
  t.same(
    aliceInbox.emails.map((email: any) => [email.id, email.subject]),
    [['1', 'for both']],
  );
  t.same(
    bobInbox.emails.map((email: any) => [email.id, email.subject]),
    [
      ['2', 'for both'],
      ['1', 'bob only'],
    ],
  );
  const aliceRaw = (await storedRaw(app, alice.email, 1)).toString('latin1');
  const bobRaw = (await storedRaw(app, bob.email, 2)).toString('latin1');
  t.match(aliceRaw, new RegExp(`^Received: [^]*for <${alice.email}>;`));
  t.match(bobRaw, new RegExp(`^Received: [^]*for <${bob.email}>;`));
  t.notOk(aliceRaw.includes(`${bob.email.split('@')[0]}>;`), 'the copy does not name the other recipient in its trace');
  await api('GET', '/api/v1/agent/email/1', { key: alice.apiKey });
  const bobCopy = await api('GET', '/api/v1/agent/email/2?markAsRead=false', { key: bob.apiKey });
  t.equal(bobCopy.body.isRead, false, 'reading one copy does not mark the other');
});

t.test('a Received header with the literal client IP is prepended; the rest is the sent bytes exactly', async (t) => {
  const clock = new ManualClock('2026-03-05T06:07:08Z');
  const { smtpPort, register, app } = await startApp(t, {}, { clock });
  const agent = await register();
  // Bytes that an SMTP transfer must carry unchanged: dot-stuffed lines, a lone dot inside a
  // line, 8-bit octets, trailing whitespace, an empty header value.
  const raw = Buffer.concat([
    Buffer.from('From: a@example.org\r\nSubject: exact\r\nX-Empty:\r\nX-Trailing: value   \r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\n'),
    Buffer.from('.leading dot\r\n..two dots\r\n.\tdot tab\r\nmiddle . dot\r\n'),
    Buffer.from([0xe9, 0xe8, 0x0d, 0x0a]),
    Buffer.from('last line\r\n'),
  ]);
  const nodemailerHelo = 'agentpost-tests.example';
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, ignoreTLS: true, name: nodemailerHelo });
  t.teardown(() => transport.close());
  await transport.sendMail({ envelope: { from: 'a@example.org', to: [agent.email] }, raw });
  const stored = await storedRaw(app, agent.email, 1);
  t.ok(stored.subarray(stored.length - raw.length).equals(raw), 'the bytes after our header are exactly the bytes sent');
  const trace = stored.subarray(0, stored.length - raw.length).toString('latin1');
  t.match(
    trace,
    new RegExp(
      `^Received: from ${nodemailerHelo.replaceAll('.', '\\.')} \\(\\[127\\.0\\.0\\.1\\]\\)\\r\\n` +
        `\\tby localhost \\(agentpost\\) with ESMTP id [A-Za-z0-9]+\\r\\n` +
        `\\tfor <${agent.email}>; Thu, 5 Mar 2026 06:07:08 \\+0000\\r\\n` +
        'Authentication-Results: localhost;\\r\\n(\\t[^\\r]+\\r\\n)+$',
    ),
    'one RFC 5321 trace header, literal IP in brackets (no reverse DNS), date from the clock; then our RFC 8601 verdict',
  );
});

t.test('UIDs strictly increase, also under concurrent delivery, and each UID holds its own message', async (t) => {
  const { smtpPort, register, api, app } = await startApp(t);
  const agent = await register();
  await Promise.all(Array.from({ length: 8 }, (_, i) => smtpSendRaw(smtpPort, 'a@example.org', [agent.email], simpleMessage({ subject: `parallel ${i}` }))));
  for (let i = 0; i < 3; i += 1) {
    await smtpSendRaw(smtpPort, 'a@example.org', [agent.email], simpleMessage({ subject: `serial ${i}` }));
  }
  const inbox = await inboxOf(api, agent.apiKey);
  const ids = inbox.emails.map((email: any) => Number(email.id));
  t.same(ids, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1], 'newest first, no gaps, no reuse');
  t.same(
    inbox.emails.slice(0, 3).map((email: any) => email.subject),
    ['serial 2', 'serial 1', 'serial 0'],
  );
  for (const email of inbox.emails) {
    t.match((await storedRaw(app, agent.email, email.id)).toString(), `Subject: ${email.subject}\r\n`, `UID ${email.id} holds its own raw`);
  }
  t.equal((await folderOf(app, agent.email)).uidNext, 12);
});

t.test('250 is answered only after the message is committed', async (t) => {
  const { smtpPort, register, app } = await startApp(t);
  const agent = await register();
  const sent = await smtpSendRaw(smtpPort, 'a@example.org', [agent.email], simpleMessage({ subject: 'durable' }));
  t.match(sent.response, /^250 /);
  // A second connection sees only what is committed to the database file.
  const reader = new Database(join(app.config.dataDir, 'agentpost.db'), { readonly: true });
  t.teardown(() => reader.close());
  const row = reader
    .prepare(
      `SELECT m.subject, length(r.raw) AS size FROM messages m JOIN message_raw r ON r.message_rowid = m.id
     JOIN folders f ON f.id = m.folder_id JOIN mailboxes b ON b.id = f.mailbox_id WHERE b.address = ?`,
    )
    .all(agent.email);
  t.same(row, [{ subject: 'durable', size: (await storedRaw(app, agent.email, 1)).length }]);
  t.equal(app.store.db.pragma('synchronous', { simple: true }), 2, 'the app commits with synchronous=FULL');
});

t.test('when the commit cannot happen the client gets 451 and no 250', async (t) => {
  const { smtpPort, register, api, app } = await startApp(t);
  const agent = await register();
  // Another writer holds the database's write lock past the busy timeout, so the commit fails.
  const blocker = new Database(join(app.config.dataDir, 'agentpost.db'));
  t.teardown(() => blocker.close());
  blocker.pragma('busy_timeout = 0');
  app.store.db.pragma('busy_timeout = 200');
  blocker.exec('BEGIN IMMEDIATE');
  const error = await rejection(smtpSendRaw(smtpPort, 'a@example.org', [agent.email], simpleMessage({ subject: 'lost?' })));
  blocker.exec('ROLLBACK');
  t.equal(error.responseCode, 451, 'a temporary failure: the sender keeps the message and retries');
  t.match(error.response, /^451 4\.3\.0 /);
  t.equal((await inboxOf(api, agent.apiKey)).totalMessages, 0);
  const retry = await smtpSend(smtpPort, { envelope: { from: 'a@example.org', to: [agent.email] }, raw: simpleMessage({ subject: 'retried' }) });
  t.match(retry.response, /^250 /);
  t.same(
    (await inboxOf(api, agent.apiKey)).emails.map((email: any) => email.subject),
    ['retried'],
  );
});
