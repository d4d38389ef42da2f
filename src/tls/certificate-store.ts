import { createSecureContext, type SecureContext, type SecureContextOptions, type SecureVersion } from 'node:tls';
import { acmeCertificateFiles, acmeInUse } from '../config/acme.js';
import { secretsDirOf } from '../config/secrets.js';
import { ConfigError } from '../config/load.js';
import type { CertificateFiles, Config } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { Signal } from '../core/signal.js';
import { tlsVersionOf, type ServerCertificates } from '../core/tls.js';
import { CertificateProblem, readPair, stampOf, type CertificatePair } from './certificate-pair.js';

/** One configured pair: the default (host null) or the one for a host name. */
interface Slot {
  host: string | null;
  files: CertificateFiles;
  /** Null only for ACME's default pair before its first certificate. */
  pair: CertificatePair | null;
  /** Stamp of files seen changed by the last poll: loaded once the next poll sees them unchanged. */
  pending: string | null;
  /** Stamp of files refused last, so a bad pair is reported once, not at every poll. */
  refused: string | null;
}

/** acme: the ACME client wrote a new pair (src/tls/acme-renewal.ts). */
export type ReloadTrigger = 'signal' | 'files' | 'acme';

/** What a certificate is, for logs and status pages (never the key). */
export interface CertificateSummary {
  host: string | null;
  names: string[];
  notAfter: string;
  fingerprint: string;
}

/**
 * The `tls.*` certificates: read at start (a bad pair stops the start), then replaced without a
 * restart when their files change or on SIGHUP. A new pair that fails its checks is refused and
 * the old one keeps serving. Every handshake asks for the current context, so a reload reaches
 * new connections at once and leaves open ones alone. With ACME the default pair is the one
 * in the data folder, absent until the first certificate comes.
 */
export class CertificateStore implements ServerCertificates {
  readonly reloaded = new Signal<void>();
  readonly minVersion: SecureVersion;
  private readonly slots: Slot[];
  private timer: NodeJS.Timeout | null = null;
  /** Served while there is no default pair: a handshake with it fails (no certificate to present). */
  private readonly noCertificate: SecureContext;

  private constructor(
    slots: Slot[],
    minVersion: SecureVersion,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    this.slots = slots;
    this.minVersion = minVersion;
    this.noCertificate = createSecureContext({ minVersion });
  }

  /**
   * Null when no certificate is configured. A pair that cannot serve stops the start as an
   * invalid setting does (ConfigError naming it; exit code 2).
   */
  static fromConfig(config: Config, logger: Logger, clock: Clock): CertificateStore | null {
    try {
      return CertificateStore.open(config, logger, clock);
    } catch (error) {
      if (!(error instanceof CertificateProblem)) throw error;
      const host = Object.entries(config.tls.hosts ?? {}).find(([, files]) => files === error.files)?.[0];
      throw new ConfigError(host ? `tls.hosts.${host}` : 'tls.cert', error.message);
    }
  }

  private static open(config: Config, logger: Logger, clock: Clock): CertificateStore | null {
    const { cert, key, hosts = {}, minVersion } = config.tls;
    const byAcme = acmeInUse(config) !== null;
    const main = cert !== undefined && key !== undefined ? { cert, key } : byAcme ? acmeCertificateFiles(secretsDirOf(config)) : null;
    if (main === null) return null;
    const version = tlsVersionOf(minVersion);
    const slots: Slot[] = [
      { host: null, files: main, pair: byAcme ? readAcmePair(main, version, logger) : readPair(main, version), pending: null, refused: null },
      ...Object.entries(hosts).map(([host, files]) => ({
        host: host.toLowerCase(),
        files,
        pair: readPair(files, version, host),
        pending: null,
        refused: null,
      })),
    ];
    const store = new CertificateStore(slots, version, logger, clock);
    for (const slot of slots) store.report('tls certificate loaded', slot);
    return store;
  }

  available(): boolean {
    return this.slots[0].pair !== null;
  }

  defaultContext(): SecureContext {
    return this.slots[0].pair?.context ?? this.noCertificate;
  }

  defaultOptions(): SecureContextOptions {
    return this.slots[0].pair?.options ?? { minVersion: this.minVersion };
  }

  sniCallback(servername: string, callback: (error: Error | null, context?: SecureContext) => void): void {
    callback(null, this.slotFor(servername).pair?.context ?? this.noCertificate);
  }

