import { addressparser } from './nodemailer.js';
import type { Envelope, EnvelopeAddress } from '../core/stored-message.js';
import type { HeaderField } from './mime-tree.js';

/**
 * The ENVELOPE of a message (RFC 3501 section 7.4.2) from its header fields, values as on
 * the wire. Bounded: a field value is cut at MAX_FIELD_CHARS and an address list at
 * MAX_ADDRESSES entries, so a hostile header cannot make the stored form large.
 */

/** Longer than any honest header field (RFC 5322 section 2.1.1 folds lines at 998). */
export const MAX_FIELD_CHARS = 16 * 1024;
const MAX_ADDRESSES = 1_000;

/** The first field of that name (lowercased), cut to MAX_FIELD_CHARS, or null. */
export const firstField = (headers: readonly HeaderField[], name: string): string | null => {
  const value = headers.find((field) => field.name === name)?.value;
  return value === undefined ? null : value.slice(0, MAX_FIELD_CHARS);
};

export const envelopeOf = (headers: readonly HeaderField[]): Envelope => {
  const from = addressList(firstField(headers, 'from'));
  return {
    date: firstField(headers, 'date'),
    subject: firstField(headers, 'subject'),
    from,
    // RFC 3501: the server defaults sender and reply-to to from when their headers are absent.
    sender: addressList(firstField(headers, 'sender')) ?? from,
    replyTo: addressList(firstField(headers, 'reply-to')) ?? from,
    to: addressList(firstField(headers, 'to')),
    cc: addressList(firstField(headers, 'cc')),
    bcc: addressList(firstField(headers, 'bcc')),
    inReplyTo: firstField(headers, 'in-reply-to'),
    messageId: firstField(headers, 'message-id'),
  };
};

const addressList = (value: string | null): EnvelopeAddress[] | null => {
  if (value === null || value.trim() === '') return null;
  const out: EnvelopeAddress[] = [];
  for (const piece of topLevel(value, false)) {
    if (out.length >= MAX_ADDRESSES) break;
    if (piece.colon !== -1) {
      // RFC 3501: a group starts with (NIL NIL "name" NIL) and ends with (NIL NIL NIL NIL).
      out.push({ name: null, adl: null, mailbox: addressparser(`${piece.text.slice(0, piece.colon + 1)};`)[0]?.name || null, host: null });
      const members = piece.text.slice(piece.colon + 1).replace(/;\s*$/, '');
      for (const member of topLevel(members, true)) {
        if (out.length >= MAX_ADDRESSES) break;
        pushMailbox(out, member.text);
      }
      out.push({ name: null, adl: null, mailbox: null, host: null });
    } else {
      pushMailbox(out, piece.text);
    }
  }
  return out.length > 0 ? out : null;
};

/** One mailbox of an address list, parsed on its own so no neighbour is folded into its name. */
const pushMailbox = (out: EnvelopeAddress[], text: string): void => {
  const [entry] = addressparser(text);
  if (entry?.address) out.push(address(entry.name, entry.address));
  // A bare word ("To: localpart") is a mailbox without a domain, as Dovecot reads it.
  else if (entry?.name) out.push(address('', entry.name));
};

interface Piece {
  text: string;
  /** Where the group's ":" is, or -1 for a mailbox. */
  colon: number;
}

/**
 * An address list cut at its top-level commas (RFC 5322 section 3.4: address-list, group),
 * outside quoted strings, comments and angle brackets; a group stays one piece. The parser
 * alone would fold a name-only entry into the next one's display name ("localpart, Name
 * <x>" as one address named "localpart, Name"), where RFC 5322 and Dovecot read two.
 */
const topLevel = (value: string, inGroup: boolean): Piece[] => {
  const out: Piece[] = [];
  let start = 0;
  let colon = -1;
  let comment = 0;
  let quoted = false;
  let angle = false;
  const cut = (end: number, next: number) => {
    const text = value.slice(start, end);
    if (text.trim() !== '') out.push({ text, colon: colon === -1 ? -1 : colon - start });
    start = next;
    colon = -1;
  };
  for (let index = 0; index < value.length; index += 1) {
    const char = value[index];
    if (char === '\\' && (quoted || comment > 0)) index += 1;
    else if (quoted) quoted = char !== '"';
    else if (comment > 0) comment += char === '(' ? 1 : char === ')' ? -1 : 0;
    else if (char === '"') quoted = true;
    else if (char === '(') comment = 1;
    else if (char === '<') angle = true;
    else if (char === '>') angle = false;
    else if (angle) continue;
    else if (char === ':' && !inGroup && colon === -1) colon = index;
    else if (char === ';' && colon !== -1) cut(index + 1, index + 1);
    else if ((char === ',' || char === ';') && colon === -1) cut(index, index + 1);
  }
  cut(value.length, value.length);
  return out;
};

const address = (name: string, email: string): EnvelopeAddress => {
  const at = email.lastIndexOf('@');
  const host = at === -1 ? '' : email.slice(at + 1);
  return {
    name: name || null,
    adl: null,
    mailbox: at === -1 ? email : email.slice(0, at),
    // Never NIL: a NIL host marks RFC 3501 group syntax. A missing domain is named, as Dovecot names it.
    host: host === '' ? 'MISSING_DOMAIN' : host,
  };
};
