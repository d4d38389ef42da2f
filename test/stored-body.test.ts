// What a parse stores of a message (src/core/stored-message.ts, built in src/mime/): the MIME
// tree with its offsets and ENVELOPE, the attachments' places, and, when the full parse fails
// or is not tried, the top-level header fields and a bounded text instead of empty fields.
import t from 'tap';
import { parseMessage } from '../src/mime/parse.js';
import { FALLBACK_TEXT_CHARS, textOfHtml } from '../src/mime/fallback.js';
import { decodeBody, decodeQuotedPrintable } from '../src/mime/transfer-encoding.js';
import { withPrefix } from '../src/mime/structure.js';
import { packText, unpackText } from '../src/core/packed-text.js';
import { packStructure, unpackStructure } from '../src/store/body-encoding.js';
import { deepMime, hugeHeaderLine, manyHeaders, manyParts, nestedHtmlBomb } from './helpers/hostile.js';
import { fixture } from './helpers/mail.js';

const kept = { subject: true, from: { name: 'Mallory', email: 'mallory@example.net' } };

t.test('over the structure budget: the top-level header is kept, the text bounded, the reason stored', async (t) => {
  for (const message of [deepMime(), manyParts(), manyHeaders(), hugeHeaderLine()]) {
    const parsed = await parseMessage(message.raw);
    t.equal(parsed.subject, message.subject, `${message.name}: subject`);
    t.same(parsed.from, kept.from, `${message.name}: from`);
    t.same(parsed.to, [{ email: 'victim@example.org' }], `${message.name}: to`);
    t.equal(parsed.messageId, `<${message.name}@example.net>`, `${message.name}: message id`);
    t.equal(parsed.date, Date.UTC(2026, 10, 23, 10), `${message.name}: date`);
    t.equal(parsed.body?.content.fallback, 'structure', `${message.name}: says why`);
    t.ok((parsed.text ?? '').length <= FALLBACK_TEXT_CHARS, `${message.name}: bounded text`);
    t.notOk((parsed.text ?? '').includes('X-Filler'), `${message.name}: the text is not the raw message`);
  }
  const parts = await parseMessage(manyParts().raw);
  t.match(parts.text, /^part 0\npart 1\n/, 'the inline text parts within the budget, joined');
  t.ok(parts.body?.structure.root.truncated, 'the multipart says the budget cut it');
});

t.test('a full parse that fails keeps the top-level header and says so (error)', async (t) => {
  // One part's header is over mailparser's 1 MB limit; the message's own header is fine.
  const raw = Buffer.from(
    [
      'From: Mallory <mallory@example.net>',
      'Subject: part header bomb',
      'Content-Type: multipart/mixed; boundary="x"',
      '',
      '--x',
      'Content-Type: text/plain',
      '',
      'first part',
      '--x',
      `X-Big: ${'b'.repeat(1_200_000)}`,
      'Content-Type: text/plain',
      '',
      'second',
      '--x--',
      '',
    ].join('\r\n'),
  );
  const parsed = await parseMessage(raw);
  t.equal(parsed.subject, 'part header bomb');
  t.equal(parsed.from?.email, 'mallory@example.net');
  t.equal(parsed.body?.content.fallback, 'error');
  t.equal(parsed.text, 'first part\nsecond');
});

t.test('the nested-HTML bomb: html-to-text is not run on it (size budget), its text comes in linear time', async (t) => {
  const parsed = await parseMessage(nestedHtmlBomb().raw);
  t.equal(parsed.subject, 'hostile nested-html');
  t.equal(parsed.text, 'deep');
  t.equal(parsed.html?.length, 2_200_031);
  t.equal(parsed.body?.content.fallback, null, 'not a fallback: the full parse ran, with the linear converter');
  t.equal(textOfHtml('<p>a &amp; b</p><script>x<y</script><style>p{}</style>c&#65;&#x42;'), 'a & b\ncAB');
  t.equal(textOfHtml('<<<<<'), '', 'unclosed tags end the text');
});

