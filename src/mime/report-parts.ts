import type { HeaderField, MimePart } from './mime-tree.js';

/**
 * Pieces shared by the readers of machine-generated reports that come back to our bounce
 * addresses: RFC 3464 delivery status notifications (dsn.ts) and RFC 5965 feedback
 * reports (arf.ts). Both are multipart/report messages read over parseMimeTree.
 */

/** `type/subtype` of a part, lower-cased as parseMimeTree keeps them. */
export const typeOf = (part: MimePart): string => `${part.contentType.type}/${part.contentType.subtype}`;

/** The first field of that (lower-cased) name, trimmed. */
export const firstField = (fields: readonly HeaderField[], name: string): string | undefined => fields.find((field) => field.name === name)?.value.trim();

/**
 * A part's body with its transfer encoding undone (RFC 2045 section 6). Report parts are
 * message/* types that may not be encoded (RFC 2046 section 5.2.1), but some reporters do it anyway.
 */
export const decodedBody = (raw: Buffer, part: MimePart): Buffer => {
  const body = raw.subarray(part.bodyStart, part.end);
  const encoding = firstField(part.headers, 'content-transfer-encoding')?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (encoding === 'quoted-printable') {
    const text = body.toString('latin1').replace(/=\r?\n/g, '');
    return Buffer.from(
      text.replace(/=([0-9A-Fa-f]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    );
  }
  return body;
};

/**
 * The address of a typed address field, `rfc822; user@example.com` (RFC 3464 section
 * 2.3.2) or a bare `<user@example.com>`, without the type and the angle brackets.
 */
export const typedAddress = (value: string): string => {
  const semi = value.indexOf(';');
  return (semi >= 0 ? value.slice(semi + 1) : value).trim().replace(/^<(.*)>$/, '$1');
};
