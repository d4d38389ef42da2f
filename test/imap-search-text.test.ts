// SEARCH TEXT and BODY (RFC 3501 section 6.4.4: case-insensitive substrings of the header and
// the decoded body) over messages of every text shape: plain ones, which the search answers
// from their raw bytes (src/mime/plain-body.ts), and encoded ones, answered from the stored
// text. Random searches are compared with a model written here from what each message says.
import fc from 'fast-check';
import t from 'tap';
import { parseMessage } from '../src/mime/parse.js';
import { plainBodyText } from '../src/mime/plain-body.js';
import { startApp } from './helpers/app.js';
import { imapLogin, rawImap } from './helpers/imap.js';
import { deliverDirect, storedRaw } from './helpers/mail.js';

const TOKENS = ['Zorblax', 'zorBLAX', 'plain', 'Café', 'straße', 'naïve', 'ÜBER', 'K', 'ſtop', 'x-y', 'a.b', 'mail', 'résumé', 'fin'];

type Shape = 'utf8' | 'ascii' | 'qp' | 'base64' | 'latin1' | 'flowed' | 'encodedSubject';
const SHAPES: Shape[] = ['utf8', 'ascii', 'qp', 'base64', 'latin1', 'flowed', 'encodedSubject'];

interface Model {
  uid: number;
  /** The decoded text, as RFC 3501 searches it. */
  text: string;
  subject: string;
  from: { name: string; email: string };
}

const isAscii = (text: string) => /^[\x00-\x7f]*$/.test(text);
const isLatin1 = (text: string) => /^[\x00-\xff]*$/.test(text);

/** Lines of tokens; `fit` keeps the tokens the shape can carry. */
const linesOf = (seed: number, fit: (token: string) => boolean): string[] => {
  const tokens = TOKENS.filter(fit);
  return Array.from({ length: 2 + (seed % 3) }, (_, line) =>
    Array.from({ length: 3 + ((seed + line) % 4) }, (_, i) => tokens[(seed * 7 + line * 5 + i * 3) % tokens.length]).join(' '),
  );
};

