/**
 * Shapes shared by the delivery service (which decides) and the SMTP client adapter (which
 * talks to the next server). The service depends on the `Handoff` interface only; src/app/core.ts
 * passes the nodemailer-based implementation from src/smtp/outbound.ts.
 */

/** DNS as node:dns/promises shapes it; injected so tests never touch real DNS. */
export interface MxResolver {
  resolveMx(name: string): Promise<{ exchange: string; priority: number }[]>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  /** The recipient domain's `_mta-sts` record (RFC 8461 section 3.1); each record as its character-strings. */
  resolveTxt(name: string): Promise<string[][]>;
}

/** One server to try: an IP address (direct MX) or a host name (relay). */
export interface NextHopHost {
  host: string;
  /** The name to present for TLS SNI and certificate checks (the MX or relay name). */
  servername: string;
}

/** Where one domain's mail goes: tried in order until one answers (RFC 5321 section 5.1). */
export interface Route {
  kind: 'mx' | 'relay';
  hosts: NextHopHost[];
  port: number;
  /** Implicit TLS (smtps:// relay). */
  secure: boolean;
  /**
   * The recipient domain's MTA-STS policy (RFC 8461), when it has one in enforce or testing
   * mode. enforce: STARTTLS is required and the certificate must verify for the MX host name
   * (section 4.2); testing: sessions go ahead as without a policy and what enforce would have
   * refused is reported (section 5).
   */
  mtaSts?: { mode: 'enforce' | 'testing'; domain: string; policyId: string };
  auth?: { user: string; pass: string };
  /** A stable name for connection reuse: same key, same server and credentials. */
  key: string;
}

export interface DkimKey {
  domain: string;
  selector: string;
  privateKeyPem: string;
}

export interface HandoffRequest {
  route: Route;
  /** Envelope sender: bounces+<token>@<mailDomain>. */
  from: string;
  recipients: string[];
  raw: Buffer;
  dkim?: DkimKey;
  /**
   * Called once the server has answered DATA with 354, with the recipients it accepted, and
   * awaited before the first byte of the message is sent: the caller records durably that
   * the outcome may from now on be unknown. When it rejects, the message is not sent.
   */
  beforeData?: (accepted: readonly string[]) => Promise<void>;
}

/**
 * The next server's answer for one recipient.
 * - delivered: 250 after DATA.
 * - deferred: 4xx, or no answer before the message could have been accepted.
 * - failed: 5xx (definite rejection).
 * - unresolved: the connection was lost or timed out after the message was handed over,
 *   so nobody knows whether it was accepted (RFC 5321 section 6.1 duplicates).
 */
export type HandoffStatus = 'delivered' | 'deferred' | 'failed' | 'unresolved';

export interface SmtpAnswer {
  smtpCode?: number;
  /** RFC 3463 enhanced status code, e.g. 5.1.1. */
  enhancedCode?: string;
  diagnostic: string;
}

export interface RecipientResult extends SmtpAnswer {
  recipient: string;
  status: HandoffStatus;
}

export interface Handoff {
  deliver(request: HandoffRequest): Promise<RecipientResult[]>;
  close(): Promise<void>;
}

const REPLY = /^([2-5]\d\d)(?:[ -]((?:[245])\.\d{1,3}\.\d{1,3}))?/;

/** Splits "550 5.1.1 <x>: no such user" into its code, RFC 3463 enhanced code and text. */
export const parseSmtpReply = (reply: string): SmtpAnswer => {
  const text = reply.replace(/\s+/g, ' ').trim();
  const match = REPLY.exec(text);
  if (!match) return { diagnostic: text.slice(0, 500) };
  const answer: SmtpAnswer = { smtpCode: Number(match[1]), diagnostic: text.slice(0, 500) };
  if (match[2]) answer.enhancedCode = match[2];
  else if (/\b5\.1\.1\b/.test(text) && match[1] === '550') answer.enhancedCode = '5.1.1';
  return answer;
};

/** 5.1.1 "bad destination mailbox address" is the only rejection that suppresses (docs/operators/delivery.md). */
export const isInvalidMailbox = (answer: SmtpAnswer): boolean => answer.enhancedCode === '5.1.1' && (answer.smtpCode === undefined || answer.smtpCode >= 500);

/** 2xx delivered, 4xx deferred, 5xx failed (RFC 5321 section 4.2.1). */
export const statusOfCode = (code: number): HandoffStatus => (code < 300 ? 'delivered' : code < 500 ? 'deferred' : 'failed');
