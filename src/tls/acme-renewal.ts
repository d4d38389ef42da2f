import { X509Certificate } from 'node:crypto';
import { certificateCovers, parseCertificate } from '../core/certificates.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { NO_ATTEMPT, type AcmeFolder, type AcmeState } from './acme-files.js';
import type { AcmeIssuer } from './acme-issuer.js';
import { plannedRenewal, type CurrentCertificate } from './acme-renewal-time.js';
import type { ReloadTrigger } from './certificate-store.js';

const MINUTE_MS = 60_000;
/** How often the names and the renewal time are looked at again when nothing is due. */
export const CHECK_EVERY_MS = 60 * MINUTE_MS;
/** After a failure: 1 minute, doubling, at most 6 hours (Let's Encrypt allows 5 failed validations per name per hour). */
const FIRST_RETRY_MS = MINUTE_MS;
const LONGEST_RETRY_MS = 6 * 60 * MINUTE_MS;

/** What the renewal needs of the certificate store (src/tls/certificate-store.ts). */
export interface ServedCertificates {
  /** Reads the files again; the number of pairs replaced. */
  reload(trigger: ReloadTrigger): number;
  summary(): { host: string | null; fingerprint: string }[];
}

export interface AcmeRenewalOptions {
  directoryUrl: string;
  /** The names the certificate must cover, asked again at each check (verified domains come and go). */
  names: () => Promise<string[]>;
  folder: AcmeFolder;
  issuer: AcmeIssuer;
  certificates: ServedCertificates;
  clock: Clock;
  logger: Logger;
}

/**
 * Keeps the default certificate coming from the CA: one at start when there is none (or it no
 * longer covers every name), a new one 30 days before expiry, and retries with a growing pause
 * after a failure while whatever is served keeps serving. A new pair is written to the data
 * folder and loaded through the certificate store, the path every reload takes.
 */
export class AcmeRenewal {
  private timer: NodeJS.Timeout | null = null;
  private attempts: Promise<void> = Promise.resolve();
  private running = false;
  private stopped = false;
  private state: AcmeState;

  constructor(private readonly options: AcmeRenewalOptions) {
    this.state = { ...NO_ATTEMPT, renewalInfo: null, issuedBy: null, ...options.folder.readState(), directoryUrl: options.directoryUrl };
  }

  /** The first check now; a restart with a valid certificate for every name asks the CA nothing. */
  start(): void {
    void this.enqueue(false);
  }

  /** Resolves once the attempts queued so far are over. */
  idle(): Promise<void> {
    return this.attempts;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Looks now rather than at the next hourly check (a new verified domain); resolves once done. */
  check(): Promise<void> {
    return this.enqueue(false);
  }

  /** A new certificate now, due or not (an operator's forced renewal); resolves once the attempt is over. */
  renew(): Promise<void> {
    return this.enqueue(true);
  }

  status(): AcmeState {
    return this.state;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.enqueue(false), Math.max(0, Math.min(delayMs, CHECK_EVERY_MS)));
    this.timer.unref();
  }

  /**
   * One attempt at a time, in order. Whatever an attempt throws that obtain() does not report
   * (the names cannot be read, the folder cannot be written) is logged and looked at again
   * later: the queue never stays rejected, and a timer's attempt never rejects unhandled.
   */
  private enqueue(force: boolean): Promise<void> {
    if (!force && this.running) return this.attempts;
    this.attempts = this.attempts.then(() =>
      this.attempt(force).catch((error: unknown) => {
        if (this.stopped) return;
        this.options.logger.error('ACME check failed: looked at again in an hour', { error: (error as Error).message });
        this.schedule(CHECK_EVERY_MS);
      }),
    );
    return this.attempts;
  }

