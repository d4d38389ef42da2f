import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import t, { type Test } from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { emlFixtures, fixture, storedRaw } from './helpers/mail.js';
import { smtpSend, smtpSendRaw } from './helpers/smtp.js';

/**
 * Every fixture in test/fixtures goes through our MX with nodemailer and is read back over
 * REST: the decoded fields must be right and the stored raw must be the sent bytes exactly.
 */

interface Delivered {
  id: string;
  raw: Buffer;
  listed: any;
  read: any;
}

const send = async (t: Test, harness: TestApp, to: string, key: string, name: string): Promise<Delivered> => {
  const raw = fixture(name);
  const sent = await smtpSendRaw(harness.smtpPort, 'sender@example.org', [to], raw);
  t.match(sent.response, /^250 /, `${name} accepted`);
  const list = await harness.api('GET', '/api/v1/agent/inbox?limit=1', { key });
  t.equal(list.status, 200);
  const listed = list.body.emails[0];
  const read = await harness.api('GET', `/api/v1/agent/email/${listed.id}`, { key });
  t.equal(read.status, 200, `${name} reads`);
  const stored = await storedRaw(harness.app, to, listed.id);
  t.ok(stored.subarray(stored.length - raw.length).equals(raw), `${name}: stored raw ends with the exact bytes sent`);
  t.match(
    stored.subarray(0, stored.length - raw.length).toString('latin1'),
    /^Received: [\s\S]*\r\nAuthentication-Results: [\s\S]*\r\n$/,
    'only our Received and Authentication-Results fields precede them',
  );
  return { id: listed.id, raw, listed, read: read.body };
};

const base64 = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64');
const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

