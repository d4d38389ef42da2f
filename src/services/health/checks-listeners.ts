import { certificateCovers, parseCertificate, type CertificateFile, type CertificateSource } from '../../core/certificates.js';
import type { CheckResult, PortProbe } from '../../core/doctor.js';
import { CERTIFICATE_WARNING_DAYS } from './status.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const PROBE_TIMEOUT_MS = 3000;

/** A listener as configured: where it binds and what it says first. */
export interface ListenerSpec {
  name: string;
  host: string;
  port: number;
  /** The first line's start (`220` for SMTP, `* OK` for IMAP); null: connecting is enough. */
  greeting: string | null;
  /** Implicit TLS: the greeting comes inside a handshake. */
  tls: boolean;
}

/**
 * The certificate the listeners present must name the MX host (RFC 6125 section 6.4; senders
 * enforcing MTA-STS or DANE check it), an SNI pair the host it is configured for, and none may
 * be about to expire.
 */
export const checkCertificate = async (certificates: CertificateSource, hostname: string, now: Date, byAcme = false): Promise<CheckResult[]> => {
  const base = { check: 'certificate', subject: hostname };
  let files: CertificateFile[];
  try {
    files = await certificates();
  } catch (error) {
    return [{ ...base, status: 'fail', detail: `cannot read the certificate: ${(error as Error).message}` }];
  }
  if (files.length === 0) {
    if (byAcme) return [];
    return [
      {
        ...base,
        status: 'warn',
        detail: 'no certificate configured: no listener offers TLS, so mail and logins cross the network readable',
        fix: 'set tls.cert and tls.key to the PEM files of a certificate for the host name',
      },
    ];
  }
  return files.map((file) => checkOneCertificate(file, file.host ?? hostname, now, byAcme && !file.host));
};

const checkOneCertificate = ({ source, pem }: CertificateFile, name: string, now: Date, byAcme: boolean): CheckResult => {
  const base = { check: 'certificate', subject: name };
  try {
    const info = parseCertificate(source, pem);
    const daysLeft = Math.floor((info.validTo.getTime() - now.getTime()) / DAY_MS);
    const renew = byAcme ? 'agentpost serve renews it by ACME: the acme line says why it has not' : `renew ${source} (certbot renew) before it expires`;
    if (!certificateCovers(info, name))
      return { ...base, status: 'fail', detail: `${source} names ${info.names.join(', ') || info.subject}, not ${name}`, fix: `get a certificate for ${name}` };
    if (info.validTo <= now) return { ...base, status: 'fail', detail: `${source} expired on ${info.validTo.toISOString()}`, fix: renew };
    if (info.validFrom > now) return { ...base, status: 'fail', detail: `${source} is valid only from ${info.validFrom.toISOString()}` };
    if (daysLeft < CERTIFICATE_WARNING_DAYS) return { ...base, status: 'fail', detail: `${source} expires in ${daysLeft} days`, fix: renew };
    return { ...base, status: 'ok', detail: `${source} covers ${name}, ${daysLeft} days left` };
  } catch (error) {
    return { ...base, status: 'fail', detail: `${source} is not a PEM certificate: ${(error as Error).message}` };
  }
};

/**
 * Each listener answers where it is configured; an unspecified bind address is tried on
 * loopback. A TLS listener is probed with a handshake for the host name (the certificate is
 * judged by checkCertificate, not here).
 */
export const checkListeners = async (probe: PortProbe, listeners: ListenerSpec[], hostname: string): Promise<CheckResult[]> =>
  Promise.all(
    listeners.map(async (listener) => {
      const host = ['0.0.0.0', '::', ''].includes(listener.host) ? '127.0.0.1' : listener.host;
      const subject = `${listener.name} ${host.includes(':') ? `[${host}]` : host}:${listener.port}`;
      const target = { host, port: listener.port, ...(listener.tls && { tls: { servername: hostname } }) };
      const answer = await probe.greeting(target, PROBE_TIMEOUT_MS, listener.greeting !== null);
      if (!answer.ok)
        return {
          check: 'port',
          subject,
          status: 'fail' as const,
          detail: `nothing answers (${answer.error})`,
          fix: 'start agentpost serve with the same settings as this command',
        };
      if (listener.greeting !== null && !answer.line.startsWith(listener.greeting)) {
        return { check: 'port', subject, status: 'fail' as const, detail: `something else answers: "${answer.line.slice(0, 80)}"` };
      }
      return {
        check: 'port',
        subject,
        status: 'ok' as const,
        detail: `${listener.greeting === null ? 'accepts connections' : `answers "${answer.line.slice(0, 80)}"`}${listener.tls ? ' over TLS' : ''}`,
      };
    }),
  );

/**
 * Other servers deliver to port 25 of the MX host (RFC 5321 section 4.5.4 has no other); the
 * MX must listen there, or have it forwarded, and not on loopback only. Trying the host's own
 * public address from here is the closest this host can come to a test from outside.
 */
export const checkMxReachable = async (probe: PortProbe, smtp: ListenerSpec, hostname: string, addresses: string[]): Promise<CheckResult[]> => {
  const results: CheckResult[] = [];
  const base = { check: 'port', subject: `${hostname}:25` };
  if (/^(127\.|::1$|localhost$)/.test(smtp.host)) {
    results.push({
      ...base,
      status: 'warn',
      detail: `the MX listens on ${smtp.host} only: other servers cannot reach it`,
      fix: 'set smtp.host to 0.0.0.0 (or the public address), or put a proxy in front of it',
    });
  }
  if (smtp.port !== 25) {
    results.push({
      ...base,
      status: 'warn',
      detail: `the MX listens on port ${smtp.port}; the Internet delivers to port 25`,
      fix: `forward port 25 to ${smtp.port}, or set smtp.port 25 (CAP_NET_BIND_SERVICE lets a non-root user bind it)`,
    });
  }
  for (const address of addresses) {
    const answer = await probe.greeting({ host: address, port: 25 }, PROBE_TIMEOUT_MS);
    const subject = `${address.includes(':') ? `[${address}]` : address}:25`;
    results.push(
      answer.ok && answer.line.startsWith('220')
        ? { check: 'port', subject, status: 'ok', detail: `answers "${answer.line.slice(0, 80)}"` }
        : {
            check: 'port',
            subject,
            status: 'warn',
            detail: `does not answer from this host (${answer.ok ? answer.line.slice(0, 80) : answer.error}); check the firewall and port forwarding, then test from outside`,
          },
    );
  }
  return results;
};
