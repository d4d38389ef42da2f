import { networkInterfaces } from 'node:os';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import t from 'tap';
import { newUuid } from '../src/core/ids.js';
import { hashKey, newAccessKey } from '../src/core/keys.js';
import { startApp, type TestApp } from './helpers/app.js';

interface Submit {
  user: string;
  pass: string;
  host?: string;
  authMethod?: 'PLAIN' | 'LOGIN';
}

const submit = async (port: number, login: Submit | null, message: Mail.Options) => {
  const transport = nodemailer.createTransport({
    host: login?.host ?? '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    ...(login && { auth: { user: login.user, pass: login.pass }, authMethod: login.authMethod ?? 'PLAIN' }),
  });
  try {
    return await transport.sendMail(message);
  } finally {
    transport.close();
  }
};

/** The error a refused submission rejects with; a success fails the test. */
const refusal = (promise: Promise<unknown>): Promise<any> =>
  promise.then(
    () => {
      throw new Error('expected the submission to be refused');
    },
    (error: unknown) => error,
  );

const ready = async (app: TestApp, credits: number) => {
  const agent = await app.register();
  if (credits > 0) await app.app.services.accounts.addCredits(agent.email, credits);
  await app.app.services.sending.setState(agent.email, 'standard');
  return agent;
};

const credits = async (app: TestApp, key: string) => (await app.api('GET', '/api/v1/agent/balance', { key })).body.credits;

t.test('AUTH PLAIN and LOGIN with the mailbox address and full key; the same send path', async (t) => {
  const app = await startApp(t);
  const sender = await ready(app, 10);
  const local = await ready(app, 0);
  const info = await submit(
    app.submissionPort,
    { user: sender.email, pass: sender.apiKey },
    {
      from: { name: 'Sender', address: sender.email },
      to: [local.email, 'far@example.com'],
      bcc: 'secret@example.net',
      subject: 'by submission',
      text: 'hello over SMTP',
      attachments: [{ filename: 'a.txt', content: 'attached' }],
    },
  );
  t.match(info.response, /^250 2\.0\.0 Ok: accepted as [0-9a-f-]{36}$/);
  const id = info.response.split(' ').pop()!;
  t.equal(await credits(app, sender.apiKey), 7);
  const detail = await app.api('GET', `/api/v1/agent/outbound/${id}`, { key: sender.apiKey });
  t.match(detail.body, { via: 'smtp', subject: 'by submission', messageId: info.messageId, sentCopySaved: true });
  t.same(
    detail.body.recipients.map((r: any) => [r.email, r.kind, r.status]),
    [
      [local.email, 'to', 'delivered'],
      ['far@example.com', 'to', 'queued'],
      ['secret@example.net', 'bcc', 'queued'],
    ],
  );
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: local.apiKey });
  t.match(inbox.body.emails[0], { subject: 'by submission', messageId: info.messageId, from: { email: sender.email } });
  const sent = await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: sender.apiKey });
  t.equal(sent.body.totalMessages, 1);
  const raw = (await app.app.store.submissions.rawOf(id))!.toString();
  t.notMatch(raw, /secret@example\.net/, 'Bcc is not in what recipients get');

  const again = await submit(
    app.submissionPort,
    { user: sender.email, pass: sender.apiKey, authMethod: 'LOGIN' },
    {
      from: sender.email,
      to: 'one@example.com',
      subject: 'login method',
      text: 'x',
    },
  );
  t.match(again.response, /^250 /);
  t.equal(await credits(app, sender.apiKey), 6);
});

t.test('a resent message (same Message-ID, same bytes) is accepted once and charged once', async (t) => {
  const app = await startApp(t);
  const sender = await ready(app, 10);
  const raw = `From: ${sender.email}\r\nTo: a@example.com\r\nSubject: retry\r\nMessage-ID: <retry-1@client.example>\r\nDate: Mon, 05 Jan 2026 10:00:00 +0000\r\n\r\nbody\r\n`;
  const login = { user: sender.email, pass: sender.apiKey };
  const first = await submit(app.submissionPort, login, { envelope: { from: sender.email, to: ['a@example.com'] }, raw });
  const second = await submit(app.submissionPort, login, { envelope: { from: sender.email, to: ['a@example.com'] }, raw });
  t.equal(second.response.split(' ')[5], first.response.split(' ')[5], 'the same submission id');
  t.match(second.response, /already accepted/);
  t.equal(await credits(app, sender.apiKey), 9);
  const changed = submit(app.submissionPort, login, { envelope: { from: sender.email, to: ['a@example.com'] }, raw: raw.replace('body', 'other body') });
  t.match(await refusal(changed), { responseCode: 550, response: /5\.7\.0 .*different message/ });
});

