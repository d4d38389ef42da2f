/**
 * Hostile messages, as anyone on the Internet can send them to an MX: each one is built
 * here rather than kept as a file (several are megabytes). Used by the fault suite and by
 * bench:mixed. Every message has a known Subject and From in its top-level header, so a
 * test can check that what can be read was kept.
 */

export interface HostileMessage {
  name: string;
  /** The Subject in the top-level header ('' when the header itself is the attack). */
  subject: string;
  raw: Buffer;
  /** The MX's refusal, when the default header limits refuse it (docs/operators/inbound.md "Header limits"). */
  refusal?: RegExp;
}

const OVER_HEADER_LIMITS = /^552 5\.3\.4 the message header /;

const FROM = 'Mallory <mallory@example.net>';

const header = (name: string, extra: string[] = []): string =>
  `${[
    `From: ${FROM}`,
    'To: victim@example.org',
    `Subject: hostile ${name}`,
    'Date: Mon, 23 Nov 2026 10:00:00 +0000',
    `Message-ID: <${name}@example.net>`,
    'MIME-Version: 1.0',
    ...extra,
  ].join('\r\n')}\r\n`;

const message = (name: string, extra: string[], body: string | Buffer): HostileMessage => ({
  name,
  subject: `hostile ${name}`,
  raw: Buffer.concat([Buffer.from(header(name, extra), 'latin1'), Buffer.from('\r\n'), Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1')]),
});

/** 200,000 nested <div>s (2.2 MB): html-to-text is worse than quadratic on it. */
export const nestedHtmlBomb = (depth = 200_000): HostileMessage =>
  message('nested-html', ['Content-Type: text/html; charset=utf-8'], `<html><body>${'<div>'.repeat(depth)}deep${'</div>'.repeat(depth)}</body></html>\r\n`);

/** 1,000 levels of multipart, each with its own boundary. */
export const deepMime = (levels = 1_000): HostileMessage => {
  const open: string[] = [];
  const close: string[] = [];
  for (let level = 1; level < levels; level += 1) {
    open.push(`--b${level - 1}\r\nContent-Type: multipart/mixed; boundary="b${level}"\r\n\r\n`);
    close.unshift(`\r\n--b${level - 1}--\r\n`);
  }
  const body = `${open.join('')}--b${levels - 1}\r\nContent-Type: text/plain\r\n\r\nbottom\r\n--b${levels - 1}--\r\n${close.join('')}`;
  return message('deep-mime', ['Content-Type: multipart/mixed; boundary="b0"'], body);
};

/** 100,000 header fields before the body (2.6 MB of header). */
export const manyHeaders = (count = 100_000): HostileMessage => {
  const fields = Array.from({ length: count }, (_, index) => `X-Filler-${index}: value ${index}`);
  return { ...message('many-headers', ['Content-Type: text/plain', ...fields], 'body after many headers\r\n'), refusal: OVER_HEADER_LIMITS };
};

/** One 5 MB header line (no folding). */
export const hugeHeaderLine = (bytes = 5 * 1024 * 1024): HostileMessage => ({
  ...message('huge-header', ['Content-Type: text/plain', `X-Huge: ${'a'.repeat(bytes)}`], 'body after a huge header\r\n'),
  refusal: OVER_HEADER_LIMITS,
});

/** One field folded over 100,000 lines (0.4 MB): mailauth 4.13.3 took 40 s and more on it, in one step. */
export const foldedLines = (lines = 100_000): HostileMessage => ({
  ...message('folded-lines', ['Content-Type: text/plain', `X-Folded: a${'\r\n b'.repeat(lines)}`], 'body after a folded field\r\n'),
  refusal: OVER_HEADER_LIMITS,
});

/** 10,000 parts in one multipart. */
export const manyParts = (count = 10_000): HostileMessage => {
  const parts = Array.from({ length: count }, (_, index) => `--p\r\nContent-Type: text/plain\r\n\r\npart ${index}\r\n`);
  return message('many-parts', ['Content-Type: multipart/mixed; boundary="p"'], `${parts.join('')}--p--\r\n`);
};

/** NUL bytes in the header and the body. */
export const nulBytes = (): HostileMessage =>
  message('nul-bytes', ['Content-Type: text/plain; charset=utf-8', 'X-Nul: a\0b'], Buffer.from('before\0after\r\n\0\0\0\r\nend\r\n', 'latin1'));

/** Boundaries that never close, a part that never ends, and a close delimiter of another boundary. */
export const brokenBoundaries = (): HostileMessage =>
  message(
    'broken-boundaries',
    ['Content-Type: multipart/mixed; boundary="outer"'],
    [
      '--outer',
      'Content-Type: multipart/alternative; boundary="inner"',
      '',
      '--inner',
      'Content-Type: text/plain',
      '',
      'text with no end',
      '--other--',
      '--outer',
      'Content-Type: application/octet-stream',
      'Content-Transfer-Encoding: base64',
      '',
      'not*base64!!',
      '--inn',
      '',
    ].join('\r\n'),
  );

/** Bytes that are not UTF-8 in the Subject and in a display name, and an unknown charset. */
export const invalidUtf8Headers = (): HostileMessage => ({
  name: 'invalid-utf8',
  subject: '',
  raw: Buffer.concat([
    Buffer.from(
      `From: "Ma\xffl\xc3ory" <mallory@example.net>\r\nTo: victim@example.org\r\nSubject: bad \xc3\x28 \xff bytes =?x-unknown?B?AAAA?=\r\n`,
      'latin1',
    ),
    Buffer.from(
      'Date: Mon, 23 Nov 2026 10:00:00 +0000\r\nMessage-ID: <invalid-utf8@example.net>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nbody \xfe\xff\r\n',
      'latin1',
    ),
  ]),
});

const SIGNATURE = 'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.net; s=sel; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=AAAA';

/**
 * Headers within the default limits that the unpatched authentication checks (mailauth
 * 4.13.3) spent up to seconds on, each in one synchronous step: 9,900 folded lines, a field
 * with 90,000 bare CRs, an h= of 20,000 names that match no field over 8,000 fields, 500
 * signatures with their own l= over a 1 MB body, and a 24 MB body with one signature.
 */
export const authenticationBombs = (): HostileMessage[] => [
  message('folded-within-limits', ['Content-Type: text/plain', `X-Folded: a${'\r\n b'.repeat(9_900)}`], 'body\r\n'),
  message('bare-cr-run', ['Content-Type: text/plain', `X-Cr: a${'\r'.repeat(90_000)}`, 'X-Next: b'], 'body\r\n'),
  message(
    'h-tag-of-absent-names',
    ['Content-Type: text/plain', SIGNATURE.replace('b=AAAA', `h=${'a:'.repeat(20_000)}from; b=AAAA`), ...Array.from({ length: 8_000 }, () => 'X: 1')],
    'body\r\n',
  ),
  message(
    'many-signatures',
    ['Content-Type: text/plain', ...Array.from({ length: 500 }, (_, index) => SIGNATURE.replace('b=AAAA', `h=from; l=${30_000_000 + index}; b=AAAA`))],
    `${'x'.repeat(70)} \t \r\n`.repeat(14_000),
  ),
  message('large-signed-body', ['Content-Type: text/plain', SIGNATURE.replace('b=AAAA', 'h=from; b=AAAA')], `${'x'.repeat(70)} \t \r\n`.repeat(330_000)),
];

/** The whole corpus, in the order the fault suite sends it. */
export const hostileCorpus = (): HostileMessage[] => [
  nestedHtmlBomb(),
  deepMime(),
  manyHeaders(),
  hugeHeaderLine(),
  manyParts(),
  nulBytes(),
  brokenBoundaries(),
  invalidUtf8Headers(),
];