t.test('MIME fixtures round-trip from SMTP to REST', async (t) => {
  const harness = await startApp(t);
  const agent = await harness.register();
  const deliver = (t: Test, name: string) => send(t, harness, agent.email, agent.apiKey, name);

  t.test('multipart/alternative: text and html, display names, cc, date', async (t) => {
    const { read, listed } = await deliver(t, 'alternative.eml');
    t.match(read, {
      subject: 'Quarterly numbers',
      messageId: '<alt-0001@example.org>',
      from: { name: 'Alice Example', email: 'alice@example.org' },
      date: '2026-03-02T10:15:00.000Z',
      folder: 'INBOX',
      encryptedBody: false,
      isRead: true,
      inReplyTo: null,
    });
    t.same(read.to, [{ name: 'Agent One', email: 'agent-one@agents.localhost' }, { email: 'bob@example.net' }]);
    t.same(read.cc, [{ name: 'Carol C.', email: 'carol@example.com' }, { email: 'dave@example.com' }]);
    t.equal(read.text, 'Hello,\n\nThe numbers are in the table below.\n.A line that starts with a dot survives SMTP dot-stuffing.');
    t.equal(read.body, read.text);
    t.equal(read.html, '<html><body><p>Hello,</p><p>The numbers are in the <b>table</b> below.</p></body></html>');
    t.same(read.attachments, []);
    t.same(read.references, []);
    t.equal(listed.preview, 'Hello, The numbers are in the table below. .A line that starts with a dot survives SMTP dot-stuffing.');
    t.equal(listed.isRead, false, 'listed before it was read');
  });

  t.test('multipart/mixed: binary and hostile-named attachments come back byte for byte, as data', async (t) => {
    const { read, listed } = await deliver(t, 'attachments.eml');
    t.equal(read.text, 'See the three attachments.');
    t.equal(read.html, null);
    t.same(read.attachments, [
      { filename: 'bytes.bin', name: 'bytes.bin', contentType: 'application/octet-stream', size: 256, content: base64(allBytes), encoding: 'base64' },
      {
        filename: '../../etc/passwd',
        name: '../../etc/passwd',
        contentType: 'text/plain',
        size: 32,
        content: base64('root:x:0:0:root:/root:/bin/bash\n'),
        encoding: 'base64',
      },
      {
        filename: '<script>alert(1)</script>.html',
        name: '<script>alert(1)</script>.html',
        contentType: 'text/html',
        size: 59,
        content: base64('<script>document.location="https://evil.example/"</script>\n'),
        encoding: 'base64',
      },
    ]);
    t.ok(Buffer.from(read.attachments[0].content, 'base64').equals(allBytes), 'all 256 byte values survive');
    t.same(
      listed.attachments.map((a: any) => [a.filename, a.size, a.content]),
      [
        ['bytes.bin', 256, undefined],
        ['../../etc/passwd', 32, undefined],
        ['<script>alert(1)</script>.html', 59, undefined],
      ],
      'the list carries attachment metadata without content',
    );
    const files = readdirSync(harness.app.config.dataDir, { recursive: true }).map(String).sort();
    t.same(
      files.filter((file) => !/^(agentpost(\.search)?\.db(-wal|-shm)?|secret\.key|session\.key|spool)$/.test(file)),
      [],
      'no attachment was written as a file (secret.key seals TOTP seeds, session.key signs owner sessions, the spool is empty)',
    );
  });

  t.test('ISO-8859-1 quoted-printable body and RFC 2047 Q-encoded subject and names', async (t) => {
    const { read } = await deliver(t, 'latin1-qp.eml');
    t.equal(read.subject, 'Café crème brûlée');
    t.same(read.from, { name: 'François Déjà', email: 'francois@example.fr' });
    t.same(read.to, [{ name: 'Jürgen Müller', email: 'agent@agents.localhost' }]);
    t.equal(read.text, 'Voilà la crème brûlée: 5 £, 20°C, ½ portion.\nUne ligne très longue qui est coupée par un saut de ligne doux et qui continue ici.\n');
    t.equal(read.date, '2026-03-04T11:30:00.000Z');
  });

  t.test('windows-1252 8bit body; adjacent encoded-words join without the space between them', async (t) => {
    const { read } = await deliver(t, 'windows-1252.eml');
    t.equal(read.subject, '“Quoted” price €5');
    t.same(read.from, { name: 'Zoë “Z” Smith', email: 'zoe@example.com' });
    t.equal(read.text, '“Smart quotes” cost € 5 – that’s all…\n');
  });

  t.test('ISO-2022-JP body, B-encoded subject and sender', async (t) => {
    const { read } = await deliver(t, 'iso-2022-jp.eml');
    t.equal(read.subject, '会議の議題について');
    t.same(read.from, { name: '山田太郎', email: 'yamada@example.jp' });
    t.equal(read.text, '山田です。\n明日の会議の議題をお送りします。\n');
  });

  t.test('Shift_JIS base64 body with half-width katakana', async (t) => {
    const { read } = await deliver(t, 'shift-jis.eml');
    t.equal(read.subject, 'こんにちは世界');
    t.same(read.from, { name: '佐藤花子', email: 'sato@example.jp' });
    t.equal(read.text, 'こんにちは、世界。\n半角ｶﾀｶﾅもあります。\n');
  });

  t.test('a malformed message (garbage header lines, broken boundaries, no From/Date/Message-ID) is kept and readable', async (t) => {
    const { read, listed } = await deliver(t, 'malformed.eml');
    t.equal(read.subject, 'Malformed but still mail');
    t.notOk('from' in read, 'no From header, no from');
    t.notOk('messageId' in read);
    t.notOk('date' in read);
    t.same(read.to, []);
    t.equal(read.text, 'Second part; the closing boundary never comes.\n');
    t.equal(listed.subject, 'Malformed but still mail');
  });

  t.test('a hostile HTML body and header values are returned as inert data, exactly as sent', async (t) => {
    const { read, raw } = await deliver(t, 'hostile-html.eml');
    const sentHtml = raw.toString('utf8').split('\r\n\r\n').slice(1).join('\r\n\r\n').replaceAll('\r\n', '\n');
    t.equal(read.html, sentHtml, 'the HTML is neither sanitized nor rewritten');
    t.equal(read.subject, '<script>alert("subject")</script>');
    t.same(read.from, { name: '<img src=x onerror=alert(1)>', email: 'evil@example.com' });
    const response = await fetch(`${harness.baseUrl}/api/v1/agent/email/${read.id}`, { headers: { authorization: `Bearer ${agent.apiKey}` } });
    t.match(response.headers.get('content-type'), /^application\/json/, 'served as JSON, never as HTML');
    t.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const text = await response.text();
    t.ok(text.includes('<script>fetch('), 'the JSON string carries the markup as characters');
  });

  t.test('S/MIME enveloped-data: encryptedBody, the p7m comes back byte for byte', async (t) => {
    const { read, listed, raw } = await deliver(t, 'smime-encrypted.eml');
    t.equal(read.encryptedBody, true);
    t.equal(listed.encryptedBody, true);
    t.equal(read.attachments.length, 1);
    t.match(read.attachments[0], { filename: 'smime.p7m', contentType: 'application/pkcs7-mime', size: 300 });
    const sentBase64 = raw.toString('latin1').split('\r\n\r\n')[1].replace(/\s+/g, '');
    t.equal(read.attachments[0].content, sentBase64);
  });

  t.test('PGP/MIME multipart/encrypted: encryptedBody', async (t) => {
    const { read, listed } = await deliver(t, 'pgp-encrypted.eml');
    t.equal(read.encryptedBody, true);
    t.equal(listed.encryptedBody, true);
    t.equal(Buffer.from(read.attachments[0].content, 'base64').toString(), 'Version: 1\r\n');
    t.match(Buffer.from(read.attachments[1].content, 'base64').toString(), /^-----BEGIN PGP MESSAGE-----\r\n/);
  });

  t.test('In-Reply-To and a folded References header', async (t) => {
    const { read } = await deliver(t, 'reply.eml');
    t.equal(read.messageId, '<reply-0002@example.net>');
    t.equal(read.inReplyTo, '<alt-0001@example.org>');
    t.same(read.references, ['<root-0000@example.org>', '<alt-0001@example.org>']);
  });

  t.test('every fixture in the folder is covered above', async (t) => {
    const names = emlFixtures().sort();
    t.equal(names.length, 11);
    const list = await harness.api('GET', '/api/v1/agent/inbox?limit=100', { key: agent.apiKey });
    t.equal(list.body.totalMessages, names.length);
  });
});

