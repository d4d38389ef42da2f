/**
 * The MIME structure of a stored message as byte offsets into its raw RFC 822 bytes, so
 * every part can be served byte-exact (RFC 3501 section 6.4.5 BODY[section]) without
 * decoding anything. Received content is untrusted: depth and part counts are capped,
 * and a malformed structure degrades to a single opaque part instead of failing.
 */
export interface HeaderField {
  /** Lowercased field name. */
  name: string;
  /** The value with folding removed, still encoded as on the wire. */
  value: string;
}

export interface ContentType {
  type: string;
  subtype: string;
  params: [string, string][];
}

export interface MimePart {
  /** Offset of the first header byte. */
  start: number;
  /** Offset of the first body byte (after the blank line). */
  bodyStart: number;
  /** Offset after the last body byte. */
  end: number;
  headers: HeaderField[];
  contentType: ContentType;
  /** Sub-parts of a multipart, or the one encapsulated message of a message/rfc822. */
  children: MimePart[];
  /** True when the depth or part budget stopped the parse before this part's body was looked into. */
  truncated: boolean;
}

/** The structure budget: deeper or further parts stay inside their parent as opaque bytes. */
export const MAX_DEPTH = 16;
export const MAX_PARTS = 500;

export const parseMimeTree = (raw: Buffer): MimePart => {
  const budget = { parts: 0 };
  return parsePart(raw, 0, raw.length, 0, budget, DEFAULT_TYPE);
};

/** Whether the budget cut the tree anywhere (a part left opaque or a sibling left out). */
export const isTruncated = (part: MimePart): boolean => part.truncated || part.children.some(isTruncated);

const DEFAULT_TYPE: ContentType = { type: 'text', subtype: 'plain', params: [['charset', 'us-ascii']] };
const DIGEST_DEFAULT: ContentType = { type: 'message', subtype: 'rfc822', params: [] };

const parsePart = (raw: Buffer, start: number, end: number, depth: number, budget: { parts: number }, fallback: ContentType): MimePart => {
  budget.parts += 1;
  const bodyStart = headerEnd(raw, start, end);
  const headers = parseHeaderFields(raw.subarray(start, bodyStart));
  const typeField = headers.find((field) => field.name === 'content-type');
  const contentType = typeField ? (parseContentType(typeField.value) ?? DEFAULT_TYPE) : fallback;
  const part: MimePart = { start, bodyStart, end, headers, contentType, children: [], truncated: false };
  const container = contentType.type === 'multipart' || (contentType.type === 'message' && contentType.subtype === 'rfc822');
  if (container && (depth >= MAX_DEPTH || budget.parts >= MAX_PARTS)) {
    part.truncated = true;
    return part;
  }
  if (contentType.type === 'multipart') {
    const boundary = paramOf(contentType, 'boundary');
    const childDefault = contentType.subtype === 'digest' ? DIGEST_DEFAULT : DEFAULT_TYPE;
    if (boundary) {
      for (const [childStart, childEnd] of splitMultipart(raw, bodyStart, end, boundary)) {
        if (budget.parts >= MAX_PARTS) {
          part.truncated = true;
          break;
        }
        part.children.push(parsePart(raw, childStart, childEnd, depth + 1, budget, childDefault));
      }
    }
  } else if (contentType.type === 'message' && contentType.subtype === 'rfc822') {
    part.children.push(parsePart(raw, bodyStart, end, depth + 1, budget, DEFAULT_TYPE));
  }
  return part;
};

/** The offset after the blank line that ends the header (CRLF CRLF, or bare LF LF). */
export const headerEnd = (raw: Buffer, start: number, end: number): number => {
  if (raw[start] === 0x0a) return start + 1;
  if (raw[start] === 0x0d && raw[start + 1] === 0x0a) return start + 2;
  let index = start;
  while (index < end) {
    const lf = raw.indexOf(0x0a, index);
    if (lf === -1 || lf >= end) return end;
    const next = lf + 1;
    if (raw[next] === 0x0a) return Math.min(next + 1, end);
    if (raw[next] === 0x0d && raw[next + 1] === 0x0a) return Math.min(next + 2, end);
    index = next;
  }
  return end;
};

/** Each header field's exact bytes (with its folded lines and line ends), for HEADER.FIELDS. */
export const headerBlocks = (header: Buffer): { name: string; bytes: Buffer }[] => {
  const blocks: { name: string; bytes: Buffer }[] = [];
  let index = 0;
  while (index < header.length) {
    const lf = header.indexOf(0x0a, index);
    const next = lf === -1 ? header.length : lf + 1;
    const first = header[index];
    const isBlank = first === 0x0a || (first === 0x0d && header[index + 1] === 0x0a);
    if (isBlank) break;
    if ((first === 0x20 || first === 0x09) && blocks.length > 0) {
      const last = blocks[blocks.length - 1];
      last.bytes = Buffer.concat([last.bytes, header.subarray(index, next)]);
    } else {
      const colon = header.indexOf(0x3a, index);
      const name = colon !== -1 && colon < next ? header.toString('latin1', index, colon).trim().toLowerCase() : '';
      blocks.push({ name, bytes: header.subarray(index, next) });
    }
    index = next;
  }
  return blocks;
};

