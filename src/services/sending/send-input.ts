import { domainOf, isValidAddress, normalizeAddress } from '../../core/addresses.js';
import { AppError, invalidInput } from '../../core/errors.js';
import { sha256Hex } from '../../core/ids.js';
import type { RecipientKind } from '../../core/types.js';
import type { ParsedMessage } from '../../core/parsed-message.js';
import type { HeaderLimits } from '../../mime/header-limits.js';
import { addressparser } from '../../mime/nodemailer.js';

/** The REST body / MCP arguments, as schema/send-request.json has already checked them. */
export interface SendRequest {
  to: string | string[];
  cc?: string | string[];
  bcc?: string | string[];
  replyTo?: string | string[];
  subject: string;
  body?: string;
  text?: string;
  html?: string;
  from?: string | { email: string; name?: string };
  idempotencyKey?: string;
  attachments?: { filename: string; content: string; encoding?: 'base64' | 'utf8'; contentType?: string }[];
  headers?: Record<string, string>;
}

export interface Mailbox {
  name?: string;
  address: string;
}

export interface OutgoingAttachment {
  filename: string;
  content: Buffer;
  contentType?: string;
}

/** A send request after every rule of docs/agents/sending.md: what gets composed, charged and hashed. */
export interface OutgoingMessage {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  subject: string;
  text?: string;
  html?: string;
  attachments: OutgoingAttachment[];
  /** Only List-Unsubscribe and List-Unsubscribe-Post, with their canonical names. */
  headers: Record<string, string>;
  /** Set by a reply (never by a send request): In-Reply-To and References (RFC 5322 section 3.6.4). */
  thread?: ThreadHeaders;
}

export interface ThreadHeaders {
  inReplyTo: string | null;
  references: string[];
}

export interface RecipientTarget {
  address: string;
  domain: string;
  kind: RecipientKind;
}

/** Limits the schema cannot check (config `limits.*`, docs/operators/configuration.md). */
export interface MessageLimits {
  textMaxBytes: number;
  attachmentsMaxBytes: number;
  /** Distinct recipients across to, cc and bcc (`limits.recipientsPerMessage`). */
  recipientsPerMessage: number;
  /** Items of one address list, a comma-separated string counted by its addresses (`limits.recipientsPerAddressList`). */
  recipientsPerAddressList: number;
}

/** Whether an address is an active alias of the sending mailbox (docs/agents/sending.md, Sender). */
export type AliasCheck = (address: string) => Promise<boolean>;

/** Applies the rules of docs/agents/sending.md that a JSON Schema cannot express. */
export const normalizeSendRequest = async (
  input: SendRequest,
  accountEmail: string,
  limits: MessageLimits,
  isAlias: AliasCheck = async () => false,
): Promise<OutgoingMessage> => {
  const text = nonEmpty(input.text) ?? nonEmpty(input.body);
  const html = nonEmpty(input.html);
  if (text === undefined && html === undefined) {
    throw invalidInput('body', 'one of body, text or html must be present and nonempty');
  }
  const textBytes = Buffer.byteLength(text ?? '', 'utf8') + Buffer.byteLength(html ?? '', 'utf8');
  if (textBytes > limits.textMaxBytes) {
    throw new AppError('too_large', `text plus html is ${textBytes} bytes, over the ${limits.textMaxBytes}-byte limit`, { field: html ? 'html' : 'text' });
  }
  const list = (value: string | string[] | undefined, field: string) => addressList(value, field, limits.recipientsPerAddressList);
  const message: OutgoingMessage = {
    from: await senderOf(input.from, accountEmail, isAlias),
    to: list(input.to, 'to'),
    cc: list(input.cc, 'cc'),
    bcc: list(input.bcc, 'bcc'),
    replyTo: list(input.replyTo, 'replyTo'),
    subject: input.subject,
    text,
    html,
    attachments: attachmentsOf(input.attachments ?? [], limits.attachmentsMaxBytes),
    headers: unsubscribeHeaders(input.headers ?? {}),
  };
  if (message.to.length === 0) throw invalidInput('to', 'to needs at least one address');
  const distinct = recipientsOf(message).length;
  if (distinct > limits.recipientsPerMessage) {
    throw invalidInput('to', `${distinct} distinct recipients across to, cc and bcc; at most ${limits.recipientsPerMessage}`);
  }
  return message;
};

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

