import { domainOf, isValidAddress, normalizeAddress } from '../../core/addresses.js';
import { someInOrder } from '../../core/sequential.js';
import { AppError, invalidInput } from '../../core/errors.js';
import { newUuid, sha256Hex } from '../../core/ids.js';
import type { RecipientKind } from '../../core/types.js';
import { headerFieldValues, mailboxesOf } from '../../mime/header-fields.js';
import { checkHeaderLimits } from '../../mime/header-limits.js';
import type { ParseMail, ParsedMessage } from '../../core/parsed-message.js';
import { decodeBody } from '../../mime/transfer-encoding.js';
import { normalizeSendRequest, type AliasCheck, type RecipientTarget } from './send-input.js';
import type { PreparedSubmission, SendingConfig } from './send-input.js';

export interface RawEnvelope {
  /** MAIL FROM; empty for the null sender. */
  from: string;
  /** RCPT TO, in order. */
  to: string[];
}

const HEADER_END = /\r?\n\r?\n/;

/**
 * Applies the Send request rules to a message an SMTP client composed itself: the header
 * From and the envelope sender must be the account's address or an alias assigned to its
 * mailbox (docs/agents/sending.md, Sender), at most 50 distinct valid
 * recipients, subject, body, attachment and unsubscribe rules as for REST. Message-ID and
 * Date are added when missing (RFC 5322 section 3.6); the Bcc header is removed from the
 * copy the recipients get (section 3.6.3) and kept in the Sent copy. A header over the MX's
 * limits is refused first, as the MX refuses it (src/mime/header-limits.ts).
 */
export const prepareRawSubmission = async (
  envelope: RawEnvelope,
  raw: Buffer,
  accountEmail: string,
  config: SendingConfig,
  now: Date,
  parse: ParseMail,
  isAlias: AliasCheck = async () => false,
): Promise<{ prepared: PreparedSubmission; idempotencyKey?: string }> => {
  checkHeaderLimits(raw, config.headerLimits);
  const parsed = await parse(raw);
  const account = normalizeAddress(accountEmail);
  const mayUse = async (address: string) => address === account || (await isAlias(address));
  if (!(await mayUse(normalizeAddress(envelope.from))))
    throw new AppError('forbidden', `the envelope sender must be ${accountEmail} or an alias assigned to it`, { field: 'from' });
  const from = parsed.from ? normalizeAddress(parsed.from.email) : '';
  if (!(await mayUse(from))) {
    throw new AppError('forbidden', `the From header must be this account's address ${accountEmail} or an alias assigned to it`, { field: 'from' });
  }
  await checkIdentityFields(raw, mayUse, account);
  await checkContent(parsed, raw, accountEmail, config);
  const recipients = envelopeRecipients(envelope.to, parsed, config.recipientsPerMessage);
  const contentHash = sha256Hex(Buffer.concat([Buffer.from(`${JSON.stringify(recipients.map((r) => r.address))}\n`), raw]));
  const added: string[] = [];
  let messageId = parsed.messageId;
  if (!messageId) {
    messageId = `<${newUuid()}@${config.mailDomain}>`;
    added.push(`Message-ID: ${messageId}`);
  }
  if (!hasHeader(raw, 'date')) added.push(`Date: ${rfc5322Date(now)}`);
  const sentRaw = added.length === 0 ? raw : Buffer.concat([Buffer.from(`${added.join('\r\n')}\r\n`), raw]);
  return {
    prepared: {
      fromAddress: from,
      replyTo: [],
      subject: parsed.subject,
      recipients,
      contentHash,
      messageId,
      raw: withoutBcc(sentRaw),
      sentRaw,
    },
    idempotencyKey: parsed.messageId ? `smtp:${sha256Hex(parsed.messageId)}` : undefined,
  };
};

/**
 * Fields that name who wrote or sent the message (RFC 5322 sections 3.6.2 and 3.6.6) may name
 * only the authenticated mailbox: From (every mailbox in it, not just the first), and Sender,
 * Resent-From and Resent-Sender when present. A message naming anyone else is refused (550
 * 5.7.1), not rewritten: the client learns why, and nothing it composed is changed behind it.
 */
const IDENTITY_FIELDS = ['From', 'Sender', 'Resent-From', 'Resent-Sender'] as const;

