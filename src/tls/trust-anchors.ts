import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { ConfigError } from '../config/load.js';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/**
 * `outbound.caFile`: certificate authorities trusted beside Node's built-in roots where
 * outgoing TLS must verify (a relay, MTA-STS policy hosts, MX hosts under an enforced policy);
 * `tls.acme.caFile` the same for the ACME directory. Read once at start; a file that cannot
 * be read or holds no certificate stops the start, naming `setting`.
 */
export const readTrustAnchors = (file: string, setting = 'outbound.caFile'): string => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(setting, `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const certificates = text.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) throw new ConfigError(setting, `${file} holds no PEM certificate`);
  for (const pem of certificates) {
    try {
      new X509Certificate(pem);
    } catch {
      throw new ConfigError(setting, `${file} holds a certificate that cannot be parsed`);
    }
  }
  return certificates.join('\n');
};
