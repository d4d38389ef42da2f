import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acmeCertificateFiles, acmeFolder, acmeInUse } from '../config/acme.js';
import { secretsDirOf } from '../config/secrets.js';
import type { CertificateFiles, Config } from '../config/types.js';
import type { AcmeStatus, AcmeStatusSource } from '../core/certificates.js';

/**
 * What the CA said of the certificate in use (ARI, RFC 9773), kept so that a restart asks
 * again only when the CA's Retry-After has passed.
 */
export interface RenewalInfoRecord {
  /** The certificate it is about (SHA-256 fingerprint). */
  fingerprint: string;
  /** The time picked in the suggested window (RFC 9773 section 4.2); null: the CA has no renewal information. */
  renewAt: string | null;
  askAgainAt: string;
}

/** `acme/state.json`: the status, the renewal information, and the directory the certificate came from. */
export interface AcmeState extends AcmeStatus {
  renewalInfo: RenewalInfoRecord | null;
  /** A certificate from another directory (staging, before the switch to production) is replaced. */
  issuedBy: string | null;
}

/**
 * The data folder's `acme/` (src/config/acme.ts): folder mode 0700, every file 0600, each
 * written whole to a temporary name and renamed, so a crash never leaves half a key.
 */
export class AcmeFolder {
  readonly path: string;
  readonly certificate: CertificateFiles;

  constructor(dataDir: string) {
    this.path = acmeFolder(dataDir);
    this.certificate = acmeCertificateFiles(dataDir);
  }

  /** The account key (RFC 8555 section 6.2 signs every request with it), made on first use. */
  async accountKey(make: () => Promise<Buffer>): Promise<Buffer> {
    const file = join(this.path, 'account.key');
    const existing = readIfThere(file);
    if (existing !== null) return existing;
    this.write(file, await make());
    return readFileSync(file);
  }

  /** The key first: a pair is loaded by its certificate file, which then names a key already there. */
  writePair(certificate: string, key: string): void {
    this.write(this.certificate.key, key);
    this.write(this.certificate.cert, certificate);
  }

  readCertificate(): string | null {
    return readIfThere(this.certificate.cert)?.toString('utf8') ?? null;
  }

  readState(): AcmeState | null {
    const text = readIfThere(join(this.path, 'state.json'));
    if (text === null) return null;
    try {
      return JSON.parse(text.toString('utf8')) as AcmeState;
    } catch {
      return null; // rewritten whole at the next change
    }
  }

  writeState(state: AcmeState): void {
    this.write(join(this.path, 'state.json'), `${JSON.stringify(state, null, 2)}\n`);
  }

  private write(file: string, content: string | Buffer): void {
    mkdirSync(this.path, { recursive: true, mode: 0o700 });
    const temporary = `${file}.new`;
    writeFileSync(temporary, content, { mode: 0o600 });
    renameSync(temporary, file);
  }
}

/**
 * The status in `state.json` for the status page and doctor (`serve` writes it; doctor is
 * another process); undefined when certificates do not come by ACME.
 */
export const acmeStatusFile = (config: Config): AcmeStatusSource | undefined => {
  const acme = acmeInUse(config);
  if (!acme) return undefined;
  return async () => {
    const state = new AcmeFolder(secretsDirOf(config)).readState();
    if (!state) return { ...NO_ATTEMPT, directoryUrl: acme.directoryUrl };
    const { renewalInfo: _, issuedBy: __, ...status } = state;
    return { ...status, directoryUrl: acme.directoryUrl };
  };
};

/** Before the first attempt. */
export const NO_ATTEMPT: Omit<AcmeStatus, 'directoryUrl'> = {
  names: [],
  renewAt: null,
  failures: 0,
  retryAt: null,
  lastError: null,
  lastErrorAt: null,
  lastIssuedAt: null,
};

const readIfThere = (file: string): Buffer | null => {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};