t.test('attachments are located in the raw bytes: decoding that range gives their content', async (t) => {
  const raw = fixture('attachments.eml');
  const parsed = await parseMessage(raw);
  const attachments = parsed.body?.content.attachments ?? [];
  t.ok(attachments.length >= 3);
  for (const attachment of attachments) {
    const bytes = decodeBody(raw.subarray(attachment.bodyStart, attachment.end), attachment.encoding);
    t.equal(bytes.length, attachment.size, `${attachment.filename}: size is the decoded size`);
  }
  const shifted = withPrefix(parsed.body!, 10);
  t.equal(shifted.content.attachments[0].bodyStart, attachments[0].bodyStart + 10, 'a prefix moves every offset');
  t.equal(shifted.structure.root.headerStart, 0, 'the root header starts with the prefix');
});

t.test('the stored structure has what BODYSTRUCTURE and ENVELOPE need (RFC 3501 section 7.4.2)', async (t) => {
  const raw = Buffer.from(
    [
      'From: "A" <a@example.org>',
      'To: team: b@example.org, c@example.org;',
      'Subject: =?utf-8?q?caf=C3=A9?=',
      'Message-ID: <m1@example.org>',
      'Content-Type: multipart/mixed; boundary="o"',
      '',
      '--o',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Language: en, fr',
      '',
      'line one',
      'line two',
      '--o',
      'Content-Type: message/rfc822',
      'Content-Disposition: attachment; filename="fwd.eml"',
      '',
      'From: inner@example.org',
      'Subject: inner',
      '',
      'inner body',
      '--o--',
      '',
    ].join('\r\n'),
  );
  const { body } = await parseMessage(raw);
  const { envelope, root } = body!.structure;
  t.equal(envelope.subject, '=?utf-8?q?caf=C3=A9?=', 'header values as on the wire');
  t.same(envelope.sender, envelope.from, 'sender defaults to from');
  t.same(
    envelope.to,
    [
      { name: null, adl: null, mailbox: 'team', host: null },
      { name: null, adl: null, mailbox: 'b', host: 'example.org' },
      { name: null, adl: null, mailbox: 'c', host: 'example.org' },
      { name: null, adl: null, mailbox: null, host: null },
    ],
    'a group with its start and end markers',
  );
  t.same(
    root.children.map((part) => part.section),
    ['1', '2'],
  );
  const [text, message] = root.children;
  t.same([text.type, text.subtype, text.lines, text.language], ['text', 'plain', 1, ['en', 'fr']], 'one line end: the lines Dovecot counts');
  t.equal(raw.subarray(text.bodyStart, text.end).toString(), 'line one\r\nline two');
  t.equal(message.envelope?.subject, 'inner');
  t.equal(message.children[0].section, '2', 'the carried message takes the part number');
  t.same(message.disposition, { type: 'attachment', params: [['filename', 'fwd.eml']] });
  t.same(body!.content.attachments, [], 'a carried message is looked into, as mailparser does');
});

t.test('quoted-printable decoding (RFC 2045 section 6.7)', async (t) => {
  t.equal(decodeQuotedPrintable(Buffer.from('a=3Db=\r\nc=  \nd=ZZ=4')).toString('latin1'), 'a=bcd=ZZ=4');
});

t.test('the stored form is compact and reads back exactly (src/store/body-encoding.ts, src/core/packed-text.ts)', async (t) => {
  for (const raw of [fixture('attachments.eml'), fixture('reply.eml'), deepMime().raw]) {
    const { body } = await parseMessage(raw);
    const packed = packStructure(body!.structure);
    t.same(unpackStructure(packed), body!.structure, 'the structure round-trips');
    t.ok(packed.length < JSON.stringify(body!.structure).length, 'defaults are not stored');
  }
  for (const text of ['', '42', 'short', 'x'.repeat(5000), 'é'.repeat(40_000), 'y'.repeat(100_000)]) {
    t.equal(unpackText(packText(text)), text, `a text of ${text.length} characters round-trips`);
  }
  t.type(packText('z'.repeat(5000)), Buffer, 'a mid-size text is compressed');
});
