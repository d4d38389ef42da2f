import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createSecureContext, type SecureContext, type SecureContextOptions, type SecureVersion } from 'node:tls';
import type { CertificateFiles } from '../config/types.js';

/** A certificate chain and its key, read from PEM files and checked. */
export interface CertificatePair {
  files: CertificateFiles;
  context: SecureContext;
  options: SecureContextOptions;
  /** The DNS names the leaf certificate is valid for (subjectAltName, RFC 6125 section 6.4.4). */
  names: string[];
  notAfter: Date;
  /** SHA-256 of the leaf, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint: string;
  /** The files' identity when read; a different stamp means they changed. */
  stamp: string;
}

/** A pair that cannot be used, with the reason an operator can act on. */
export class CertificateProblem extends Error {
  constructor(
    readonly files: CertificateFiles,
    message: string,
  ) {
    super(message);
    this.name = 'CertificateProblem';
  }
}

/**
 * Reads and checks one pair: both files readable, the first PEM block a certificate, the key
 * the certificate's own (a mismatched pair would fail every handshake), and, when `hostName`
 * is given, the certificate valid for that name. Throws CertificateProblem.
 */
export const readPair = (files: CertificateFiles, minVersion: SecureVersion, hostName?: string): CertificatePair => {
  const stamp = stampOf(files);
  const cert = readPem(files, files.cert);
  const key = readPem(files, files.key);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (error) {
    throw new CertificateProblem(files, `${files.cert} holds no PEM certificate (${(error as Error).message})`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new CertificateProblem(files, `${files.key} holds no PEM private key (${(error as Error).message})`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new CertificateProblem(files, `${files.key} is not the key of the certificate in ${files.cert}`);
  if (hostName !== undefined && !covers(leaf, hostName)) {
    throw new CertificateProblem(files, `the certificate in ${files.cert} is not valid for ${hostName} (it names ${namesOf(leaf).join(', ') || 'no host'})`);
  }
  const options: SecureContextOptions = { key, cert, minVersion };
  let context: SecureContext;
  try {
    context = createSecureContext(options);
  } catch (error) {
    throw new CertificateProblem(files, `${files.cert} and ${files.key} cannot be used: ${(error as Error).message}`);
  }
  return { files, context, options, names: namesOf(leaf), notAfter: new Date(leaf.validTo), fingerprint: leaf.fingerprint256, stamp };
};

/**
 * Identity of both files as the operating system sees them through symlinks (certbot's live/
 * names are symlinks it points at new archive files): inode, size and modification time.
 */
export const stampOf = (files: CertificateFiles): string =>
  [files.cert, files.key]
    .map((file) => {
      try {
        const stat = statSync(file);
        return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
      } catch {
        return 'missing';
      }
    })
    .join('|');

const readPem = (files: CertificateFiles, file: string): Buffer => {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new CertificateProblem(files, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
};

/** A configured wildcard name `*.example.org` is covered when the certificate covers any one label under it. */
const covers = (leaf: X509Certificate, hostName: string): boolean => {
  const probe = hostName.startsWith('*.') ? `sni-probe${hostName.slice(1)}` : hostName;
  return leaf.checkHost(probe) !== undefined;
};

/** DNS names of subjectAltName; the subject CN only when there is no subjectAltName (RFC 6125 section 6.4.4). */
const namesOf = (leaf: X509Certificate): string[] => {
  const san = leaf.subjectAltName;
  if (san)
    return san
      .split(', ')
      .filter((entry) => entry.startsWith('DNS:'))
      .map((entry) => entry.slice(4).toLowerCase());
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(leaf.subject);
  return cn ? [cn[1].toLowerCase()] : [];
};
