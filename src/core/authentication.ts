/**
 * The authentication verdict stored with every received message: the results of SPF
 * (RFC 7208), DKIM (RFC 6376), DMARC (RFC 7489) and ARC (RFC 8617) as RFC 8601 names them,
 * and a one-word `trust` an agent can act on without knowing those protocols.
 */
export type SpfResult = 'none' | 'neutral' | 'pass' | 'fail' | 'softfail' | 'temperror' | 'permerror';
export type DkimResult = 'none' | 'pass' | 'fail' | 'policy' | 'neutral' | 'temperror' | 'permerror';
export type DmarcResult = 'none' | 'pass' | 'fail' | 'temperror' | 'permerror';
/** RFC 8617 defines none, pass and fail; temperror means our own lookups ran out of time. */
export type ArcResult = 'none' | 'pass' | 'fail' | 'temperror';

/**
 * - `verified`: the From domain is authenticated (DMARC pass), or a mailbox of this service
 *   sent it (authenticated by its key).
 * - `failed`: the From domain publishes DMARC and the message fails it: treat the sender as forged.
 * - `suspicious`: no DMARC verdict, and SPF says the sending server is not allowed, or a DKIM
 *   signature is broken with none intact.
 * - `unverified`: nothing proves or disproves the sender (no DMARC record, or DNS errors).
 */
export type Trust = 'verified' | 'unverified' | 'suspicious' | 'failed';

export interface AuthenticationResults {
  spf: SpfResult;
  /** The best of the message's signatures: pass if any passes. */
  dkim: DkimResult;
  dmarc: DmarcResult;
  arc: ArcResult;
}

export interface AuthenticationVerdict extends AuthenticationResults {
  trust: Trust;
  /** One sentence on why, for people and logs (names the From domain when there is one). */
  reason: string;
}

/** The trust rule (docs/agents/authentication.md): DMARC decides; SPF and DKIM only lower trust. */
export const judge = (results: AuthenticationResults, fromDomain: string | null): AuthenticationVerdict => {
  const domain = fromDomain ?? 'the From address';
  const verdict = (trust: Trust, reason: string): AuthenticationVerdict => ({ ...results, trust, reason });
  if (results.dmarc === 'pass') return verdict('verified', `${domain} is authenticated: DMARC pass`);
  if (results.dmarc === 'fail') return verdict('failed', `${domain} publishes DMARC and this message fails it: the sender is likely forged`);
  if (results.spf === 'fail') return verdict('suspicious', `the sending server is not allowed to send for the envelope domain (SPF fail)`);
  if (results.dkim === 'fail') return verdict('suspicious', 'the DKIM signature does not verify: the message was changed or forged');
  if (results.dmarc === 'temperror' || results.spf === 'temperror' || results.dkim === 'temperror') {
    return verdict('unverified', `DNS lookups for ${domain} failed for now: the sender could not be checked`);
  }
  return verdict('unverified', `${domain} cannot be authenticated (DMARC ${results.dmarc})`);
};

/** Mail that a mailbox of this service sent: its key authenticated it; no SMTP hop to judge. */
export const internalVerdict = (): AuthenticationVerdict => ({
  spf: 'none',
  dkim: 'none',
  dmarc: 'none',
  arc: 'none',
  trust: 'verified',
  reason: 'sent by a mailbox of this service, authenticated by its key',
});

/** Order of DKIM results from best to worst, to summarize several signatures in one word. */
const DKIM_ORDER: readonly DkimResult[] = ['pass', 'fail', 'policy', 'neutral', 'temperror', 'permerror', 'none'];

export const bestDkim = (results: DkimResult[]): DkimResult => DKIM_ORDER.find((result) => results.includes(result)) ?? 'none';

/** What the MX knew of the client when the message arrived. */
export interface SmtpEnvelope {
  /** The client's IP address as the socket reported it. */
  clientAddress: string;
  /** The EHLO/HELO name. */
  helo: string;
  /** MAIL FROM; empty for the null reverse-path of bounces. */
  mailFrom: string;
}

/** The verdict, and the Authentication-Results field (RFC 8601) that records it in the message. */
export interface CheckedMessage {
  /** Null when the checks are off (`smtp.authenticationChecks`): no verdict is stored. */
  verdict: AuthenticationVerdict | null;
  field: string;
}

/**
 * Judges one received message at `now` (signature expiry). Injected so the work can run where
 * src/app/workers.ts puts it: a worker thread, or the main thread (services/mail/authentication.ts).
 */
export type AuthenticateMail = (raw: Buffer, envelope: SmtpEnvelope, now: Date) => Promise<CheckedMessage>;
