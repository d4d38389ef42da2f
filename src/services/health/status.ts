import type { AcmeStatus, AcmeStatusSource, CertificateFile, CertificateSource } from '../../core/certificates.js';
import { parseCertificate } from '../../core/certificates.js';
import type { Clock } from '../../core/clock.js';
import type { Store } from '../../store/index.js';
import type { QueueFigures } from '../../store/health.js';
import { withAcme, type CertificatePart } from './acme-status.js';

import type { PartStatus } from './part-status.js';

export type { PartStatus } from './part-status.js';

/** What src/main.ts knows of its listeners and workers, read at every status request. */
export interface RuntimeProbe {
  listeners(): Record<string, { listening: boolean; port: number }>;
  /** `thread`: the search index is written by its own thread; `main`: on the main thread. */
  searchMode(): 'thread' | 'main';
}

/** A due item waiting longer than this means its worker is not keeping up (or not running). */
export const DUE_LAG_LIMIT_MS = 5 * 60 * 1000;
/** Messages waiting for the full-text index beyond this: search results lag behind the mail. */
export const SEARCH_BACKLOG_LIMIT = 10_000;
/** A certificate expiring sooner than this is reported (and `agentpost doctor` fails). */
export const CERTIFICATE_WARNING_DAYS = 14;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The status page (docs/operators/monitoring.md: dependency health, not delivery into
 * external inboxes): each part of the process and the work waiting for it. Cheap enough to poll:
 * a handful of indexed counts and one file read.
 */
export class StatusService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly runtime: RuntimeProbe,
    private readonly certificates: CertificateSource,
    /** Messages the full-text index has not taken yet (SearchIndexService.backlog). */
    private readonly searchBacklog: () => number | Promise<number>,
    /** What the ACME client reported; null without ACME. */
    private readonly acme: AcmeStatusSource = async () => null,
  ) {}

  async report() {
    const now = this.clock.now().getTime();
    const parts = {
      listeners: this.listeners(),
      store: await this.storePart(),
      searchIndex: await this.searchPart(),
      inbound: await this.queuePart(() => this.store.health.inboundQueue(), now),
      delivery: await this.queuePart(() => this.store.health.deliveryQueue(), now),
      webhooks: await this.queuePart(() => this.store.health.webhookBacklog(), now),
      certificate: await this.certificateWithAcme(now),
    };
    return { status: worst(Object.values(parts).map((part) => part.status)), checkedAt: new Date(now).toISOString(), parts };
  }

  private listeners() {
    const listeners = this.runtime.listeners();
    const down = Object.entries(listeners)
      .filter(([, listener]) => !listener.listening)
      .map(([name]) => name);
    return {
      status: down.length > 0 ? ('down' as const) : ('ok' as const),
      ...(down.length > 0 ? { detail: `not listening: ${down.join(', ')}` } : {}),
      ...listeners,
    };
  }

  private async storePart() {
    try {
      await this.store.health.ping();
      return { status: 'ok' as const };
    } catch (error) {
      return { status: 'down' as const, detail: `the database does not answer: ${(error as Error).message}` };
    }
  }

  private async searchPart() {
    const backlog = await this.guard(async () => await this.searchBacklog());
    if (backlog === null) return { status: 'down' as const, mode: this.runtime.searchMode(), detail: 'the database does not answer' };
    const lagging = backlog > SEARCH_BACKLOG_LIMIT;
    return {
      status: lagging ? ('degraded' as const) : ('ok' as const),
      mode: this.runtime.searchMode(),
      backlog,
      ...(lagging ? { detail: `${backlog} messages wait for the full-text index` } : {}),
    };
  }

  private async queuePart(read: () => Promise<QueueFigures>, now: number) {
    const figures = await this.guard(read);
    if (figures === null) return { status: 'down' as const, detail: 'the database does not answer' };
    const oldestAgeSeconds = figures.oldestCreatedAt === null ? 0 : Math.max(0, Math.round((now - figures.oldestCreatedAt) / 1000));
    const dueLagMs = figures.earliestDueAt === null ? 0 : Math.max(0, now - figures.earliestDueAt);
    const lagging = dueLagMs > DUE_LAG_LIMIT_MS;
    return {
      status: lagging ? ('degraded' as const) : ('ok' as const),
      depth: figures.depth,
      oldestAgeSeconds,
      dueLagSeconds: Math.round(dueLagMs / 1000),
      ...(lagging ? { detail: `work due ${Math.round(dueLagMs / 60000)} minutes ago has not started` } : {}),
    };
  }

  private async certificateWithAcme(now: number): Promise<CertificatePart & { acme?: AcmeStatus }> {
    const [part, acme] = await Promise.all([this.certificatePart(now), this.acme().catch(() => null)]);
    return acme ? withAcme(part, acme) : part;
  }

  private async certificatePart(now: number): Promise<CertificatePart> {
    let files: CertificateFile[];
    try {
      files = await this.certificates();
    } catch (error) {
      return { status: 'down' as const, configured: true, detail: `cannot read the certificate: ${(error as Error).message}` };
    }
    if (files.length === 0) return { status: 'ok' as const, configured: false, detail: 'no certificate configured: listeners offer no TLS' };
    try {
      const soonest = files.map(({ source, pem }) => parseCertificate(source, pem)).sort((a, b) => a.validTo.getTime() - b.validTo.getTime())[0];
      const daysLeft = Math.floor((soonest.validTo.getTime() - now) / DAY_MS);
      const status: PartStatus = soonest.validTo.getTime() <= now ? 'down' : daysLeft < CERTIFICATE_WARNING_DAYS ? 'degraded' : 'ok';
      return {
        status,
        configured: true,
        expiresAt: soonest.validTo.toISOString(),
        daysLeft,
        ...(status !== 'ok' ? { detail: status === 'down' ? `${soonest.source} has expired` : `${soonest.source} expires in ${daysLeft} days` } : {}),
      };
    } catch (error) {
      return { status: 'down' as const, configured: true, detail: `not a PEM certificate: ${(error as Error).message}` };
    }
  }

  private async guard<T>(read: () => T | Promise<T>): Promise<T | null> {
    try {
      return await read();
    } catch {
      return null;
    }
  }
}

export type StatusReport = Awaited<ReturnType<StatusService['report']>>;

const worst = (statuses: PartStatus[]): PartStatus => (statuses.includes('down') ? 'down' : statuses.includes('degraded') ? 'degraded' : 'ok');
