// The parse's short way for the simple shape of mail (src/mime/simple-shape.ts) must give
// exactly what the mailparser path gives, for every message it takes: compared here on
// generated messages, most of them just inside or just outside the shape.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import t from 'tap';
import { parseMimeTree } from '../src/mime/mime-tree.js';
import { parseMessage } from '../src/mime/parse.js';
import { simpleShapeOf } from '../src/mime/simple-shape.js';
import { emlFixtures, fixture } from './helpers/mail.js';

/** Mostly what the shape takes, sometimes what it must decline: each field gets both. */
const mostly = <T>(plain: fc.Arbitrary<T>, hostile: fc.Arbitrary<T>) => fc.oneof({ weight: 10, arbitrary: plain }, { weight: 1, arbitrary: hostile });

const asciiWords = fc.constantFrom('Hello', 'report', 'Q3', 'ok.', "it's", 'a-b', 're:', 'Fwd:', '100%', '[tag]', 'x_y', '(note)', 'a=b', '"q"');
const phrase = fc.array(asciiWords, { minLength: 1, maxLength: 6 }).map((list) => list.join(' '));
const spaced = fc.tuple(phrase, fc.constantFrom('', ' ', '  ', '\t', ' \t ')).map(([text, blank]) => `${blank}${text}${blank}`);
const folded = fc.tuple(phrase, fc.constantFrom('\r\n ', '\r\n\t', '\r\n   '), phrase).map(([a, fold, b]) => `${a}${fold}${b}`);
const encodedWord = fc.constantFrom('=?utf-8?Q?caf=C3=A9?=', '=?UTF-8?B?w6l0w6k=?=', '=?iso-8859-1?q?r=E9sum=E9?= x', '=?x?y?=');
const subject = mostly(fc.oneof(phrase, spaced, folded, fc.constant('')), fc.oneof(encodedWord, fc.constantFrom('caf\u00e9', '\u65e5\u672c')));

const local = fc.constantFrom('ann', 'bob.smith', 'c+tag', 'd_e', 'UPPER', 'x%y');
const domain = mostly(
  fc.constantFrom('example.org', 'mail.example.com', 'EXAMPLE.NET', 'a-b.test', 'localhost'),
  fc.constantFrom('xn--bcher-kva.example', 'ex ample.org'),
);
const addrSpec = fc.tuple(local, domain).map(([l, d]) => `${l}@${d}`);
const displayName = mostly(
  fc.constantFrom('Ann', 'Bob Smith', "O'Brien", 'Dr. X', 'A-B', ''),
  fc.constantFrom('J.  Doe', 'Doe, John', 'Ann (work)', '=?utf-8?Q?J=C3=BCrgen?=', '\u00dcnal', ' Ann '),
);
const mailbox = mostly(
  fc.oneof(
    addrSpec,
    addrSpec.map((a) => `<${a}>`),
    fc.tuple(displayName, addrSpec).map(([n, a]) => `${n} <${a}>`),
    fc.tuple(displayName, addrSpec).map(([n, a]) => `"${n}" <${a}>`),
    fc.tuple(displayName, addrSpec).map(([n, a]) => `"${n}"<${a}>`),
  ),
  fc.oneof(
    fc.tuple(addrSpec, displayName).map(([a, n]) => `${a} (${n})`),
    fc.constantFrom('undisclosed-recipients:;', 'Team: ann@example.org, bob@example.org;', 'not an address', '<>'),
  ),
);
const addressList = fc.oneof(
  fc.array(mailbox, { minLength: 1, maxLength: 3 }).map((list) => list.join(', ')),
  fc.array(mailbox, { minLength: 2, maxLength: 3 }).map((list) => list.join(',\r\n ')),
  fc.array(mailbox, { minLength: 2, maxLength: 3 }).map((list) => list.join(',')),
  fc.constant(''),
);