const quotedPrintable = (text: string) =>
  [...Buffer.from(text)]
    .map((byte) => (byte >= 0x21 && byte <= 0x7e && byte !== 0x3d ? String.fromCharCode(byte) : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');

/** A message of a shape and the text its reader would show. */
const messageOf = (index: number, shape: Shape): { raw: Buffer; text: string; subject: string; from: Model['from'] } => {
  const from = { name: `Sender ${TOKENS[index % TOKENS.length].replace(/[^\x20-\x7e]/g, '')}`, email: `s${index}@example.org` };
  const subjectText = `${TOKENS[(index + 3) % TOKENS.length]} ${index}`;
  const header = (contentType: string, encoding: string, subject = subjectText.replace(/[^\x20-\x7e]/g, '?')) =>
    `From: "${from.name}" <${from.email}>\r\nTo: <agent@example.net>\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\nContent-Type: ${contentType}\r\nContent-Transfer-Encoding: ${encoding}\r\n\r\n`;
  const asciiSubject = subjectText.replace(/[^\x20-\x7e]/g, '?');
  const lines = linesOf(index, shape === 'ascii' ? isAscii : shape === 'latin1' ? isLatin1 : () => true);
  const text = `${lines.join('\n')}\n`;
  const crlf = text.replaceAll('\n', '\r\n');
  switch (shape) {
    case 'utf8':
      return { raw: Buffer.from(header('text/plain; charset=utf-8', '8bit') + crlf), text, subject: asciiSubject, from };
    case 'ascii':
      return { raw: Buffer.from(header('text/plain; charset=us-ascii', '7bit') + crlf), text, subject: asciiSubject, from };
    case 'qp':
      return {
        raw: Buffer.from(`${header('text/plain; charset=utf-8', 'quoted-printable') + lines.map(quotedPrintable).join('\r\n')}\r\n`),
        text,
        subject: asciiSubject,
        from,
      };
    case 'base64':
      return {
        raw: Buffer.from(`${header('text/plain; charset=utf-8', 'base64') + Buffer.from(crlf).toString('base64')}\r\n`),
        text,
        subject: asciiSubject,
        from,
      };
    case 'latin1':
      return {
        raw: Buffer.concat([Buffer.from(header('text/plain; charset=iso-8859-1', '8bit')), Buffer.from(crlf, 'latin1')]),
        text,
        subject: asciiSubject,
        from,
      };
    case 'flowed': {
      // Soft line breaks (RFC 3676): a line ending in a space goes on with the next.
      const raw = Buffer.from(
        `${header('text/plain; charset=utf-8; format=flowed', '8bit') + lines.map((line) => line.replace(' ', ' \r\n')).join('\r\n')}\r\n`,
      );
      return { raw, text, subject: asciiSubject, from };
    }
    case 'encodedSubject': {
      const encoded = `=?utf-8?B?${Buffer.from(subjectText).toString('base64')}?=`;
      return { raw: Buffer.from(header('text/plain; charset=utf-8', '8bit', encoded) + crlf), text, subject: subjectText, from };
    }
  }
};

t.test('a plain message is searched in its raw bytes exactly when its text is that body', async (t) => {
  for (const [index, shape] of SHAPES.entries()) {
    const { raw, text } = messageOf(index, shape);
    const parsed = await parseMessage(raw);
    const start = parsed.body?.plainTextStart ?? null;
    if (start !== null) t.equal(plainBodyText(raw, start), parsed.text, `${shape}: the raw body is the text`);
    t.equal(start !== null, ['utf8', 'ascii', 'encodedSubject'].includes(shape), `${shape}: ${start === null ? 'not ' : ''}plain`);
    // The stored text is what a reader shows (flowed lines joined), whatever the shape.
    t.equal((parsed.text ?? '').trimEnd(), text.trimEnd(), `${shape}: decoded`);
  }
});

t.test('SEARCH TEXT and BODY answer as the model does, over plain and encoded messages', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  const model: Model[] = [];
  for (let index = 0; index < 42; index += 1) {
    const shape = SHAPES[index % SHAPES.length];
    const message = messageOf(index, shape);
    // Half arrive over SMTP, which puts a Received field before the header (src/mime/structure.ts withPrefix).
    if (index % 2 === 0) await deliverDirect(app.app, [agent.email], message.raw);
    else await client.append('INBOX', message.raw);
    model.push({ uid: model.length + 1, text: message.text, subject: message.subject, from: message.from });
  }
  await client.logout();
  const headers = await Promise.all(
    model.map(async (m) => {
      const raw = (await storedRaw(app.app, agent.email, m.uid)).toString('latin1');
      return raw.slice(0, raw.indexOf('\r\n\r\n') + 4);
    }),
  );

  const imap = await rawImap(t, app.imapPort);
  let tag = 0;
  const command = async (line: string | Buffer) => {
    tag += 1;
    imap.send(Buffer.concat([Buffer.from(`t${tag} `), Buffer.from(line), Buffer.from('\r\n')]));
    return imap.read(new RegExp(`^t${tag} .*\\r\\n`, 'm'));
  };
  await command(`LOGIN ${agent.email} ${agent.apiKey}`);
  await command('EXAMINE INBOX');

  // The addresses as SEARCH sees them: `name <email>`, comma-separated (the To has no name).
  const addressesOf = (m: Model) => `${m.from.name} <${m.from.email}>,  <agent@example.net>`;
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const found = (needle: string, hay: string) => new RegExp(escaped(needle), 'i').test(hay);
  const inText = (m: Model, index: number, needle: string) =>
    found(needle, headers[index]) || found(needle, m.text) || found(needle, m.subject) || found(needle, addressesOf(m));
  const needle = fc.oneof(
    // A piece of a token, in any case: ASCII ones are looked for in plain messages' bytes.
    fc.tuple(fc.constantFrom(...TOKENS), fc.nat(), fc.nat(), fc.boolean()).map(([token, a, b, upper]) => {
      const start = a % token.length;
      const piece = token.slice(start, start + 1 + (b % (token.length - start)));
      return upper ? piece.toUpperCase() : piece.toLowerCase();
    }),
    // Across two tokens (a space, a soft line break, or none at all).
    fc.tuple(fc.constantFrom(...TOKENS), fc.constantFrom(...TOKENS)).map(([a, b]) => `${a.slice(-2)} ${b.slice(0, 2)}`),
    fc.constantFrom(
      'zorblax',
      'CAFÉ',
      'STRASSE',
      'sender',
      'example.org',
      'nothing-here',
      'Ü',
      'k',
      'S',
      'fin\r\nx',
      'org>',
      'x <s',
      ' <agent',
      'Zorblax ',
      'org>, ',
    ),
  );
  type Key = { bytes: Buffer; test: (m: Model, index: number) => boolean };
  const literal = (text: string) => Buffer.concat([Buffer.from(`{${Buffer.byteLength(text)}+}\r\n`), Buffer.from(text)]);
  const key: fc.Arbitrary<Key> = fc.tuple(fc.constantFrom('TEXT', 'BODY'), needle).map(([scope, text]) => ({
    bytes: Buffer.concat([Buffer.from(`${scope} `), literal(text)]),
    test: scope === 'TEXT' ? (m: Model, index: number) => inText(m, index, text) : (m: Model) => found(text, m.text),
  }));
  const search: fc.Arbitrary<Key> = fc.oneof(
    key,
    fc.tuple(key, key).map(([a, b]) => ({
      bytes: Buffer.concat([Buffer.from('OR '), a.bytes, Buffer.from(' '), b.bytes]),
      test: (m: Model, i: number) => a.test(m, i) || b.test(m, i),
    })),
    key.map((a) => ({ bytes: Buffer.concat([Buffer.from('NOT '), a.bytes]), test: (m: Model, i: number) => !a.test(m, i) })),
  );
  let hits = 0;
  await fc.assert(
    fc.asyncProperty(search, async (search) => {
      const answer = await command(Buffer.concat([Buffer.from('UID SEARCH CHARSET UTF-8 '), search.bytes]));
      const uids = (answer.match(/^\* SEARCH([^\r]*)\r\n/m)?.[1] ?? '').trim().split(' ').filter(Boolean).map(Number);
      const expected = model.filter((m, index) => search.test(m, index)).map((m) => m.uid);
      hits += expected.length;
      if (uids.join(' ') !== expected.join(' ')) throw new Error(`UID SEARCH ${search.bytes.toString()}: ${uids.join(' ')} instead of ${expected.join(' ')}`);
    }),
    { seed: 7411, numRuns: 300 },
  );
  t.ok(hits > 0, 'the searches found messages');
  t.pass('300 searches answered as the model does');
});
