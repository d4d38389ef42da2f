import { readFile } from 'node:fs/promises';
import type { CertificateFile, CertificateSource } from '../core/certificates.js';

/**
 * The PEM files of the configured certificates (`tls.cert`, one per SNI pair), read afresh at
 * each call so a renewed file (certbot's deploy hook, ACME) is what the status page and doctor
 * see. An `optional` file (ACME's, before the first certificate came) may be missing.
 */
export const certificateFiles =
  (files: readonly { path: string; host?: string; optional?: boolean }[]): CertificateSource =>
  async () => {
    const read = await Promise.all(files.map(readOne));
    return read.filter((file): file is CertificateFile => file !== null);
  };

const readOne = async ({ path, host, optional }: { path: string; host?: string; optional?: boolean }): Promise<CertificateFile | null> => {
  try {
    return { source: path, pem: await readFile(path, 'utf8'), ...(host ? { host } : {}) };
  } catch (error) {
    if (optional && (error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};
