import { simpleParser, type AddressObject, type Attachment, type ParsedMail } from 'mailparser';
import type { ParsedAttachment, ParsedMessage } from '../core/parsed-message.js';
import type { AddressEntry } from '../core/types.js';
import type { SearchText } from '../core/search-index.js';

// The shape lives in core so the injected ParseMail type can name it; re-exported for callers here.
export type { ParsedAttachment, ParsedMessage } from '../core/parsed-message.js';

const PREVIEW_LENGTH = 200;

export const parseMessage = async (raw: Buffer): Promise<ParsedMessage> => {
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, { skipHtmlToText: false, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true });
  } catch {
    // A message that cannot be parsed is still mail: keep it with empty fields.
    return emptyParse(raw);
  }
  return {
    messageId: mail.messageId ?? null,
    inReplyTo: mail.inReplyTo ?? null,
    references: toList(mail.references),
    subject: mail.subject ?? '',
    from: firstAddress(mail.from),
    to: addressList(mail.to),
    cc: addressList(mail.cc),
    date: dateOf(mail),
    text: mail.text ?? null,
    html: typeof mail.html === 'string' ? mail.html : null,
    attachments: mail.attachments.map(toAttachment),
    encrypted: isEncrypted(mail),
  };
};

const emptyParse = (raw: Buffer): ParsedMessage => ({
  messageId: null, inReplyTo: null, references: [], subject: '', from: null, to: [], cc: [], date: null,
  text: raw.toString('utf8'), html: null, attachments: [], encrypted: false,
});

export const previewOf = (parsed: ParsedMessage): string =>
  (parsed.text ?? '').replace(/\s+/g, ' ').trim().slice(0, PREVIEW_LENGTH);

/** What the full-text index holds of a message: subject, the From/To/Cc names and addresses, the text. */
export const searchTextOf = (parsed: ParsedMessage): SearchText => ({
  subject: parsed.subject, participants: participantsOf(parsed), body: parsed.text ?? '',
});

export const participantsOf = (parsed: ParsedMessage): string =>
  [parsed.from, ...parsed.to, ...parsed.cc]
    .filter((entry): entry is AddressEntry => entry !== null)
    .map((entry) => [entry.name, entry.email].filter(Boolean).join(' '))
    .join(' ');

const toList = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : value.split(/\s+/).filter(Boolean);

const entriesOf = (value: AddressObject | AddressObject[] | undefined): AddressEntry[] => {
  const objects = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const entries: AddressEntry[] = [];
  for (const object of objects) {
    for (const item of object.value) {
      // Group syntax (RFC 5322 section 3.4) nests its members.
      const members = item.group ?? [item];
      for (const member of members) {
        if (!member.address) continue;
        entries.push(member.name ? { name: member.name, email: member.address } : { email: member.address });
      }
    }
  }
  return entries;
};

const addressList = (value: AddressObject | AddressObject[] | undefined): AddressEntry[] => entriesOf(value);

const firstAddress = (value: AddressObject | undefined): AddressEntry | null => entriesOf(value)[0] ?? null;

const toAttachment = (attachment: Attachment): ParsedAttachment => ({
  filename: attachment.filename ?? null,
  contentType: attachment.contentType,
  size: attachment.size ?? attachment.content.length,
  content: attachment.content,
});

/**
 * The Date header (RFC 5322 section 3.6.1), or null. mailparser substitutes the time of
 * parsing for a Date it cannot read; that is not the message's date, so it is dropped.
 */
const dateOf = (mail: ParsedMail): number | null => {
  const header = mail.headerLines.find((line) => line.key === 'date');
  if (!header || !mail.date) return null;
  const value = header.line.slice(header.line.indexOf(':') + 1).replace(/\r?\n[ \t]/g, ' ').trim();
  return Number.isNaN(new Date(value).getTime()) ? null : mail.date.getTime();
};

const ENCRYPTED_TYPES = /^(multipart\/encrypted|application\/(pkcs7-mime|x-pkcs7-mime))/i;

const isEncrypted = (mail: ParsedMail): boolean => {
  const contentType = mail.headers.get('content-type');
  const value = typeof contentType === 'object' && contentType !== null && 'value' in contentType
    ? String((contentType as { value: unknown }).value)
    : String(contentType ?? '');
  return ENCRYPTED_TYPES.test(value);
};
