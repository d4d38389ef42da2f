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
  for (const entry of addressparser(value)) {
    if (out.length >= MAX_ADDRESSES) break;
    if (entry.group !== undefined) {
      // RFC 3501: a group starts with (NIL NIL "name" NIL) and ends with (NIL NIL NIL NIL).
      out.push({ name: null, adl: null, mailbox: entry.name || null, host: null });
      // Nested groups are flattened by the parser, so members are mailboxes.
      for (const member of entry.group) if (member.address !== undefined) out.push(address(member.name, member.address));
      out.push({ name: null, adl: null, mailbox: null, host: null });
    } else if (entry.address) {
      out.push(address(entry.name, entry.address));
    } else if (entry.name) {
      // A bare word ("To: localpart") is a mailbox without a domain, as Dovecot reads it.
      out.push(address('', entry.name));
    }
  }
  return out.length > 0 ? out : null;
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
