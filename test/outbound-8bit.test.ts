import { generateKeyPairSync } from 'node:crypto';
import { simpleParser } from 'mailparser';
import t from 'tap';
import { submissionTransport } from './helpers/smtp.js';
import type { Route } from '../src/core/outbound.js';
import { toSevenBit, transportNeedsOf } from '../src/mime/seven-bit.js';
import { SmtpHandoff } from '../src/smtp/outbound.js';
import { funded } from './helpers/agents.js';
import { startApp } from './helpers/app.js';
import { verifyDkim } from './helpers/dkim.js';
import { startSink } from './helpers/sink.js';

const crlf = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8');

const UTF8_SUBJECT = crlf(`From: a@agents.localhost
To: x@remote.test
Subject: Grüße aus Köln
Message-ID: <1@agents.localhost>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

Schöne Grüße, Jörg.
`);

const EIGHT_BIT_BODY = crlf(`From: a@agents.localhost
To: x@remote.test
Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=
Message-ID: <2@agents.localhost>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"

preamble
--b1
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

Schöne Grüße, Jörg. ${'Zeile mit Umlauten äöü '.repeat(6)}
trailing space 
--b1
Content-Type: text/plain; charset=us-ascii

plain ascii part
--b1
Content-Type: application/octet-stream
Content-Transfer-Encoding: binary

\u00ff\u00fe binary-ish
--b1--
`);

const ASCII = crlf('From: a@agents.localhost\nTo: x@remote.test\nSubject: hi\nMessage-ID: <3@agents.localhost>\n\nhello\n');

const route = (port: number): Route => ({ kind: 'mx', hosts: [{ host: '127.0.0.1', servername: 'mx.remote.test' }], port, secure: false, key: `mx:${port}` });
const handoff = (t: any) => {
  const h = new SmtpHandoff({ heloName: 'agents.localhost', timeoutMs: 5000, maxIdlePerHost: 0, idleMs: 10_000 });
  t.teardown(() => h.close());
  return h;
};
const highOctets = (raw: Buffer): number => raw.filter((octet) => octet > 0x7f).length;

t.test('what a message needs: 8-bit bodies and UTF-8 header fields, told apart', async (t) => {
  t.same(transportNeedsOf(ASCII), { eightBit: false, utf8Headers: false });
  t.same(transportNeedsOf(UTF8_SUBJECT), { eightBit: true, utf8Headers: true });
  t.same(transportNeedsOf(EIGHT_BIT_BODY), { eightBit: true, utf8Headers: false });
});

t.test('7-bit conversion: QP for text, base64 otherwise, 7bit containers, the same content', async (t) => {
  const converted = toSevenBit(EIGHT_BIT_BODY);
  t.equal(highOctets(converted), 0, 'no octet over 127');
  t.ok(
    converted
      .toString('latin1')
      .split('\r\n')
      .every((line) => line.length <= 76),
    'no line over 76 characters (RFC 2045 6.7)',
  );
  t.match(converted.toString('latin1'), /Content-Type: text\/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nSch=C3=B6ne/);
  t.match(converted.toString('latin1'), /trailing space=20\r\n--b1/, 'a space before a line end is encoded');
  t.match(converted.toString('latin1'), /Content-Type: text\/plain; charset=us-ascii\r\n\r\nplain ascii part\r\n/, 'a 7-bit part keeps its bytes');
  t.match(converted.toString('latin1'), /Content-Transfer-Encoding: base64\r\n\r\nw7/, 'binary becomes base64');
  const [before, after] = await Promise.all([simpleParser(EIGHT_BIT_BODY), simpleParser(converted)]);
  t.equal(after.text, before.text, 'the text reads the same');
  t.same(
    after.attachments.map((a) => a.content),
    before.attachments.map((a) => a.content),
    'the attachment bytes are the same',
  );
  t.equal(toSevenBit(ASCII).toString(), ASCII.toString(), 'a 7-bit message is left alone');
});

t.test('a server with 8BITMIME and SMTPUTF8 is told BODY=8BITMIME and SMTPUTF8; the bytes go as they are', async (t) => {
  const sink = await startSink(t);
  const results = await handoff(t).deliver({ route: route(sink.port), from: 'b@agents.localhost', recipients: ['ok@remote.test'], raw: UTF8_SUBJECT });
  t.match(results, [{ status: 'delivered' }]);
  t.same(sink.messages[0].mailFromArgs, { BODY: '8BITMIME', SMTPUTF8: true });
  t.same(sink.messages[0].raw, UTF8_SUBJECT);
  await handoff(t).deliver({ route: route(sink.port), from: 'b@agents.localhost', recipients: ['ok@remote.test'], raw: ASCII });
  t.same(sink.messages[1].mailFromArgs, {}, 'a 7-bit message declares nothing');
});

t.test('no 8BITMIME: 8-bit bodies go out converted, signed after the conversion', async (t) => {
  const sink = await startSink(t, { hide8BITMIME: true });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const results = await handoff(t).deliver({
    route: route(sink.port),
    from: 'b@agents.localhost',
    recipients: ['ok@remote.test'],
    raw: EIGHT_BIT_BODY,
    dkim: { domain: 'agents.localhost', selector: 's1', privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
  });
  t.match(results, [{ status: 'delivered' }]);
  const [received] = sink.messages;
  t.same(received.mailFromArgs, {}, 'no BODY=8BITMIME to a server that did not offer it');
  t.equal(highOctets(received.raw), 0, 'only 7-bit octets on the wire');
  t.ok(verifyDkim(received.raw.toString(), publicKey), 'the DKIM signature covers the converted bytes');
  t.equal((await simpleParser(received.raw)).text, (await simpleParser(EIGHT_BIT_BODY)).text);
});

t.test('no SMTPUTF8: a message with UTF-8 header fields fails each recipient with the reason, nothing is sent', async (t) => {
  const sink = await startSink(t, { hideSMTPUTF8: true });
  const results = await handoff(t).deliver({
    route: route(sink.port),
    from: 'b@agents.localhost',
    recipients: ['ok@remote.test', 'ok2@remote.test'],
    raw: UTF8_SUBJECT,
  });
  t.match(results, [
    { recipient: 'ok@remote.test', status: 'failed', smtpCode: 554, enhancedCode: '5.6.9', diagnostic: /does not offer SMTPUTF8.*UTF-8 header fields/ },
    { recipient: 'ok2@remote.test', status: 'failed', enhancedCode: '5.6.9' },
  ]);
  t.equal(sink.messages.length, 0);
});

t.test('submitted raw UTF-8 mail reaches the next hop declared (BODY=8BITMIME SMTPUTF8)', async (t) => {
  const sink = await startSink(t);
  const app = await startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } });
  const agent = await funded(app, 10);
  const raw = Buffer.from(UTF8_SUBJECT.toString().replace('From: a@agents.localhost', `From: ${agent.email}`));
  const transport = submissionTransport(t, app.submissionPort, agent.email, agent.apiKey);
  await transport.sendMail({ envelope: { from: agent.email, to: ['ok@remote.test'] }, raw });
  await app.app.queues.delivery.runOnce();
  await app.app.queues.delivery.idle();
  t.equal(sink.messages.length, 1);
  t.same(sink.messages[0].mailFromArgs, { BODY: '8BITMIME', SMTPUTF8: true });
  t.match(sink.messages[0].raw.toString('utf8'), /Subject: Grüße aus Köln\r\n/);
});