const date = mostly(
  fc.constantFrom(
    'Mon, 02 Mar 2026 10:15:00 +0000',
    'Tue, 3 Mar 2026 23:59:59 -0800 (PST)',
    '2 Mar 2026 10:15 +0100',
    'yesterday',
    '',
    'Mon, 02 Mar 2026 25:00:00 +0000',
  ),
  fc.constant('Mon, 02 Mar 2026\r\n 10:15:00 +0000'),
);
const id = fc.constantFrom('a1@example.org', 'b.2@mail.example.com', 'c$3@x');
const messageId = fc.oneof(
  id.map((value) => `<${value}>`),
  id,
  fc.tuple(id, id).map(([a, b]) => `<${a}> <${b}>`),
  id.map((value) => `<${value}> (comment)`),
  fc.constant(''),
);
const references = fc.oneof(
  fc.array(id, { minLength: 1, maxLength: 4 }).map((list) => list.map((value) => `<${value}>`).join(' ')),
  fc.array(id, { minLength: 2, maxLength: 4 }).map((list) => list.map((value) => `<${value}>`).join('\r\n ')),
  fc.array(id, { minLength: 1, maxLength: 3 }).map((list) => list.join(' ')),
  fc.constant('  '),
);
const contentType = mostly(
  fc.constantFrom(
    'text/plain',
    'text/plain; charset=utf-8',
    'TEXT/PLAIN; CHARSET="UTF-8"',
    'text/plain; charset=us-ascii',
    'text/plain;charset="us-ascii"',
    'text/plain; charset=iso-8859-1',
    'text/plain; charset="ISO-8859-1"',
    'text/plain; charset=windows-1252',
  ),
  fc.constantFrom(
    'text/plain; charset=iso-8859-2',
    'text/plain; charset=latin1',
    'text/plain; charset=utf-8; format=flowed',
    'text/plain; format=flowed; delsp=yes',
    'text/html; charset=utf-8',
    'application/octet-stream',
  ),
);
const transferEncoding = mostly(
  fc.constantFrom(null, '7bit', '8bit', 'binary', '7BIT', 'quoted-printable', 'Quoted-Printable', 'base64', 'BASE64'),
  fc.constant('x-uuencode'),
);
const disposition = fc.constantFrom('inline', 'attachment; filename="a.txt"');

/** A header field line (or lines), as on the wire, or null for none. */
const field = (name: string, value: fc.Arbitrary<string>, present = 3, absent = 1) =>
  fc.oneof({ weight: absent, arbitrary: fc.constant(null) }, { weight: present, arbitrary: value.map((text) => `${name}: ${text}`) });

const bodyLine = fc.oneof(
  phrase,
  fc.constantFrom('', '  indented', 'trailing   ', 'a=3D b', '> quoted', '-- ', 'From here', '.'),
  fc.constantFrom('\u00e9t\u00e9', 'naïve café', '日本語のテキスト', '🙂 emoji'),
);
const body = fc
  .tuple(fc.array(bodyLine, { maxLength: 12 }), fc.constantFrom('\r\n', '\r\n', '\n', '\r'), fc.constantFrom('', '\r\n', '\n'))
  .map(([lines, end, last]) => Buffer.from(lines.join(end) + (lines.length > 0 ? last : '')));
const oddBytes = fc.constantFrom(
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xc3]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from('\u0000'),
  Buffer.alloc(0),
  Buffer.from([0x80, 0xe9, 0x9f]),
  Buffer.from([0x81]),
  Buffer.from([0x41, 0x9d]),
);

const htmlBody = fc
  .array(fc.constantFrom('<p>Hello</p>', '<div>caf\u00e9 &amp; more</div>', '', '<br>', '<b>Q3</b> numbers', '\u65e5\u672c'), { maxLength: 5 })
  .map((list) => Buffer.from(list.join('\r\n')));
const childType = (kind: 'plain' | 'html') =>
  mostly(
    fc.constantFrom(
      `text/${kind}`,
      `text/${kind}; charset=utf-8`,
      `TEXT/${kind.toUpperCase()}; charset="us-ascii"`,
      `text/${kind}; charset=iso-8859-1`,
      ...(kind === 'plain' ? [null] : []),
    ),
    fc.constantFrom(`text/${kind}; charset=iso-8859-2`, 'image/png', `text/${kind === 'plain' ? 'html' : 'plain'}`),
  );
const child = (kind: 'plain' | 'html') =>
  fc.record({
    type: childType(kind),
    encoding: transferEncoding,
    extra: mostly(
      fc.constantFrom(null, 'Content-ID: <c1@x>', 'Content-Description: body'),
      fc.constantFrom('Content-Disposition: inline', 'Content-Disposition: attachment'),
    ),
    body: kind === 'plain' ? body : htmlBody,
  });
