import type { CertificateInfo } from '../core/certificates.js';
import type { Logger } from '../core/logger.js';
import type { RenewalInfoRecord } from './acme-files.js';
import type { AcmeIssuer } from './acme-issuer.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** Renewal starts this long before expiry (a third of the lifetime for shorter-lived certificates). */
export const RENEW_BEFORE_MS = 30 * DAY_MS;
/** RFC 9773 section 4.3: without a usable Retry-After, ask again in 6 hours; never more often than a minute, at least daily. */
const ASK_AGAIN_MS = 6 * HOUR_MS;

/** The certificate in use, as the renewal reads it from the data folder. */
export interface CurrentCertificate extends CertificateInfo {
  pem: string;
  fingerprint: string;
}

/** 30 days before expiry, or a third of the lifetime before it for a certificate that lives less than 90 days. */
export const renewalTime = (info: CertificateInfo): number => {
  const lifetime = info.validTo.getTime() - info.validFrom.getTime();
  return info.validTo.getTime() - Math.min(RENEW_BEFORE_MS, lifetime / 3);
};

/**
 * When to renew the certificate: at a time picked in the window the CA suggests for it (ARI,
 * RFC 9773), when the CA has renewal information, else at renewalTime. The CA is asked again
 * only once its Retry-After has passed (a restart asks nothing before then); an answer that
 * cannot be had leaves the last one, or the certificate's own dates, to decide.
 */
export const plannedRenewal = async (
  current: CurrentCertificate,
  known: RenewalInfoRecord | null,
  deps: { issuer: AcmeIssuer; now: number; logger: Logger },
): Promise<{ renewAt: number; renewalInfo: RenewalInfoRecord | null }> => {
  const previous = known?.fingerprint === current.fingerprint ? known : null;
  const info = previous && deps.now < Date.parse(previous.askAgainAt) ? previous : await ask(current, previous, deps);
  const suggested = info?.renewAt ? Date.parse(info.renewAt) : null;
  return { renewAt: suggested === null ? renewalTime(current) : Math.min(suggested, current.validTo.getTime()), renewalInfo: info };
};

const ask = async (
  current: CurrentCertificate,
  previous: RenewalInfoRecord | null,
  { issuer, now, logger }: { issuer: AcmeIssuer; now: number; logger: Logger },
): Promise<RenewalInfoRecord | null> => {
  try {
    const window = await issuer.renewalWindow(current.pem);
    const askAgainMs = Math.min(Math.max(window?.retryAfterMs ?? ASK_AGAIN_MS, MINUTE_MS), DAY_MS);
    return {
      fingerprint: current.fingerprint,
      renewAt: window ? pickIn(window, previous?.renewAt ?? null, now) : null,
      askAgainAt: new Date(now + askAgainMs).toISOString(),
    };
  } catch (error) {
    logger.warn('ACME renewal information could not be read: the last answer or the certificate dates decide', { error: (error as Error).message });
    return previous ? { ...previous, askAgainAt: new Date(now + HOUR_MS).toISOString() } : null;
  }
};

/**
 * RFC 9773 section 4.2: a uniformly random time in the window, so that the CA's many clients
 * spread out; a time already picked in it is kept, and a window in the past means now.
 */
const pickIn = (window: { start: Date; end: Date }, picked: string | null, now: number): string => {
  const [start, end] = [window.start.getTime(), window.end.getTime()];
  const kept = picked === null ? null : Date.parse(picked);
  if (kept !== null && kept >= start && kept <= end) return new Date(kept).toISOString();
  if (end <= now) return new Date(now).toISOString();
  const from = Math.max(start, now);
  return new Date(from + Math.random() * (end - from)).toISOString();
};