  summary(): CertificateSummary[] {
    return this.slots.flatMap(({ host, pair }) =>
      pair ? [{ host, names: pair.names, notAfter: pair.notAfter.toISOString(), fingerprint: pair.fingerprint }] : [],
    );
  }

  /**
   * Reads the files again. 'signal' (SIGHUP, certbot's deploy hook) reads every pair; 'files'
   * reads the pairs whose files changed. Resolves to the number of pairs replaced.
   */
  reload(trigger: ReloadTrigger): number {
    let replaced = 0;
    for (const slot of this.slots) {
      const stamp = stampOf(slot.files);
      // ACME's first certificate has not come: nothing to read, and nothing to report.
      if (slot.pair === null && stamp.includes('missing')) continue;
      if (trigger === 'files' && !this.settled(slot, stamp)) continue;
      if (this.replace(slot, trigger)) replaced += 1;
    }
    if (replaced > 0) this.reloaded.notify();
    return replaced;
  }

  /** Looks at the files every `intervalMs`; a change is loaded once it has stayed put for one interval. */
  watch(intervalMs: number): void {
    this.timer ??= setInterval(() => this.reload('files'), intervalMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * certbot replaces the certificate and the key one after the other; a poll between the two
   * would see a mismatched pair. A change is loaded only when the next poll finds the same files.
   */
  private settled(slot: Slot, stamp: string): boolean {
    if (stamp === slot.pair?.stamp || stamp === slot.refused) {
      slot.pending = null;
      return false;
    }
    if (stamp !== slot.pending) {
      slot.pending = stamp;
      return false;
    }
    slot.pending = null;
    return true;
  }

  private replace(slot: Slot, trigger: ReloadTrigger): boolean {
    let pair: CertificatePair;
    try {
      pair = readPair(slot.files, this.minVersion, slot.host ?? undefined);
      if (pair.notAfter.getTime() <= this.clock.now().getTime()) {
        throw new CertificateProblem(slot.files, `the certificate in ${slot.files.cert} expired on ${pair.notAfter.toISOString()}`);
      }
    } catch (error) {
      if (!(error instanceof CertificateProblem)) throw error;
      slot.refused = stampOf(slot.files);
      this.logger.error('tls certificate refused: the previous one keeps serving', {
        host: slot.host ?? 'default',
        trigger,
        error: error.message,
        serving: slot.pair?.fingerprint ?? 'none',
      });
      return false;
    }
    slot.refused = null;
    if (pair.fingerprint === slot.pair?.fingerprint) {
      slot.pair = pair;
      this.logger.info('tls certificate unchanged', { host: slot.host ?? 'default', trigger, fingerprint: pair.fingerprint });
      return false;
    }
    slot.pair = pair;
    this.report('tls certificate reloaded', slot, trigger);
    return true;
  }

  private report(message: string, slot: Slot, trigger?: ReloadTrigger): void {
    const { pair } = slot;
    if (!pair) return;
    const expired = pair.notAfter.getTime() <= this.clock.now().getTime();
    this.logger[expired ? 'warn' : 'info'](expired ? `${message}, but it has expired` : message, {
      host: slot.host ?? 'default',
      ...(trigger && { trigger }),
      names: pair.names,
      notAfter: pair.notAfter.toISOString(),
      fingerprint: pair.fingerprint,
    });
  }

  /** RFC 6066 section 3: names compare case-insensitively; a `*.domain` pair covers one more label. */
  private slotFor(servername: string): Slot {
    const name = servername.toLowerCase().replace(/\.$/, '');
    const dot = name.indexOf('.');
    const wildcard = dot > 0 ? `*${name.slice(dot)}` : null;
    return this.slots.find((slot) => slot.host === name) ?? this.slots.find((slot) => slot.host !== null && slot.host === wildcard) ?? this.slots[0];
  }
}

/**
 * ACME's pair at start: missing before the first certificate, and a pair that cannot serve is
 * not a reason to stop: the ACME client gets a new one (src/tls/acme-renewal.ts).
 */
const readAcmePair = (files: CertificateFiles, version: SecureVersion, logger: Logger): CertificatePair | null => {
  try {
    return readPair(files, version);
  } catch (error) {
    if (!(error instanceof CertificateProblem)) throw error;
    if (!/ENOENT/.test(error.message)) logger.error('tls certificate from ACME cannot serve: a new one is asked for', { error: error.message });
    return null;
  }
};