interface Leaf {
  type: string | null;
  encoding: string | null;
  extra: string | null;
  body: Buffer;
}
/** A part's header and its body in that transfer encoding. */
const leaf = (c: Leaf, wire: Wire): Buffer => {
  const head = [c.type && `Content-Type: ${c.type}`, c.encoding && `Content-Transfer-Encoding: ${c.encoding}`, c.extra].filter(Boolean);
  return Buffer.concat([Buffer.from(`${head.map((line) => `${line}\r\n`).join('')}\r\n`), encoded(c.body, c.encoding, wire)]);
};
/** A multipart/alternative body and its Content-Type: a text and an HTML part, sometimes flawed or in another order. */
const alternativeBody = fc
  .record({
    plain: child('plain'),
    html: child('html'),
    boundary: mostly(fc.constantFrom('b1', '"b1"', '----=_Part_1.2', '"=_abc"'), fc.constantFrom('"b 1"', 'b1; charset=x')),
    order: mostly(fc.constant('plain-html'), fc.constantFrom('html-plain', 'three', 'one', 'unclosed')),
    preamble: fc.constantFrom('', 'This is a multi-part message in MIME format.\r\n'),
    epilogue: fc.constantFrom('', '\r\n', 'epilogue\r\n'),
    wire: fc.record({ width: fc.constant(76), lineEnd: fc.constant('\r\n'), mangle: fc.nat(12) }),
  })
  .map(({ plain, html, boundary, order, preamble, epilogue, wire }) => {
    const marker = boundary.replace(/^"|"(;.*)?$|;.*$/g, '');
    const part = (c: Leaf): Buffer => Buffer.concat([Buffer.from(`--${marker}\r\n`), leaf(c, wire), Buffer.from('\r\n')]);
    const parts = { 'plain-html': [plain, html], 'html-plain': [html, plain], three: [plain, html, plain], one: [plain], unclosed: [plain, html] }[order];
    const close = order === 'unclosed' ? '' : `--${marker}--\r\n${epilogue}`;
    return { type: `multipart/alternative; boundary=${boundary}`, body: Buffer.concat([Buffer.from(preamble), ...parts.map(part), Buffer.from(close)]) };
  });

const attachment = mostly(
  fc.constantFrom(
    'Content-Type: application/pdf; name="q3.pdf"\r\nContent-Disposition: attachment; filename="q3.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK',
    'Content-Type: image/png\r\nContent-Disposition: inline\r\nContent-ID: <i1@x>\r\nContent-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\nAAAA',
    'Content-Type: application/octet-stream\r\n\r\nraw bytes',
  ),
  fc.constantFrom(
    'Content-Type: text/csv\r\nContent-Disposition: attachment; filename="a.csv"\r\n\r\na,b\r\n1,2',
    'Content-Type: message/rfc822\r\n\r\nSubject: inner\r\n\r\nhello',
    'Content-Type: text/plain\r\n\r\nsecond text',
    'Content-Type: application/pdf; name="=?utf-8?Q?r=C3=A9sum=C3=A9.pdf?="\r\n\r\nJVBERi0=',
  ),
);
/** A multipart/mixed: the text (alone or as an alternative) first, then attachments; sometimes in another order. */
const mixedBody = fc
  .record({
    content: fc.oneof(alternativeBody, child('plain')),
    attachments: fc.array(attachment, { minLength: 1, maxLength: 3 }),
    contentLast: mostly(fc.constant(false), fc.constant(true)),
  })
  .map(({ content, attachments, contentLast }) => {
    const contentPart =
      'body' in content && 'type' in content && typeof content.type === 'string' && content.type.startsWith('multipart/')
        ? Buffer.concat([Buffer.from(`Content-Type: ${content.type}\r\n\r\n`), content.body])
        : leaf(content as Leaf, { width: 76, lineEnd: '\r\n', mangle: 12 });
    const parts = [contentPart, ...attachments.map((text) => Buffer.from(text))];
    if (contentLast) parts.reverse();
    return {
      type: 'multipart/mixed; boundary="mix-1"',
      body: Buffer.concat([...parts.flatMap((part) => [Buffer.from('--mix-1\r\n'), part, Buffer.from('\r\n')]), Buffer.from('--mix-1--\r\n')]),
    };
  });