const checkIdentityFields = async (raw: Buffer, mayUse: AliasCheck, account: string): Promise<void> => {
  for (const name of IDENTITY_FIELDS) {
    const values = headerFieldValues(raw, name);
    // RFC 5322 section 3.6: From and Sender occur at most once.
    if (values.length > 1 && (name === 'From' || name === 'Sender')) {
      throw new AppError('forbidden', `the message has more than one ${name} header`, { field: name.toLowerCase() });
    }
    for (const value of values) {
      const mailboxes = mailboxesOf(value);
      if (mailboxes.length === 0 || (await someInOrder(mailboxes, async (mailbox) => !(await mayUse(mailbox))))) {
        throw new AppError('forbidden', `the ${name} header may name only this account's address ${account} or its aliases`, { field: name.toLowerCase() });
      }
    }
  }
};

/** The REST rules on what the parser found: subject, bodies and sizes, attachments, unsubscribe. */
const checkContent = async (parsed: ParsedMessage, raw: Buffer, accountEmail: string, config: SendingConfig): Promise<void> => {
  if (parsed.subject.length > config.subjectMaxChars) throw invalidInput('subject', `the subject is over ${config.subjectMaxChars} characters`);
  const unsubscribe: Record<string, string> = {};
  for (const name of ['List-Unsubscribe', 'List-Unsubscribe-Post']) {
    const value = headerValue(raw, name);
    if (value !== null) unsubscribe[name] = value;
  }
  if (parsed.attachments.length > config.attachmentsPerMessage) throw invalidInput('attachments', `at most ${config.attachmentsPerMessage} attachments`);
  await normalizeSendRequest(
    {
      to: accountEmail,
      subject: parsed.subject,
      text: parsed.text ?? undefined,
      html: parsed.html ?? undefined,
      headers: unsubscribe,
      // Each attachment's bytes, decoded from where the parse found them.
      attachments: (parsed.body?.content.attachments ?? []).map((item, index) => ({
        filename: (item.filename ?? `attachment-${index + 1}`).slice(0, config.attachmentFilenameMaxChars),
        content: decodeBody(raw.subarray(item.bodyStart, item.end), item.encoding).toString('base64'),
        encoding: 'base64' as const,
      })),
    },
    accountEmail,
    config,
  );
};

/** RCPT TO addresses; the kind comes from the To and Cc headers, anything else is Bcc. */
const envelopeRecipients = (addresses: string[], parsed: ParsedMessage, maxRecipients: number): RecipientTarget[] => {
  const toSet = new Set(parsed.to.map((entry) => normalizeAddress(entry.email)));
  const ccSet = new Set(parsed.cc.map((entry) => normalizeAddress(entry.email)));
  const seen = new Map<string, RecipientTarget>();
  for (const original of addresses) {
    const address = normalizeAddress(original);
    if (!isValidAddress(address)) throw invalidInput('to', `${original} is not a valid email address`);
    const kind: RecipientKind = toSet.has(address) ? 'to' : ccSet.has(address) ? 'cc' : 'bcc';
    if (!seen.has(address)) seen.set(address, { address, domain: domainOf(address), kind });
  }
  if (seen.size === 0) throw invalidInput('to', 'no recipients');
  if (seen.size > maxRecipients) throw invalidInput('to', `at most ${maxRecipients} distinct recipients`);
  return [...seen.values()];
};

const headerSection = (raw: Buffer): string => {
  const text = raw.subarray(0, Math.min(raw.length, 256 * 1024)).toString('latin1');
  const end = text.search(HEADER_END);
  return end === -1 ? text : text.slice(0, end);
};

/** Unfolded header lines (RFC 5322 section 2.2.3). */
const headerLines = (raw: Buffer): string[] => headerSection(raw).split(/\r?\n(?![ \t])/);

const hasHeader = (raw: Buffer, name: string): boolean => headerLines(raw).some((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`));

const headerValue = (raw: Buffer, name: string): string | null => {
  const line = headerLines(raw).find((candidate) => candidate.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line === undefined
    ? null
    : line
        .slice(name.length + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim();
};

/** Removes Bcc header fields, folded continuation lines included. */
export const withoutBcc = (raw: Buffer): Buffer => {
  const text = raw.toString('latin1');
  const end = text.search(HEADER_END);
  if (end === -1) return raw;
  const head = text.slice(0, end);
  const kept = head.replace(/(^|\r?\n)bcc:[^\r\n]*(\r?\n[ \t][^\r\n]*)*/gi, '');
  if (kept === head) return raw;
  return Buffer.concat([Buffer.from(kept.replace(/^\r?\n/, ''), 'latin1'), raw.subarray(Buffer.byteLength(head, 'latin1'))]);
};

/** RFC 5322 section 3.3 date-time in UTC, e.g. "Thu, 01 Jan 2026 00:00:00 +0000". */
const rfc5322Date = (date: Date): string => date.toUTCString().replace(/GMT$/, '+0000');
