import { X509Certificate } from 'node:crypto';

/** What the status page and the deployment checks need of a configured certificate. */
export interface CertificateInfo {
  /** Where it was read from (the `tls.cert` file). */
  source: string;
  subject: string;
  /** DNS names of the subjectAltName extension. */
  names: string[];
  validFrom: Date;
  validTo: Date;
}

/** The leaf certificate of a PEM chain (the first one, RFC 8446 section 4.4.2: the sender's own comes first). */
export const parseCertificate = (source: string, pem: string): CertificateInfo => {
  const certificate = new X509Certificate(pem);
  const names = (certificate.subjectAltName ?? '')
    .split(/,\s*/)
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
  return { source, subject: certificate.subject, names, validFrom: new Date(certificate.validFrom), validTo: new Date(certificate.validTo) };
};

/**
 * RFC 6125 section 6.4: the host name matches a DNS name of the certificate exactly or through
 * a wildcard in the left-most label only (`*.example.com` covers `mx.example.com`, not `a.mx.example.com`).
 */
export const certificateCovers = (info: CertificateInfo, hostname: string): boolean => {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return info.names.some((name) => name === host || (name.startsWith('*.') && host.slice(host.indexOf('.') + 1) === name.slice(2) && host.indexOf('.') > 0));
};

/** One configured certificate: `host` is the name an SNI pair serves; absent for the default pair, which serves the MX name. */
export interface CertificateFile {
  source: string;
  pem: string;
  host?: string;
}

/** Reads the certificate files the service is configured with; injected so tests hand in their own. */
export type CertificateSource = () => Promise<CertificateFile[]>;

/**
 * What the ACME client did last (src/tls/acme-renewal.ts keeps it in the data folder's
 * `acme/state.json`): the status page, /metrics and `agentpost doctor` report it.
 */
export interface AcmeStatus {
  directoryUrl: string;
  /** The names the certificate is asked for. */
  names: string[];
  /** When the certificate in use is to be renewed; null before the first one. */
  renewAt: string | null;
  /** Failed attempts since the last success; 0 when the last attempt succeeded. */
  failures: number;
  /** When the next attempt is made after a failure; null when nothing failed. */
  retryAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  lastIssuedAt: string | null;
}

/** The ACME client's last report; null when certificates do not come by ACME. */
export type AcmeStatusSource = () => Promise<AcmeStatus | null>;