/** One address, comma-separated addresses ("Name <a@b>" allowed), or an array of them. */
export const addressList = (value: string | string[] | undefined, field: string, maxItems: number): Mailbox[] => {
  if (value === undefined) return [];
  const items = (Array.isArray(value) ? value : [value]).flatMap((item) => addressparser(item, { flatten: true }));
  if (items.length > maxItems) throw invalidInput(field, `${field} has too many items: ${items.length} addresses, at most ${maxItems}`);
  return items.map((item, index) => {
    const address = item.address.trim();
    if (!isValidAddress(address)) throw invalidInput(field, `${field}[${index}] "${address || item.name}" is not a valid email address`);
    return item.name ? { name: item.name, address } : { address };
  });
};

/** The account's mailbox address or an active alias assigned to it, else 403 (docs/agents/sending.md, Sender). */
const senderOf = async (from: SendRequest['from'], accountEmail: string, isAlias: AliasCheck): Promise<Mailbox> => {
  if (from === undefined) return { address: accountEmail };
  // One mailbox is meant; more than one is refused as not this account's address.
  const [mailbox, ...others] = addressList(typeof from === 'string' ? from : from.email, 'from', Number.MAX_SAFE_INTEGER);
  const name = typeof from === 'string' ? mailbox?.name : from.name;
  const address = mailbox ? normalizeAddress(mailbox.address) : '';
  if (!mailbox || others.length > 0 || (address !== normalizeAddress(accountEmail) && !(await isAlias(address)))) {
    throw new AppError('forbidden', `from must be this account's address ${accountEmail} or an alias assigned to it`, { field: 'from' });
  }
  if (name !== undefined && /[\r\n]/.test(name)) throw invalidInput('from', 'from.name may not contain CR or LF');
  return name ? { name, address } : { address };
};

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/** Inline content only: a value that looks like a path or URL is just that text (docs/agents/sending.md, Content). */
const attachmentsOf = (items: NonNullable<SendRequest['attachments']>, maxBytes: number): OutgoingAttachment[] => {
  let total = 0;
  return items.map((item, index) => {
    if (/[\r\n\0]/.test(item.filename)) throw invalidInput(`attachments.${index}.filename`, 'filename may not contain CR, LF or NUL');
    if (item.encoding === 'base64' && !BASE64.test(item.content)) {
      throw invalidInput(`attachments.${index}.content`, `attachments[${index}].content is not valid base64`);
    }
    const content = Buffer.from(item.content, item.encoding === 'base64' ? 'base64' : 'utf8');
    total += content.length;
    if (total > maxBytes) {
      throw new AppError('too_large', `attachments exceed ${maxBytes} bytes decoded in total`, { field: 'attachments' });
    }
    return item.contentType ? { filename: item.filename, content, contentType: item.contentType } : { filename: item.filename, content };
  });
};

const LIST_UNSUBSCRIBE = 'List-Unsubscribe';
const LIST_UNSUBSCRIBE_POST = 'List-Unsubscribe-Post';
const ONE_CLICK = 'List-Unsubscribe=One-Click';
/** RFC 2369 section 2: one or more angle-bracketed URIs separated by commas. */
const URI_LIST = /^\s*<[^<>\s]+>(\s*,\s*<[^<>\s]+>)*\s*$/;