/** RFC 5322 section 2.2: a line starting with WSP continues the previous field. */
export const parseHeaderFields = (header: Buffer): HeaderField[] => parseHeaderText(header.toString('latin1'));

/** parseHeaderFields over text already decoded (e.g. the UTF-8 blocks of a delivery-status part). */
export const parseHeaderText = (text: string): HeaderField[] => {
  const fields: HeaderField[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line === '') continue;
    if ((line[0] === ' ' || line[0] === '\t') && fields.length > 0) {
      // A value that starts on a continuation line keeps no leading blanks ("Subject:" CRLF " text").
      const field = fields[fields.length - 1];
      field.value = field.value === '' ? line.trimStart() : field.value + line;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    fields.push({ name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1).trim() });
  }
  return fields;
};

/** RFC 2045 section 5.1; RFC 2231 continuations are passed through under their own names. */
export const parseContentType = (value: string): ContentType | null => {
  const match = /^\s*([^\s/;]+)\s*\/\s*([^\s;]+)\s*(.*)$/s.exec(value);
  if (!match) return null;
  return { type: match[1].toLowerCase(), subtype: match[2].toLowerCase(), params: parseParams(match[3]) };
};

/** RFC 2183 Content-Disposition: a token and parameters, like Content-Type. */
export const parseDisposition = (value: string): { kind: string; params: [string, string][] } | null => {
  const match = /^\s*([^\s;]+)\s*(.*)$/s.exec(value);
  return match ? { kind: match[1].toLowerCase(), params: parseParams(match[2]) } : null;
};

const parseParams = (text: string): [string, string][] => {
  const params: [string, string][] = [];
  for (const param of text.matchAll(/;\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g)) {
    const rawValue = param[2].trim();
    const unquoted = rawValue.startsWith('"') ? rawValue.slice(1, -1).replace(/\\(.)/g, '$1') : rawValue;
    params.push([param[1].toLowerCase(), unquoted]);
  }
  return params;
};

export const paramOf = (contentType: ContentType, name: string): string | undefined => contentType.params.find(([key]) => key === name)?.[1];

/**
 * RFC 2046 section 5.1.1: a delimiter is CRLF "--" boundary at the start of a line; the
 * CRLF before it belongs to the delimiter, not to the part before.
 */
const splitMultipart = (raw: Buffer, start: number, end: number, boundary: string): [number, number][] => {
  const marker = Buffer.from(`--${boundary}`, 'latin1');
  const parts: [number, number][] = [];
  let partStart = -1;
  let index = start;
  while (index < end) {
    const found = raw.indexOf(marker, index);
    if (found === -1 || found + marker.length > end) break;
    const atLineStart = found === start || raw[found - 1] === 0x0a;
    const isClose = raw[found + marker.length] === 0x2d && raw[found + marker.length + 1] === 0x2d;
    // A delimiter line is the boundary alone, then optional blanks (RFC 2046 section 5.1.1
    // transport-padding): "--b1" is not a delimiter of "--b10".
    if (!atLineStart || (!isClose && !endsDelimiterLine(raw, found + marker.length, end))) {
      index = found + 1;
      continue;
    }
    if (partStart !== -1) parts.push([partStart, lineBreakStart(raw, found, partStart)]);
    if (isClose) return parts;
    const lineEnd = raw.indexOf(0x0a, found + marker.length);
    if (lineEnd === -1 || lineEnd >= end) return parts;
    partStart = lineEnd + 1;
    index = partStart;
  }
  if (partStart !== -1) parts.push([partStart, end]);
  return parts;
};

/** Whether only blanks stand between `from` and the end of its line (or of the range). */
const endsDelimiterLine = (raw: Buffer, from: number, end: number): boolean => {
  let index = from;
  while (index < end && (raw[index] === 0x20 || raw[index] === 0x09)) index += 1;
  return index >= end || raw[index] === 0x0a || (raw[index] === 0x0d && raw[index + 1] === 0x0a);
};

const lineBreakStart = (raw: Buffer, delimiter: number, floor: number): number => {
  let cut = delimiter;
  if (cut > floor && raw[cut - 1] === 0x0a) cut -= 1;
  if (cut > floor && raw[cut - 1] === 0x0d) cut -= 1;
  return cut;
};

/**
 * RFC 3501 section 6.4.5 part numbers: in a multipart, N is the Nth child; a message that
 * is not multipart has one part, 1, its body; a message/rfc822 part's sub-parts are those
 * of the message it carries.
 */
export const findPart = (root: MimePart, path: readonly number[]): MimePart | null => {
  let node = root;
  let isMessage = true;
  for (const number of path) {
    const encapsulated = encapsulatedMessage(node);
    if (!isMessage && encapsulated) {
      node = encapsulated;
      isMessage = true;
    }
    if (node.contentType.type === 'multipart') {
      const child = node.children[number - 1];
      if (!child) return null;
      node = child;
      isMessage = false;
    } else if (isMessage && number === 1) {
      isMessage = false;
    } else {
      return null;
    }
  }
  return node;
};

/** The message a message/rfc822 part carries, or null for any other part. */
export const encapsulatedMessage = (part: MimePart): MimePart | null =>
  part.contentType.type === 'message' && part.contentType.subtype === 'rfc822' && part.children.length === 1 ? part.children[0] : null;
