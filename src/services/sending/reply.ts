import { normalizeAddress } from '../../core/addresses.js';
import { invalidInput } from '../../core/errors.js';
import type { EnvelopeAddress } from '../../core/stored-message.js';
import { messageIdsIn } from '../../core/thread-keys.js';
import type { AddressEntry, Principal, SubmissionVia } from '../../core/types.js';
import { requirePermission } from '../access/auth.js';
import type { MessageBodyService } from '../mail/bodies.js';
import type { LocatedMessage, MailboxService } from '../mail/mailbox.js';
import type { SendRequest, ThreadHeaders } from './send-input.js';
import type { SendingService, SendResult } from './sending.js';

/** The body of a reply (schema/reply-request.json). */
export interface ReplyRequest {
  text: string;
  html?: string;
  attachments?: SendRequest['attachments'];
  idempotencyKey?: string;
  quote?: boolean;
}

export interface ReplyTarget {
  uid: number;
  folder: string;
  uidValidity?: string;
  /** Reply-all: the original's other recipients in cc. */
  all: boolean;
}

/** References kept in a reply: the first (the thread's root) and the nearest ones. */
const MAX_REFERENCES = 20;
const SUBJECT_MAX = 998;

/**
 * Replies to a stored message: the recipients, subject and thread headers come from the
 * original, and the message goes through the one send path (SendingService.send), so
 * credits, limits, idempotency and a limited key's allowed recipients all apply.
 */
export class ReplyService {
  constructor(
    private readonly mailbox: MailboxService,
    private readonly bodies: MessageBodyService,
    private readonly sending: SendingService,
  ) {}

  async reply(principal: Principal, target: ReplyTarget, input: ReplyRequest, options: { idempotencyKey?: string; via: SubmissionVia }): Promise<SendResult> {
    requirePermission(principal, 'mail:send');
    // The quote carries the original's text to the recipients: a key that may not read it may not quote it.
    if (input.quote) requirePermission(principal, 'mail:read');
    const original = await this.mailbox.locate(principal.accountId, target);
    const [content, structure] = await Promise.all([this.bodies.content(original.summary.rowId), this.bodies.structure(original.summary.rowId)]);
    const { to, cc } = recipientsOf(original, structure.envelope.replyTo, target.all);
    if (to.length === 0) throw invalidInput('id', 'the message has no address to reply to');
    const quoted = input.quote ? quoteOf(original, content.text) : null;
    const request: SendRequest = {
      to: to.map(display),
      ...(cc.length > 0 ? { cc: cc.map(display) } : {}),
      subject: replySubject(original.summary.subject),
      text: quoted ? `${input.text}\n\n${quoted.text}` : input.text,
      ...(input.html !== undefined ? { html: quoted ? `${input.html}${quoted.html}` : input.html } : {}),
      ...(input.attachments ? { attachments: input.attachments } : {}),
      ...(input.idempotencyKey !== undefined ? { idempotencyKey: input.idempotencyKey } : {}),
    };
    return this.sending.send(principal, request, { ...options, thread: threadHeadersOf(original, content.references) });
  }
}

/**
 * RFC 5322 section 3.6.3: a reply goes to Reply-To when the original has one, else to its
 * From. A reply to a message this mailbox sent goes to that message's recipients, as mail
 * clients do. Reply-all adds the original's To and Cc in cc, without this mailbox and
 * without the addresses already in to.
 */
const recipientsOf = (original: LocatedMessage, replyTo: EnvelopeAddress[] | null, all: boolean): { to: AddressEntry[]; cc: AddressEntry[] } => {
  const own = normalizeAddress(original.mailbox.address);
  const { from, to, cc } = original.summary;
  const ownMessage = from !== null && normalizeAddress(from.email) === own;
  const replyToEntries = (replyTo ?? []).flatMap((entry) => (entry.mailbox && entry.host ? [{ email: `${entry.mailbox}@${entry.host}` }] : []));
  const primary = ownMessage ? to : replyToEntries.length > 0 && !sameList(replyToEntries, from) ? replyToEntries : from ? [from] : [];
  const others = all ? (ownMessage ? cc : [...to, ...cc]) : [];
  const seen = new Set([own]);
  const keep = (entry: AddressEntry): boolean => {
    const key = normalizeAddress(entry.email);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
  return { to: primary.filter(keep), cc: others.filter(keep) };
};

/** The stored ENVELOPE defaults Reply-To to From (RFC 3501): then From, with its decoded name, is the one to use. */
const sameList = (entries: AddressEntry[], from: AddressEntry | null): boolean =>
  from !== null && entries.length === 1 && normalizeAddress(entries[0].email) === normalizeAddress(from.email);

const display = (entry: AddressEntry): string => (entry.name ? `"${entry.name.replace(/["\\\r\n]/g, ' ')}" <${entry.email}>` : entry.email);

/** RFC 5322 section 3.6.5: "Re: " once, before the original subject. */
export const replySubject = (subject: string): string => {
  const clean = subject.replace(/[\r\n]+/g, ' ');
  return (/^\s*re\s*:/i.test(clean) ? clean : `Re: ${clean}`).slice(0, SUBJECT_MAX);
};

/**
 * RFC 5322 section 3.6.4: In-Reply-To is the parent's Message-ID; References is the
 * parent's References (or, without them, its In-Reply-To when that holds one id) followed
 * by the parent's Message-ID, trimmed to the first and the nearest ids.
 */
export const threadHeadersOf = (original: LocatedMessage, parentReferences: readonly string[]): ThreadHeaders => {
  const own = messageIdsIn(original.summary.messageId)[0] ?? null;
  const parentInReplyTo = messageIdsIn(original.summary.inReplyTo);
  const earlier = parentReferences.length > 0 ? messageIdsIn(parentReferences.join(' ')) : parentInReplyTo.length === 1 ? parentInReplyTo : [];
  const all = own ? [...earlier.filter((id) => id !== own), own] : earlier;
  const references = all.length <= MAX_REFERENCES ? all : [all[0], ...all.slice(-(MAX_REFERENCES - 1))];
  return { inReplyTo: own, references };
};

/** The original's text quoted with ">" after an attribution line; in HTML, escaped inside a cite blockquote. */
const quoteOf = (original: LocatedMessage, text: string): { text: string; html: string } => {
  const { from, date } = original.summary;
  const who = from ? (from.name ? `${from.name} <${from.email}>` : from.email) : 'the sender';
  const attribution = `On ${date !== null ? new Date(date).toUTCString() : 'an earlier date'}, ${who} wrote:`;
  const lines = text.replace(/\r\n/g, '\n').trimEnd().split('\n');
  return {
    text: `${attribution}\n${lines.map((line) => (line === '' ? '>' : `> ${line}`)).join('\n')}`,
    html: `<div>${escapeHtml(attribution)}</div><blockquote type="cite">${lines.map(escapeHtml).join('<br>')}</blockquote>`,
  };
};

const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] as string);