/** RFC 8058 (docs/agents/sending.md, Content): one-click needs an https URI and the exact POST value. */
const unsubscribeHeaders = (headers: Record<string, string>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const canonical = [LIST_UNSUBSCRIBE, LIST_UNSUBSCRIBE_POST].find((allowed) => allowed.toLowerCase() === name.toLowerCase());
    if (!canonical) throw invalidInput(`headers.${name}`, `header ${name} is not allowed; only List-Unsubscribe and List-Unsubscribe-Post`);
    if (/[\r\n]/.test(value)) throw invalidInput(`headers.${canonical}`, `${canonical} may not contain CR or LF`);
    out[canonical] = value.trim();
  }
  const list = out[LIST_UNSUBSCRIBE];
  if (list !== undefined && !URI_LIST.test(list)) {
    throw invalidInput(`headers.${LIST_UNSUBSCRIBE}`, 'List-Unsubscribe must be one or more <uri> separated by commas (RFC 2369)');
  }
  const post = out[LIST_UNSUBSCRIBE_POST];
  if (post !== undefined) {
    if (post !== ONE_CLICK) throw invalidInput(`headers.${LIST_UNSUBSCRIBE_POST}`, `List-Unsubscribe-Post must be exactly ${ONE_CLICK}`);
    const uris = list === undefined ? [] : [...list.matchAll(/<([^<>\s]+)>/g)].map((match) => match[1]);
    if (!uris.some(isHttpsUrl)) {
      throw invalidInput(`headers.${LIST_UNSUBSCRIBE}`, 'one-click unsubscribe needs an https URL in List-Unsubscribe (RFC 8058)');
    }
  }
  return out;
};

const isHttpsUrl = (value: string): boolean => {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
};

/** Distinct envelope recipients, in order; an address listed twice keeps its first kind. */
export const recipientsOf = (message: Pick<OutgoingMessage, 'to' | 'cc' | 'bcc'>): RecipientTarget[] => {
  const seen = new Map<string, RecipientTarget>();
  const kinds: [RecipientKind, Mailbox[]][] = [
    ['to', message.to],
    ['cc', message.cc],
    ['bcc', message.bcc],
  ];
  for (const [kind, list] of kinds) {
    for (const mailbox of list) {
      const address = normalizeAddress(mailbox.address);
      if (!seen.has(address)) seen.set(address, { address, domain: domainOf(address), kind });
    }
  }
  return [...seen.values()];
};

/**
 * What "identical message" means for idempotency: the same sender, recipients, subject,
 * bodies, headers and attachment bytes. Generated fields (Message-ID, Date) are not in it.
 */
export const contentHashOf = (message: OutgoingMessage): string =>
  sha256Hex(
    JSON.stringify({
      from: message.from,
      to: message.to,
      cc: message.cc,
      bcc: message.bcc,
      replyTo: message.replyTo,
      subject: message.subject,
      text: message.text ?? null,
      html: message.html ?? null,
      headers: message.headers,
      // A reply to another message is another message: the same key with it is a 409.
      ...(message.thread ? { thread: message.thread } : {}),
      attachments: message.attachments.map((item) => [item.filename, item.contentType ?? null, sha256Hex(item.content)]),
    }),
  );

/** A message ready to accept: composed, hashed, its recipients known. */
export interface PreparedSubmission {
  fromAddress: string;
  replyTo: string[];
  subject: string;
  recipients: RecipientTarget[];
  contentHash: string;
  messageId: string;
  /** What every recipient gets (no Bcc header). */
  raw: Buffer;
  /** The sender's Sent copy (Bcc kept). */
  sentRaw: Buffer;
  /** Known without parsing when we composed the message ourselves (compose.ts). */
  parsed?: ParsedMessage | null;
}

export interface SendingConfig extends MessageLimits {
  mailDomain: string;
  /** `smtp.hostname`: the host our trace field names on mail delivered here. */
  hostname: string;
  /** A message submitted over SMTP is refused past these (src/mime/header-limits.ts). */
  headerLimits: HeaderLimits;
  idempotencyRetentionMs: number;
  /** Config `limits.*` (docs/operators/configuration.md): the schema checks them in REST and MCP bodies. */
  idempotencyKeyMaxChars: number;
  subjectMaxChars: number;
  attachmentsPerMessage: number;
  attachmentFilenameMaxChars: number;
}
