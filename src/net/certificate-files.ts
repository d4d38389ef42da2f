import { readFile } from 'node:fs/promises';
import type { CertificateSource } from '../core/certificates.js';

/**
 * The PEM files of the configured certificates (`tls.cert`, one per SNI pair), read afresh at
 * each call so a renewed file (certbot's deploy hook) is what the status page and doctor see.
 */
export const certificateFiles =
  (files: readonly { path: string; host?: string }[]): CertificateSource =>
  async () =>
    Promise.all(files.map(async ({ path, host }) => ({ source: path, pem: await readFile(path, 'utf8'), ...(host ? { host } : {}) })));
