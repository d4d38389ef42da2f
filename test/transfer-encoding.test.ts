import fc from 'fast-check';
import t from 'tap';
import { decodeBody, decodedLength } from '../src/mime/transfer-encoding.js';

// Bytes a body may hold, weighted toward what the decoders treat specially.
const SPECIAL = [...'=\r\n \t-_+/AZaz09'].map((char) => char.charCodeAt(0));
const bodyBytes = fc.array(fc.oneof(fc.constantFrom(...SPECIAL), fc.integer({ min: 0, max: 255 })), { maxLength: 400 }).map((bytes) => Buffer.from(bytes));

t.test('decodedLength is the length decodeBody gives, for any bytes', async (t) => {
  for (const encoding of ['base64', 'BASE64', 'quoted-printable', '7bit', 'binary', 'x-unknown']) {
    fc.assert(
      fc.property(bodyBytes, (body) => decodedLength(body, encoding) === decodeBody(body, encoding).length),
      { seed: 30, numRuns: 2000 },
    );
  }
  t.pass('2,000 bodies per encoding');
});

t.test('decodedLength of well-formed base64 and quoted-printable', async (t) => {
  const bytes = Buffer.from(Array.from({ length: 100_003 }, (_, i) => (i * 7919) % 256));
  const base64 = Buffer.from(`${(bytes.toString('base64').match(/.{1,76}/g) ?? []).join('\r\n')}\r\n`);
  t.equal(decodedLength(base64, 'base64'), bytes.length, 'base64 lines of 76 characters and their padding');
  t.equal(
    decodedLength(Buffer.from('caf=C3=A9 =\r\nand more=3D'), 'quoted-printable'),
    Buffer.byteLength('café and more='),
    'quoted-printable with a soft break',
  );
});
