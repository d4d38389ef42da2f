import nodemailer from 'nodemailer';
import { envelopeAddress } from '../core/addresses.js';
import type { DkimKey, HandoffRequest, RecipientResult } from '../core/outbound.js';
import { NotConvertible, toSevenBit, transportNeedsOf, type TransportNeeds } from '../mime/seven-bit.js';

/** What to hand one server: the bytes, the envelope and what MAIL FROM declares. */
export interface Prepared {
  message: Buffer;
  envelope: { from: string; to: string[]; use8BitMime: boolean };
  /** SMTPUTF8 on MAIL FROM (RFC 6531 section 3.4). */
  smtpUtf8: boolean;
}

/** The server lacks what the message needs and nothing can be converted: each recipient's result. */
export type Preparation = { prepared: Prepared } | { refused: RecipientResult[] };

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * One message on its way to one domain's servers. Each server is told what the message needs
 * once its EHLO answer is known (RFC 6152 BODY=8BITMIME, RFC 6531 SMTPUTF8); a server that
 * does not offer 8BITMIME gets the message with 7-bit transfer encodings instead, and one that
 * does not offer SMTPUTF8 gets nothing: the recipients fail with the reason. The DKIM
 * signature is made over the bytes actually sent, once per form.
 */
export class OutgoingMessage {
  private readonly needs: TransportNeeds;
  /** RCPT TO forms: domains in ASCII, so only a non-ASCII local part needs SMTPUTF8. */
  private readonly envelopeTo: string[];
  private readonly requested = new Map<string, string>();
  private readonly utf8Envelope: boolean;
  private readonly signed = new Map<'as-is' | '7bit', Promise<Buffer>>();

  constructor(private readonly request: HandoffRequest) {
    this.needs = transportNeedsOf(request.raw);
    this.envelopeTo = request.recipients.map(envelopeAddress);
    request.recipients.forEach((recipient, index) => this.requested.set(this.envelopeTo[index].toLowerCase(), recipient));
    this.utf8Envelope = [request.from, ...this.envelopeTo].some((address) => NON_ASCII.test(address));
  }

  /** The recipient as the request named it, for an answer about its envelope form. */
  requestedAs(envelopeRecipient: string): string {
    return this.requested.get(envelopeRecipient.toLowerCase()) ?? envelopeRecipient;
  }

  async forServer(extensions: ReadonlySet<string>, host: string): Promise<Preparation> {
    const smtpUtf8 = this.utf8Envelope || this.needs.utf8Headers;
    if (smtpUtf8 && !extensions.has('SMTPUTF8')) return { refused: this.refuseAll(this.withoutSmtpUtf8(host)) };
    const envelope = { from: this.request.from, to: this.envelopeTo, use8BitMime: this.needs.eightBit };
    if (!this.needs.eightBit || extensions.has('8BITMIME')) return { prepared: { message: await this.form('as-is'), envelope, smtpUtf8 } };
    try {
      return { prepared: { message: await this.form('7bit'), envelope: { ...envelope, use8BitMime: false }, smtpUtf8 } };
    } catch (error) {
      if (!(error instanceof NotConvertible)) throw error;
      // RFC 3463 X.6.3: conversion required but not supported.
      return {
        refused: this.refuseAll({
          smtpCode: 554,
          enhancedCode: '5.6.3',
          diagnostic: `${host} does not offer 8BITMIME and the message cannot be converted to 7 bit: ${error.message}`,
        }),
      };
    }
  }

  /** RFC 6531 section 3.2 and the X.6.7 / X.6.9 codes it registers. */
  private withoutSmtpUtf8(host: string): Omit<RecipientResult, 'recipient' | 'status'> {
    if (this.utf8Envelope) {
      return { smtpCode: 553, enhancedCode: '5.6.7', diagnostic: `${host} does not offer SMTPUTF8, which a non-ASCII address needs (RFC 6531)` };
    }
    return {
      smtpCode: 554,
      enhancedCode: '5.6.9',
      diagnostic: `${host} does not offer SMTPUTF8, which a message with UTF-8 header fields needs (RFC 6531, RFC 6532)`,
    };
  }

  private refuseAll(answer: Omit<RecipientResult, 'recipient' | 'status'>): RecipientResult[] {
    return this.request.recipients.map((recipient) => ({ recipient, status: 'failed', ...answer }));
  }

  private form(kind: 'as-is' | '7bit'): Promise<Buffer> {
    let made = this.signed.get(kind);
    if (!made) {
      const raw = kind === '7bit' ? toSevenBit(this.request.raw) : this.request.raw;
      const { dkim } = this.request;
      made = dkim ? dkimSign(raw, dkim, { from: this.request.from, to: this.request.recipients }) : Promise.resolve(raw);
      this.signed.set(kind, made);
    }
    return made;
  }
}

/** Hands a finished message back as bytes; only used for its `dkim` option. */
const signer = nodemailer.createTransport({ streamTransport: true, buffer: true });

/**
 * RFC 6376 signature (relaxed/relaxed, rsa-sha256) through nodemailer's public API: a `raw`
 * message passes through unchanged but for the DKIM-Signature field in front. The envelope
 * is only what sendMail requires; nothing is sent.
 */
export const dkimSign = async (raw: Buffer, key: DkimKey, envelope: { from: string; to: string[] }): Promise<Buffer> => {
  const info = await signer.sendMail({
    raw,
    envelope,
    dkim: { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKeyPem },
  });
  return info.message as Buffer;
};
