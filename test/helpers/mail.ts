import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '../../src/main.js';
import type { ParsedMessage } from '../../src/mime/parse.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** A raw RFC 822 fixture from test/fixtures, byte for byte. */
export const fixture = (name: string): Buffer => readFileSync(join(FIXTURES, name));

/** The names of the .eml fixtures. */
export const emlFixtures = (): string[] => readdirSync(FIXTURES).filter((file) => file.endsWith('.eml'));

/** The folder record of a mailbox address, read through the store. */
export const folderOf = async (app: App, address: string, folder = 'INBOX') => {
  const mailbox = await app.store.accounts.mailboxByAddress(address.toLowerCase());
  if (!mailbox) throw new Error(`no mailbox ${address}`);
  const record = await app.store.folders.byName(mailbox.id, folder);
  if (!record) throw new Error(`no folder ${folder} in ${address}`);
  return record;
};

/** The raw bytes the store keeps for a message, exactly as received (with our Received header). */
export const storedRaw = async (app: App, address: string, uid: number | string, folder = 'INBOX'): Promise<Buffer> => {
  const raw = await app.store.imap.raw((await folderOf(app, address, folder)).id, Number(uid));
  if (!raw) throw new Error(`no message ${uid} in ${folder} of ${address}`);
  return raw;
};

/**
 * Delivers through the inbound service directly (no SMTP), for seeding many messages fast.
 * Resolves once the message is in its mailbox: seeded in parallel, messages past the MX's
 * `smtp.queue.inlineLimit` are queued first (src/services/mail/inbound.ts), then delivered.
 */
export const deliverDirect = async (app: App, to: string[], raw: Buffer | string): Promise<void> => {
  await app.services.inbound.deliver({
    session: { id: 'seed', remoteAddress: '127.0.0.1', heloName: 'seed.test', protocol: 'ESMTP', tls: null },
    mailFrom: 'sender@example.org',
    recipients: to,
    raw: Buffer.isBuffer(raw) ? raw : Buffer.from(raw),
  });
  await inboundDelivered(app);
};

/** Until no message the MX accepted waits in the inbound queue. */
export const inboundDelivered = async (app: App): Promise<void> => {
  while (app.services.inbound.queuedCount() > 0) await new Promise((resolve) => setTimeout(resolve, 5));
};

/** A small RFC 5322 message with CRLF line ends. */
export const simpleMessage = (fields: { from?: string; to?: string; subject: string; body?: string; headers?: string[] }): Buffer =>
  Buffer.from(
    [
      `From: ${fields.from ?? 'sender@example.org'}`,
      `To: ${fields.to ?? 'agent@agents.localhost'}`,
      `Subject: ${fields.subject}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      ...(fields.headers ?? []),
      '',
      fields.body ?? 'body',
      '',
    ].join('\r\n'),
  );

/** A parsed plain-text message from a@example.org, for tests that append to the store directly. */
export const plainParsed = (subject: string, text: string): ParsedMessage => ({
  messageId: null,
  inReplyTo: null,
  references: [],
  subject,
  from: { email: 'a@example.org' },
  to: [],
  cc: [],
  date: null,
  text,
  html: null,
  attachments: [],
  encrypted: false,
  body: null,
});

/** Its raw form: the header fields the parse above reads, and the text. */
export const plainRaw = (subject: string, text: string): Buffer => Buffer.from(`From: a@example.org\r\nSubject: ${subject}\r\n\r\n${text}\r\n`);