const message = fc
  .record({
    fields: fc.tuple(
      field('Subject', subject),
      field('From', addressList),
      field('To', addressList),
      field('Cc', addressList, 1),
      field('Date', date),
      field('Message-ID', messageId),
      field('In-Reply-To', messageId, 1),
      field('References', references, 1),
      field('MIME-Version', fc.constant('1.0')),
      field('Content-Type', contentType),
      field('Content-Disposition', disposition, 1, 10),
      field('X-Mailer', phrase, 1),
    ),
    duplicate: mostly(
      fc.constant(null),
      fc.constantFrom('Subject: again', 'From: other@example.org', 'Date: Tue, 03 Mar 2026 10:00:00 +0000', 'To: x@example.org'),
    ),
    shuffle: fc.boolean(),
    lineEnd: mostly(fc.constant('\r\n'), fc.constant('\n')),
    body,
    odd: fc.option(oddBytes, { freq: 2 }),
    encoding: transferEncoding,
    alternative: fc.option(fc.oneof(alternativeBody, mixedBody), { freq: 3 }),
    wire: fc.record({ width: fc.constantFrom(76, 64, 72, 70), lineEnd: mostly(fc.constant('\r\n'), fc.constant('\n')), mangle: fc.nat(12) }),
  })
  .map(({ fields, duplicate, shuffle, lineEnd, body, odd, encoding, alternative, wire }) => {
    const lines = fields.filter((line): line is string => line !== null && !(alternative && line.startsWith('Content-Type:')));
    if (encoding !== null && !alternative) lines.push(`Content-Transfer-Encoding: ${encoding}`);
    if (alternative) lines.push(`Content-Type: ${alternative.type}`);
    if (duplicate !== null) lines.push(duplicate);
    if (shuffle) lines.reverse();
    const head = `${lines.join(lineEnd)}${lineEnd}${lineEnd}`.replace(/\r\n/g, lineEnd);
    const content = alternative ? alternative.body : encoded(Buffer.concat([body, odd ?? Buffer.alloc(0)]), encoding, wire);
    return Buffer.concat([Buffer.from(head, 'utf8'), content]);
  });

interface Wire {
  width: number;
  lineEnd: string;
  /** 0 to 2: each a different flaw a sender may leave; anything else: none. */
  mangle: number;
}

/** The body as a sender would put it on the wire in that transfer encoding, sometimes flawed. */
function encoded(body: Buffer, encoding: string | null, wire: Wire): Buffer {
  switch (encoding?.toLowerCase()) {
    case 'quoted-printable':
      return Buffer.from(quotedPrintable(body, wire), 'latin1');
    case 'base64':
      return Buffer.from(base64(body, wire), 'latin1');
    default:
      return body;
  }
}