  private async attempt(force: boolean): Promise<void> {
    if (this.stopped) return;
    this.running = true;
    try {
      const names = await this.options.names();
      const current = this.current();
      // Only a certificate that could stay has its renewal time asked for (the CA's, with ARI).
      const replace = force || !current || names.some((name) => !certificateCovers(current, name)) || !this.serves(current) || this.fromElsewhere();
      const renewAt = current && !replace ? await this.plan(current) : null;
      const now = this.options.clock.now().getTime();
      const due = replace || (renewAt !== null && now >= renewAt);
      if (!due) {
        this.record({ names, renewAt: iso(renewAt) });
        this.schedule((renewAt ?? now) - now);
        return;
      }
      await this.obtain(names, current !== null);
    } finally {
      this.running = false;
    }
  }

  private async obtain(names: string[], serving: boolean): Promise<void> {
    const { issuer, folder, certificates, logger, clock } = this.options;
    try {
      if (names.length === 0) throw new Error('no host name to ask for: set smtp.hostname (or tls.acme.hostnames) to the name clients connect to');
      const pair = await issuer.issue(names);
      if (this.stopped) return;
      folder.writePair(pair.certificate, pair.key);
      certificates.reload('acme');
      const issued = new X509Certificate(pair.certificate).fingerprint256;
      if (this.served() !== issued) throw new Error('the certificate the CA issued was refused (the log says why)');
      const info = { ...parseCertificate(folder.certificate.cert, pair.certificate), pem: pair.certificate, fingerprint: issued };
      this.record({ names, failures: 0, retryAt: null, lastIssuedAt: clock.now().toISOString(), issuedBy: this.options.directoryUrl });
      // Asked at once, so that a restart before the CA's Retry-After asks nothing.
      const renewAt = await this.plan(info);
      this.record({ renewAt: iso(renewAt) });
      logger.info('tls certificate issued by ACME', { names, notAfter: info.validTo.toISOString(), renewAt: iso(renewAt), fingerprint: issued });
      this.schedule(renewAt - clock.now().getTime());
    } catch (error) {
      if (this.stopped) return;
      const failures = this.state.failures + 1;
      const now = clock.now();
      const retryAt = new Date(now.getTime() + Math.min(FIRST_RETRY_MS * 2 ** (failures - 1), LONGEST_RETRY_MS));
      const message = (error as Error).message;
      this.record({ names, failures, retryAt: retryAt.toISOString(), lastError: message, lastErrorAt: now.toISOString() });
      logger.error(
        serving ? 'ACME renewal failed: the current certificate keeps serving' : 'ACME certificate request failed: no listener offers TLS until one comes',
        {
          directoryUrl: this.options.directoryUrl,
          names,
          failures,
          retryAt: retryAt.toISOString(),
          error: message,
        },
      );
      this.schedule(retryAt.getTime() - now.getTime());
    }
  }

  /** The certificate the folder holds; null before the first (or when it cannot be read). */
  private current(): CurrentCertificate | null {
    const { folder } = this.options;
    const pem = folder.readCertificate();
    if (pem === null) return null;
    try {
      return { ...parseCertificate(folder.certificate.cert, pem), pem, fingerprint: new X509Certificate(pem).fingerprint256 };
    } catch {
      return null;
    }
  }

  /** When the certificate is to be renewed (src/tls/acme-renewal-time.ts); what the CA said of it is kept. */
  private async plan(current: CurrentCertificate): Promise<number> {
    const { issuer, clock, logger } = this.options;
    const { renewAt, renewalInfo } = await plannedRenewal(current, this.state.renewalInfo, { issuer, now: clock.now().getTime(), logger });
    this.record({ renewalInfo });
    return renewAt;
  }

  /** False when the store refused the folder's pair (its key is another's): then a new one is due. */
  private serves(current: { fingerprint: string }): boolean {
    return this.served() === current.fingerprint;
  }

  /** Issued through another directory than the configured one (staging, before the switch). */
  private fromElsewhere(): boolean {
    return this.state.issuedBy !== null && this.state.issuedBy !== this.options.directoryUrl;
  }

  private served(): string | undefined {
    return this.options.certificates.summary().find((summary) => summary.host === null)?.fingerprint;
  }

  private record(change: Partial<AcmeState>): void {
    this.state = { ...this.state, ...change };
    if (!this.stopped) this.options.folder.writeState(this.state);
  }
}

const iso = (time: number | null): string | null => (time === null ? null : new Date(time).toISOString());
