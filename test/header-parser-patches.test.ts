// patches/mailauth+4.13.3.patch: the header parser and the h= selection made linear must give
// exactly what mailauth 4.13.3's own code gives, on every header; messages are streamed to the
// verifier a turn of the event loop at a time; `maxSignatures` bounds the signatures tried.
// The reference functions below are mailauth 4.13.3's, as published (lib/tools.js).
// patches/@zone-eu+mailsplit+5.4.19.patch (mailparser's header parser): the same trim of the
// header's trailing line breaks, read the same.
import { deepStrictEqual } from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import t from 'tap';
import { emlFixtures, fixture } from './helpers/mail.js';

interface ParsedRow {
  key: string | null;
  casedKey: string | undefined;
  line: Buffer;
}
interface ParsedHeaders {
  parsed: ParsedRow[];
  original: Buffer;
}
interface MailauthTools {
  parseHeaders(buf: Buffer): ParsedHeaders;
  getSigningHeaderLines(parsed: ParsedRow[], fieldNames: string, verify: boolean): { keys: string; headers: ParsedRow[] };
  writeToStream(stream: Writable, input: Buffer, chunkSize?: number): Promise<void>;
}
interface MailsplitHeaders {
  getList(): { key: string; line: string }[];
}
interface DkimResult {
  status: { result: string };
}
type DkimVerify = (raw: Buffer, options: Record<string, unknown>) => Promise<{ results: DkimResult[] }>;

const require = createRequire(import.meta.url);
const tools = require('mailauth/lib/tools') as MailauthTools;
const { dkimVerify } = require('mailauth/lib/dkim/verify') as { dkimVerify: DkimVerify };
const { Headers } = require('@zone-eu/mailsplit') as { Headers: new (raw: Buffer) => MailsplitHeaders };

const referenceParseHeaders = (buf: Buffer): ParsedHeaders => {
  const rows: string[][] = buf
    .toString('binary')
    .replace(/[\r\n]+$/, '')
    .split(/\r?\n/)
    .map((row) => [row]);
  for (let i = rows.length - 1; i >= 0; i--) {
    if (i > 0 && /^\s/.test(rows[i][0])) {
      rows[i - 1] = rows[i - 1].concat(rows[i]);
      rows.splice(i, 1);
    }
  }
  const parsed = rows.map((parts) => {
    const row = parts.join('\r\n');
    const match = row.match(/^[^:]+/);
    const casedKey = match ? match[0].trim() : undefined;
    return { key: casedKey === undefined ? null : casedKey.toLowerCase(), casedKey, line: Buffer.from(row, 'binary') };
  });
  return { parsed, original: buf };
};

const referenceSigningHeaders = (parsedHeaders: ParsedRow[], fieldNames: string): { keys: string; headers: ParsedRow[] } => {
  const names = fieldNames
    .split(':')
    .map((key) => key.trim().toLowerCase())
    .filter((key) => key);
  const signingList: ParsedRow[] = [];
  const parsedList = [...parsedHeaders];
  for (const fieldName of names) {
    for (let i = parsedList.length - 1; i >= 0; i--) {
      if (fieldName === parsedList[i].key) {
        signingList.push(parsedList[i]);
        parsedList.splice(i, 1);
        break;
      }
    }
  }
  return { keys: signingList.map((entry) => entry.casedKey).join(': '), headers: signingList };
};

/** Rows as plain values, so a difference shows which row and which part. */
const plain = (headers: ParsedHeaders) => headers.parsed.map((row) => ({ key: row.key, casedKey: row.casedKey, line: row.line.toString('latin1') }));

const NAMES = ['From', 'To', 'Subject', 'DKIM-Signature', 'Received', 'X-Filler', 'from', 'SUBJECT'];
/** Every kind of line a header can hold: fields, folds led by each byte \s matches, bare CRs, odd bytes. */
const line = fc.oneof(
  fc.tuple(fc.constantFrom(...NAMES), fc.string({ maxLength: 12 })).map(([name, value]) => `${name}: ${value}`),
  fc.tuple(fc.constantFrom(' ', '\t', '\v', '\f', '\xa0', '\r'), fc.string({ maxLength: 12 })).map(([lead, value]) => `${lead}${value}`),
  fc.constantFrom('', ':no name', 'no colon', '\r\r\r', 'X-Cr: a\r\r\rb', 'X-8bit: \xe9\xff\x00'),
  fc.string({ maxLength: 16 }),
);
const header = fc
  .tuple(fc.array(fc.tuple(line, fc.constantFrom('\r\n', '\n')), { maxLength: 30 }), fc.constantFrom('', '\r\n', '\r\n\r\n', '\n\n', '\r\r\n', '\r'))
  .map(([lines, end]) => Buffer.from(lines.map(([text, eol]) => text + eol).join('') + end, 'latin1'));

