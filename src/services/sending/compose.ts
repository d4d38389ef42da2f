import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import type { AddressEntry } from '../../core/types.js';
import type { ParsedMessage } from '../../mime/parse.js';
import type { Mailbox, OutgoingMessage } from './send-input.js';

export interface Composed {
  /** The message handed to every recipient: no Bcc header (RFC 5322 section 3.6.3). */
  raw: Buffer;
  /** The sender's Sent copy: the same message with its Bcc header kept. */
  sentRaw: Buffer;
}

/**
 * nodemailer's public way to get a composed message as bytes without sending it. This
 * transport writes every header it is given, Bcc included, so the recipients' copy is
 * composed without `bcc`.
 */
const composer = nodemailer.createTransport({ streamTransport: true, buffer: true });

const build = async (options: Mail.Options): Promise<Buffer> => (await composer.sendMail(options)).message as Buffer;

/**
 * Composes the message with nodemailer: Message-ID on our mail domain, Date, display names,
 * Reply-To, the unsubscribe headers and attachments. File and URL access are disabled, so
 * attachment content is only ever the inline bytes.
 */
export const composeMessage = async (message: OutgoingMessage, messageId: string, date: Date): Promise<Composed> => {
  const options: Mail.Options = {
    from: message.from,
    to: message.to,
    cc: message.cc.length > 0 ? message.cc : undefined,
    replyTo: message.replyTo.length > 0 ? message.replyTo : undefined,
    subject: message.subject,
    text: message.text,
    html: message.html,
    headers: message.headers,
    ...(message.thread?.inReplyTo ? { inReplyTo: message.thread.inReplyTo } : {}),
    ...(message.thread && message.thread.references.length > 0 ? { references: message.thread.references } : {}),
    attachments: message.attachments.map((item) => ({ filename: item.filename, content: item.content, contentType: item.contentType })),
    messageId,
    date,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  const raw = await build(options);
  if (message.bcc.length === 0) return { raw, sentRaw: raw };
  return { raw, sentRaw: await build({ ...options, bcc: message.bcc }) };
};

/**
 * The parsed fields of a message we composed ourselves, taken from its input rather than
 * by parsing the MIME we just built (the parse was half the CPU of an accepted send).
 * Null when the parse would add something the input lacks: mailparser derives the text of
 * an HTML-only message, and the composer infers an attachment's type from its name.
 */
export const parsedOfComposed = (message: OutgoingMessage, messageId: string, date: Date): ParsedMessage | null => {
  if (message.text === undefined || message.attachments.some((item) => item.contentType === undefined)) return null;
  return {
    messageId,
    inReplyTo: message.thread?.inReplyTo ?? null,
    references: message.thread?.references ?? [],
    subject: message.subject,
    from: entryOf(message.from),
    to: message.to.map(entryOf),
    cc: message.cc.map(entryOf),
    // The Date header carries whole seconds (RFC 5322 section 3.3).
    date: Math.floor(date.getTime() / 1000) * 1000,
    text: message.text,
    html: message.html ?? null,
    attachments: message.attachments.map((item) => ({ filename: item.filename, contentType: item.contentType as string, size: item.content.length })),
    encrypted: false,
    // Built from the composed bytes by a parse worker afterwards (src/services/mail/bodies.ts).
    body: null,
  };
};

const entryOf = (mailbox: Mailbox): AddressEntry => (mailbox.name ? { name: mailbox.name, email: mailbox.address } : { email: mailbox.address });