t.test('Message-ID and Date are added when missing; Bcc header is stripped', async (t) => {
  const app = await startApp(t);
  const sender = await ready(app, 10);
  const raw = `From: ${sender.email}\r\nTo: a@example.com\r\nBcc: hidden@example.org\r\nSubject: bare\r\n\r\nbody\r\n`;
  const info = await submit(
    app.submissionPort,
    { user: sender.email, pass: sender.apiKey },
    { envelope: { from: sender.email, to: ['a@example.com', 'hidden@example.org'] }, raw },
  );
  const id = info.response.split(' ').pop()!;
  const stored = (await app.app.store.submissions.rawOf(id))!.toString();
  t.match(stored, /^Message-ID: <[0-9a-f-]{36}@agents\.localhost>\r\nDate: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000\r\n/);
  t.notMatch(stored, /hidden@example\.org/);
  const detail = await app.api('GET', `/api/v1/agent/outbound/${id}`, { key: sender.apiKey });
  t.same(
    detail.body.recipients.map((r: any) => [r.email, r.kind]),
    [
      ['a@example.com', 'to'],
      ['hidden@example.org', 'bcc'],
    ],
  );
});

t.test('AUTH and policy refusals', async (t) => {
  const app = await startApp(t);
  const sender = await ready(app, 1);
  const other = await ready(app, 0);
  const message = { from: sender.email, to: 'a@example.com', subject: 's', text: 'x' };
  t.match(await refusal(submit(app.submissionPort, { user: sender.email, pass: other.apiKey }, message)), { responseCode: 535 }, "another account's key");
  t.match(await refusal(submit(app.submissionPort, { user: sender.email, pass: `svc_${'0'.repeat(64)}` }, message)), { responseCode: 535 }, 'unknown key');
  const access = newAccessKey();
  await app.app.store.keys.insert({
    id: newUuid(),
    accountId: sender.userId,
    kind: 'access',
    keyHash: hashKey(access),
    status: 'active',
    createdAt: Date.now(),
    expiresAt: null,
    revokedAt: null,
  });
  t.match(
    await refusal(submit(app.submissionPort, { user: sender.email, pass: access }, message)),
    { responseCode: 535, response: /limited access keys/ },
    'an access key',
  );
  t.match(await refusal(submit(app.submissionPort, null, message)), { responseCode: 530 }, 'no AUTH');
  const login = { user: sender.email, pass: sender.apiKey };
  t.match(
    await refusal(submit(app.submissionPort, login, { ...message, from: other.email })),
    { responseCode: 550, response: /5\.7\.1/ },
    'From of another account',
  );
  t.match(
    await refusal(submit(app.submissionPort, login, { ...message, to: ['a@example.com', 'b@example.com'] })),
    { responseCode: 554, response: /credit/ },
    'not enough credits',
  );
  t.match(await refusal(submit(app.submissionPort, login, { ...message, subject: 's'.repeat(999) })), { responseCode: 550, response: /subject/ });
  t.match(
    await refusal(submit(app.submissionPort, login, { ...message, text: undefined, html: undefined, attachments: [{ filename: 'a.txt', content: 'x' }] })),
    { responseCode: 550, response: /body/ },
  );
  t.match(await refusal(submit(app.submissionPort, login, { ...message, to: 'user@localhost' })), { responseCode: 553 }, 'invalid RCPT');
  for (const literal of ['x@[127.0.0.1]', 'x@10.0.0.1', 'x@127.1']) {
    const raw = `From: ${sender.email}\r\nTo: a@example.com\r\nSubject: s\r\n\r\nbody\r\n`;
    t.match(
      await refusal(submit(app.submissionPort, login, { envelope: { from: sender.email, to: [literal] }, raw })),
      { responseCode: 553, response: /5\.1\.3/ },
      `RCPT TO:<${literal}>`,
    );
  }
  t.match(
    await refusal(
      submit(app.submissionPort, login, {
        envelope: { from: sender.email, to: ['x@foo.localhost'] },
        raw: `From: ${sender.email}\r\nTo: x@foo.localhost\r\nSubject: s\r\n\r\nbody\r\n`,
      }),
    ),
    { responseCode: 550, response: /foo\.localhost names this host/ },
    'a name under .localhost (RFC 6761)',
  );
  t.equal(await credits(app, sender.apiKey), 1, 'nothing charged');
  t.same((await app.api('GET', '/api/v1/agent/outbound', { key: sender.apiKey })).body.submissions, []);
  await app.app.services.sending.setState(sender.email, 'paused');
  t.match(await refusal(submit(app.submissionPort, login, message)), { responseCode: 550, response: /paused/ });
});