t.test('parseHeaders gives what mailauth 4.13.3 gives, on generated headers and on the fixtures', async (t) => {
  fc.assert(
    fc.property(header, (buf) => {
      const patched = tools.parseHeaders(buf);
      deepStrictEqual(plain(patched), plain(referenceParseHeaders(buf)));
      return patched.original === buf;
    }),
    { numRuns: 2000 },
  );
  t.pass('2,000 generated headers');
  for (const name of emlFixtures()) {
    const raw = fixture(name);
    const end = raw.indexOf('\r\n\r\n');
    const head = raw.subarray(0, end < 0 ? raw.length : end + 4);
    t.same(plain(tools.parseHeaders(head)), plain(referenceParseHeaders(head)), `${name}: same rows`);
  }
});

t.test('the h= selection gives what mailauth 4.13.3 gives: each name takes the last field of that name not taken', async (t) => {
  const names = fc.array(fc.constantFrom(...NAMES, 'absent', ' from ', 'x-filler', ''), { maxLength: 20 }).map((list) => list.join(':'));
  fc.assert(
    fc.property(header, names, (buf, fieldNames) => {
      const { parsed } = tools.parseHeaders(buf);
      const patched = tools.getSigningHeaderLines(parsed, fieldNames, true);
      const reference = referenceSigningHeaders(parsed, fieldNames);
      deepStrictEqual(patched.keys, reference.keys);
      // The very same row objects, in the same order.
      return patched.headers.length === reference.headers.length && patched.headers.every((row, i) => row === reference.headers[i]);
    }),
    { numRuns: 2000 },
  );
  t.pass('2,000 generated headers and h= lists');
});

t.test('writeToStream hands the stream one chunk per turn of the event loop, every byte in order', async (t) => {
  const input = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
  const received: Buffer[] = [];
  let turns = 0;
  let writes = 0;
  let turnsBetweenWrites = 0;
  let lastTurn = -1;
  const count = (): void => {
    turns += 1;
    if (writes < 5) setImmediate(count);
  };
  setImmediate(count);
  // Like mailauth's MessageParser: the write finishes after a promise, so 'drain' comes in the same turn.
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      received.push(chunk);
      if (lastTurn >= 0 && turns > lastTurn) turnsBetweenWrites += 1;
      lastTurn = turns;
      writes += 1;
      void Promise.resolve().then(() => done());
    },
  });
  await tools.writeToStream(sink, input);
  t.ok(Buffer.concat(received).equals(input), 'the same bytes');
  t.equal(writes, 5, 'five chunks of 64 KB');
  t.equal(turnsBetweenWrites, 4, 'the event loop turned between each two chunks');
});

const signature = (domain: string, extra = ''): string =>
  `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=${domain}; s=sel; h=from;${extra} bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=AAAA`;
const noKey = async (): Promise<never> => {
  throw Object.assign(new Error('no such name'), { code: 'ENOTFOUND' });
};

t.test('maxSignatures: only the first signatures of the header are tried; unset, all of them', async (t) => {
  const raw = Buffer.from(`${[signature('a.test'), signature('b.test'), signature('c.test')].join('\r\n')}\r\nFrom: x@a.test\r\n\r\n`);
  t.equal((await dkimVerify(raw, { resolver: noKey })).results.length, 3);
  const limited = await dkimVerify(raw, { resolver: noKey, maxSignatures: 2 });
  t.same(
    limited.results.map((result) => (result as DkimResult & { signingDomain: string }).signingDomain),
    ['a.test', 'b.test'],
  );
  const none = await dkimVerify(raw, { resolver: noKey, maxSignatures: 0 });
  t.same(
    none.results.map((result) => result.status.result),
    ['none'],
    'none tried: as for a message without a signature',
  );
});

t.test('a signature with l= writes nothing to the console', async (t) => {
  const raw = Buffer.from(`${signature('a.test', ' l=999;')}\r\nFrom: x@a.test\r\n\r\nbody\r\n`);
  const logged: unknown[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => logged.push(args);
  try {
    await dkimVerify(raw, { resolver: noKey });
  } finally {
    console.log = original;
  }
  t.same(logged, []);
});

t.test("mailsplit's header lines are those of the header with its trailing line breaks cut by /[\\r\\n]+$/", async (t) => {
  const lines = (raw: Buffer) => new Headers(raw).getList().map((entry) => ({ key: entry.key, line: entry.line }));
  fc.assert(
    fc.property(header, (buf) => {
      const cut = Buffer.from(buf.toString('latin1').replace(/[\r\n]+$/, ''), 'latin1');
      deepStrictEqual(lines(buf), lines(cut));
    }),
    { numRuns: 2000 },
  );
  t.pass('2,000 generated headers');
  const run = Buffer.from(`X-Cr: a${'\r'.repeat(90_000)}\r\nX-Next: b\r\n\r\n`, 'latin1');
  t.same(
    new Headers(run).getList().map((entry) => entry.key),
    ['x-cr', 'x-next'],
    'a run of 90,000 CRs inside a field stays in it',
  );
});