function quotedPrintable(body: Buffer, { width, lineEnd, mangle }: Wire): string {
  const hex = (byte: number): string => `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  const lines: string[] = [];
  for (const line of body.toString('latin1').split(/\r?\n/)) {
    let out = '';
    for (const char of line) {
      const code = char.charCodeAt(0);
      const piece = code === 0x3d || code > 0x7e || (code < 0x20 && code !== 0x09) ? hex(code) : char;
      if (out.length + piece.length > width - 1) {
        lines.push(`${out}=`);
        out = '';
      }
      out += piece;
    }
    lines.push(out);
  }
  const text = lines.join(lineEnd);
  if (mangle === 0) return text.replace(/=([0-9A-F]{2})/, (_, pair: string) => `=${pair.toLowerCase()}`);
  if (mangle === 1) return `${text.replace(lineEnd, `  ${lineEnd}`)}=ZZ =`;
  if (mangle === 2) return `${text}\t `;
  return text;
}

function base64(body: Buffer, { width, lineEnd, mangle }: Wire): string {
  const text = body.toString('base64');
  const lines = text.match(new RegExp(`.{1,${width}}`, 'g')) ?? [];
  if (mangle === 0) return `${lines.join(lineEnd)}${lineEnd}`;
  if (mangle === 1) return `${Buffer.from('ab').toString('base64')}${lineEnd}${lines.join(lineEnd)}`;
  if (mangle === 2) return lines.join(` ${lineEnd}`);
  return lines.join(lineEnd);
}

t.test('the short way gives what mailparser gives, for every message it takes', async (t) => {
  let taken = 0;
  let takenWithHtml = 0;
  let takenMixed = 0;
  let takenLatin = 0;
  let declined = 0;
  const differences: string[] = [];
  await fc.assert(
    fc.asyncProperty(message, async (raw) => {
      const simple = simpleShapeOf(raw, parseMimeTree(raw));
      if (simple === null) {
        declined += 1;
        return true;
      }
      taken += 1;
      if (simple.html !== null) takenWithHtml += 1;
      if (/multipart\/mixed/i.test(raw.toString('latin1', 0, 2000))) takenMixed += 1;
      if (/charset="?(iso-8859-1|windows-1252)/i.test(raw.toString('latin1', 0, 2000))) takenLatin += 1;
      const short = await parseMessage(raw);
      const full = await parseMessage(raw, { shortcut: false });
      if (isDeepStrictEqual(short, full)) return true;
      differences.push(JSON.stringify(raw.toString('latin1')));
      return false;
    }),
    { numRuns: 4000, seed: 20261127 },
  );
  t.same(differences, []);
  // The shape must be common in what is generated, or the comparison proves little.
  t.ok(taken > 300, `messages the short way took: ${taken}`);
  t.ok(takenWithHtml > 100, `of them multipart/alternative with HTML: ${takenWithHtml}`);
  t.ok(takenMixed > 75, `of them multipart/mixed: ${takenMixed}`);
  t.ok(takenLatin > 75, `of them ISO-8859-1 or windows-1252: ${takenLatin}`);
  t.ok(declined > 300, `messages left to mailparser: ${declined}`);
});

t.test('the shape of plain agent mail is taken; each thing outside it is declined', async (t) => {
  const taken = (raw: string): boolean => simpleShapeOf(Buffer.from(raw, 'latin1'), parseMimeTree(Buffer.from(raw, 'latin1'))) !== null;
  const head =
    'From: "Sender 5" <sender5@example.org>\r\nTo: <agent@agentpost.test>\r\nSubject: Q3 numbers\r\nDate: Mon, 02 Mar 2026 10:15:00 +0000\r\nMessage-ID: <m1@example.org>\r\n';
  t.ok(taken(`${head}Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\nHello\r\n`), 'text/plain, 7bit');
  t.ok(taken(`${head}\r\nHello\r\n`), 'no Content-Type');
  t.ok(taken(`${head}Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\ncaf=C3=A9=\r\n\r\n`), 'quoted-printable');
  t.ok(taken(`${head}Content-Transfer-Encoding: base64\r\n\r\nY2Fmw6k=\r\n`), 'base64');
  t.notOk(taken(`${head}Content-Transfer-Encoding: base64\r\n\r\nYWI=\r\nY2Fmw6k=\r\n`), 'base64 padded inside');
  t.notOk(taken(`${head}Content-Type: text/html\r\n\r\n<p>Hi</p>\r\n`), 'HTML');
  const alternative = (parts: string[]) =>
    `${head}Content-Type: multipart/alternative; boundary="b1"\r\n\r\n${parts.map((part) => `--b1\r\n${part}\r\n`).join('')}--b1--\r\n`;
  const plainPart = 'Content-Type: text/plain; charset=utf-8\r\n\r\nHi';
  const htmlPart = 'Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>Hi</p>';
  t.ok(taken(alternative([plainPart, htmlPart])), 'multipart/alternative, text then HTML');
  t.notOk(taken(alternative([htmlPart, plainPart])), 'HTML first');
  t.notOk(taken(alternative([plainPart, htmlPart, 'Content-Type: image/png\r\n\r\nx'])), 'a third part');
  const mixed = (parts: string[]) =>
    `${head}Content-Type: multipart/mixed; boundary="m1"\r\n\r\n${parts.map((part) => `--m1\r\n${part}\r\n`).join('')}--m1--\r\n`;
  const pdf = 'Content-Type: application/pdf\r\nContent-Disposition: attachment; filename="a.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0=';
  t.ok(taken(mixed([plainPart, pdf])), 'multipart/mixed: text, then a PDF');
  t.ok(taken(mixed([alternative([plainPart, htmlPart]).slice(head.length), pdf])), 'multipart/mixed: an alternative, then a PDF');
  t.notOk(taken(mixed([plainPart, 'Content-Type: text/plain\r\n\r\nmore'])), 'multipart/mixed: a second text');
  t.notOk(taken(mixed([pdf, plainPart])), 'multipart/mixed: the attachment first');
  t.notOk(taken(`${head}Content-Type: text/plain; format=flowed\r\n\r\nHi \r\nthere\r\n`), 'format=flowed');
  t.notOk(taken(`${head.replace('Q3 numbers', '=?utf-8?Q?caf=C3=A9?=')}\r\nHello\r\n`), 'an encoded word');
  t.notOk(taken(`${head}Subject: twice\r\n\r\nHello\r\n`), 'a field twice');
  t.notOk(taken(`${head.replace('"Sender 5" <sender5@example.org>', 'Team: a@example.org;')}\r\nHello\r\n`), 'a group');
  t.notOk(taken(`${head}X-Name: caf\u00e9\r\n\r\nHello\r\n`), '8-bit header bytes');
  t.notOk(taken(`${head.replace(/\r\n/g, '\n')}\nHello\n`), 'bare LF line ends in the header');
});

t.test('the short way reads the fields mailparser reads', async (t) => {
  const raw = Buffer.from(
    'From: "Sender 5" <sender5@example.org>\r\nTo: Ann <ann@example.org>, bob@example.org\r\nCc: <c@example.org>\r\nSubject:  Q3\r\n  numbers \r\n' +
      'Date: Tue, 3 Mar 2026 23:59:59 -0800 (PST)\r\nMessage-ID: m1@example.org\r\nIn-Reply-To: <m0@example.org>\r\nReferences: <a@x>\r\n <b@x> c@x\r\n\r\nline one\r\nline two\r\n',
  );
  const parsed = await parseMessage(raw);
  t.same(
    {
      subject: parsed.subject,
      from: parsed.from,
      to: parsed.to,
      cc: parsed.cc,
      messageId: parsed.messageId,
      inReplyTo: parsed.inReplyTo,
      references: parsed.references,
    },
    {
      subject: 'Q3 numbers',
      from: { name: 'Sender 5', email: 'sender5@example.org' },
      to: [{ name: 'Ann', email: 'ann@example.org' }, { email: 'bob@example.org' }],
      cc: [{ email: 'c@example.org' }],
      messageId: '<m1@example.org>',
      inReplyTo: '<m0@example.org>',
      references: ['<a@x>', '<b@x>', '<c@x>'],
    },
  );
  t.equal(parsed.date, Date.parse('2026-03-04T07:59:59Z'));
  t.equal(parsed.text, 'line one\nline two\n');
  t.same(await parseMessage(raw, { shortcut: false }), parsed, 'the same as mailparser');
});

t.test('mail as nodemailer writes it takes the short way, with the same result; every fixture agrees too', async (t) => {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const compose = async (message: SendMailOptions): Promise<Buffer> => (await transport.sendMail(message)).message as Buffer;
  const common = {
    from: '"Report Bot" <bot@example.org>',
    to: 'Ann <ann@example.org>, bob@example.org',
    subject: 'Q3 numbers',
    date: new Date('2026-03-02T10:15:00Z'),
  };
  const samples: [string, Buffer][] = [
    ['text', await compose({ ...common, text: 'Hello,\nthe numbers are in.\n' })],
    ['text with non-ASCII (quoted-printable)', await compose({ ...common, text: 'Caf\u00e9 au lait, na\u00efve r\u00e9sum\u00e9 '.repeat(5) })],
    ['text and HTML', await compose({ ...common, text: 'Hello', html: '<p>Hello</p>' })],
    [
      'text and a PDF',
      await compose({ ...common, text: 'Attached.', attachments: [{ filename: 'q3.pdf', content: Buffer.alloc(3000, 7), contentType: 'application/pdf' }] }),
    ],
    [
      'text, HTML and an image',
      await compose({
        ...common,
        text: 'See',
        html: '<p>See</p>',
        attachments: [{ filename: 'a.png', content: Buffer.alloc(500, 1), contentType: 'image/png' }],
      }),
    ],
  ];
  for (const [name, raw] of samples) {
    t.ok(simpleShapeOf(raw, parseMimeTree(raw)), `${name}: taken`);
    t.same(await parseMessage(raw), await parseMessage(raw, { shortcut: false }), `${name}: the same as mailparser`);
  }
  for (const name of emlFixtures()) {
    const raw = fixture(name);
    t.same(await parseMessage(raw), await parseMessage(raw, { shortcut: false }), `fixture ${name}: the same either way`);
  }
});
