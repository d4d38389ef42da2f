import t from 'tap';
import { plainBodyText, plainTextStart } from '../src/mime/plain-body.js';

/** Bytes that make UTF-8 decoding and CRLF folding interesting: line ends, multi-byte and broken sequences. */
const PIECES = [
  Buffer.from('\r\n'),
  Buffer.from('\n'),
  Buffer.from('\r'),
  Buffer.from('é€😀'),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xf0]),
  Buffer.from([0xff]),
];

const body = (seed: number, bytes: number): Buffer => {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state;
  };
  const parts: Buffer[] = [];
  for (let size = 0; size < bytes; ) {
    const part = next() % 4 === 0 ? PIECES[next() % PIECES.length] : Buffer.from('abcdefghij'.repeat(1 + (next() % 40)));
    parts.push(part);
    size += part.length;
  }
  return Buffer.concat(parts);
};

t.test('plainTextStart compares a long body a piece at a time, as the whole decoded at once', async (t) => {
  const header = Buffer.from('Subject: s\r\n\r\n');
  for (const seed of [1, 2, 3]) {
    // Over 3 MiB: several pieces, cut after a LF somewhere in broken sequences and CRLF pairs.
    const raw = Buffer.concat([header, body(seed, 3.2 * 1024 * 1024)]);
    const text = plainBodyText(raw, header.length);
    t.equal(plainTextStart(raw, header.length, text, null), header.length, `seed ${seed}: its own text`);
    const changed = `${text.slice(0, 2_000_000)}x${text.slice(2_000_001)}`;
    t.equal(plainTextStart(raw, header.length, changed, null), null, `seed ${seed}: one character changed past the first piece`);
    t.equal(plainTextStart(raw, header.length, text.slice(0, -1), null), null, `seed ${seed}: one character short`);
  }
});

t.test('plainTextStart refuses a text too short for its body without decoding it', async (t) => {
  const raw = Buffer.from(`Subject: s\r\n\r\n${'x'.repeat(3000)}`);
  t.equal(plainTextStart(raw, 14, '', null), null, 'an attachment-only message: no text');
  t.equal(plainTextStart(raw, 14, 'x'.repeat(3000), null), 14);
});
