import { join } from 'node:path';
import type { AcmeConfig, CertificateFiles, Config } from './types.js';

/**
 * The data folder's `acme/` (mode 0700): the ACME account key, the certificate and its key,
 * and what the last attempts did (`state.json`), every file mode 0600. It holds secrets, as
 * `secret.key` beside it does, and is reused across restarts.
 */
export const acmeFolder = (dataDir: string): string => join(dataDir, 'acme');

/** The pair ACME keeps: what the listeners serve as their default pair. */
export const acmeCertificateFiles = (dataDir: string): CertificateFiles => ({
  cert: join(acmeFolder(dataDir), 'certificate.pem'),
  key: join(acmeFolder(dataDir), 'certificate.key'),
});

/** The ACME settings when certificates come by ACME: `tls.acme` given and no `tls.cert` (files win). */
export const acmeInUse = (config: Config): AcmeConfig | null => (config.tls.acme && config.tls.cert === undefined ? config.tls.acme : null);

/** A listener presents a default certificate: from `tls.cert`, or by ACME (once it has come). */
export const tlsConfigured = (config: Config): boolean => config.tls.cert !== undefined || acmeInUse(config) !== null;