t.test('remote content in a message is never fetched, by listing or by reading', async (t) => {
  let hits = 0;
  const tracker = createServer((_request, response) => {
    hits += 1;
    response.end('gif');
  });
  await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => tracker.close());
  const url = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
  const harness = await startApp(t);
  const agent = await harness.register();
  const html = `<img src="${url}/pixel.gif"><link rel="stylesheet" href="${url}/style.css"><iframe src="${url}/frame"></iframe>`;
  await smtpSend(harness.smtpPort, {
    from: 'tracker@example.org',
    to: agent.email,
    subject: 'pixels',
    html,
    attachments: [{ filename: 'remote.txt', content: `${url}/attachment` }],
  });
  const list = await harness.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  const read = await harness.api('GET', `/api/v1/agent/email/${list.body.emails[0].id}`, { key: agent.apiKey });
  t.equal(read.body.html, html);
  t.equal(hits, 0, 'the tracker was never contacted');
});

t.test('an unreadable Date header gives no date, not the time the message was parsed', async (t) => {
  const harness = await startApp(t);
  const agent = await harness.register();
  const raw = 'From: a@example.org\r\nSubject: when?\r\nDate: sometime next week\r\n\r\nbody\r\n';
  await smtpSendRaw(harness.smtpPort, 'a@example.org', [agent.email], raw);
  const list = await harness.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.notOk('date' in list.body.emails[0], 'no date in the list');
  const read = await harness.api('GET', '/api/v1/agent/email/1', { key: agent.apiKey });
  t.notOk('date' in read.body, 'no date on read');
  t.equal(read.body.subject, 'when?');
});