t.test('Sender, Resent-From and Resent-Sender name only the authenticated mailbox; From names no one else', async (t) => {
  // Header limits an operator raised: a field far down a long header is still checked.
  const app = await startApp(t, { smtp: { maxHeaderBytes: 1024 * 1024 } });
  const sender = await ready(app, 5);
  const other = await ready(app, 0);
  const login = { user: sender.email, pass: sender.apiKey };
  const envelope = { from: sender.email, to: ['a@example.com'] };
  const message = (extra: string, from = sender.email) =>
    `From: ${from}\r\nTo: a@example.com\r\n${extra}Subject: s\r\nMessage-ID: <${Math.random()}@client.example>\r\n\r\nbody\r\n`;
  const refused = async (extra: string, field: RegExp, what: string, from?: string) =>
    t.match(await refusal(submit(app.submissionPort, login, { envelope, raw: message(extra, from) })), { responseCode: 550, response: field }, what);
  await refused(`Sender: ${other.email}\r\n`, /5\.7\.1 .*Sender header/, 'Sender naming another tenant');
  await refused(`Sender: "Me" <${sender.email}>\r\nSender: ${other.email}\r\n`, /more than one Sender/, 'two Sender headers');
  await refused(`Sender: group: ${sender.email}, ${other.email};\r\n`, /Sender header/, 'a group naming another mailbox');
  await refused(`Resent-From: ${other.email}\r\n`, /Resent-From header/, 'Resent-From');
  await refused(`Resent-Sender: ${other.email}\r\n`, /Resent-Sender header/, 'Resent-Sender');
  await refused('', /From header/, 'a second mailbox in From', `${sender.email}, ${other.email}`);
  const padding = `X-Pad: ${Array.from({ length: 4_500 }, () => 'p'.repeat(70)).join('\r\n ')}\r\n`;
  await refused(`${padding}Sender: ${other.email}\r\n`, /Sender header/, 'a Sender past 300 KB of header');
  t.equal(await credits(app, sender.apiKey), 5, 'nothing charged');
  const own = await submit(app.submissionPort, login, { envelope, raw: message(`Sender: "Bot" <${sender.email.toUpperCase()}>\r\n`) });
  const id = own.response.split(' ').pop()!;
  t.match(
    (await app.app.store.submissions.rawOf(id))!.toString(),
    new RegExp(`Sender: "Bot" <${sender.email.toUpperCase()}>`),
    'its own address passes unchanged',
  );
});

t.test('the 51st RCPT TO is refused with 452; the first 50 go out', async (t) => {
  const app = await startApp(t);
  const sender = await ready(app, 60);
  const to = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`);
  const info = await submit(app.submissionPort, { user: sender.email, pass: sender.apiKey }, { from: sender.email, to, subject: 's', text: 'x' });
  t.same(info.rejected, ['r50@example.com']);
  t.match((info as any).rejectedErrors?.[0], { responseCode: 452 });
  t.equal(await credits(app, sender.apiKey), 10);
});

const externalIPv4 = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

t.test('AUTH from a non-loopback address without TLS is refused unless allowed', { skip: externalIPv4 ? false : 'no non-loopback interface' }, async (t) => {
  const host = externalIPv4!;
  const strict = await startApp(t, { submission: { host: '0.0.0.0' } });
  const agent = await ready(strict, 5);
  const message = { from: agent.email, to: 'a@example.com', subject: 's', text: 'x' };
  t.match(await refusal(submit(strict.submissionPort, { user: agent.email, pass: agent.apiKey, host }, message)), { responseCode: 538 });
  t.match((await submit(strict.submissionPort, { user: agent.email, pass: agent.apiKey }, message)).response, /^250 /, 'loopback is fine');
  const relaxed = await startApp(t, { submission: { host: '0.0.0.0', allowInsecureAuth: true } });
  const other = await ready(relaxed, 5);
  const info = await submit(relaxed.submissionPort, { user: other.email, pass: other.apiKey, host }, { ...message, from: other.email });
  t.match(info.response, /^250 /);
});
