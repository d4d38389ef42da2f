import type { AcmeStatus } from '../../core/certificates.js';
import type { CheckResult } from '../../core/doctor.js';
import type { PartStatus } from './part-status.js';

/** The status page's certificate part, as it is from the files. */
export interface CertificatePart {
  status: PartStatus;
  configured: boolean;
  expiresAt?: string;
  daysLeft?: number;
  detail?: string;
}

/**
 * The certificate part with what the ACME client reported: degraded while there is no
 * certificate yet (the listeners offer no TLS) or while renewals fail (the current one keeps
 * serving), with the last error in the detail.
 */
export const withAcme = (part: CertificatePart, acme: AcmeStatus): CertificatePart & { acme: AcmeStatus } => {
  const failing = acme.failures > 0 ? `; ${failureText(acme)}` : '';
  if (part.expiresAt === undefined) {
    const detail = `no certificate yet from ${acme.directoryUrl}: listeners offer no TLS${failing || '; the first is being asked for'}`;
    return { status: part.status === 'down' ? part.status : ('degraded' as const), configured: true, detail, acme: { ...acme } };
  }
  if (!failing) return { ...part, acme: { ...acme } };
  const detail = `renewal by ACME failing${failing}; the current certificate keeps serving`;
  const status: PartStatus = part.status === 'down' ? 'down' : 'degraded';
  return { ...part, status, detail: part.detail ? `${part.detail}; ${detail}` : detail, acme: { ...acme } };
};

/**
 * `agentpost doctor`'s acme line: fails while there is no certificate because attempts fail,
 * warns while renewals fail with a certificate still valid (the certificate line fails once
 * it is 14 days from expiry).
 */
export const checkAcme = (acme: AcmeStatus, certified: boolean): CheckResult => {
  const base = { check: 'acme', subject: acme.names.join(', ') || acme.directoryUrl };
  const fix = `the CA must reach port 80 of ${acme.names.join(', ') || 'each name'} (tls.acme.httpPort, forwarded), and this host ${acme.directoryUrl} (docs/operators/tls.md)`;
  if (acme.failures > 0) return { ...base, status: certified ? 'warn' : 'fail', detail: failureText(acme), fix };
  if (!certified) return { ...base, status: 'warn', detail: `no certificate yet from ${acme.directoryUrl}: agentpost serve asks for one at start` };
  return { ...base, status: 'ok', detail: `certificates from ${acme.directoryUrl}; the next renewal at ${acme.renewAt ?? 'the next check'}` };
};

const failureText = (acme: AcmeStatus): string =>
  `${acme.failures} attempt${acme.failures === 1 ? '' : 's'} failed, the last at ${acme.lastErrorAt}: ${acme.lastError}; the next at ${acme.retryAt}`;
