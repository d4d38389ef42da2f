import { createHash, timingSafeEqual } from 'node:crypto';
import { MESSAGE_STORED, OUTBOUND_RECIPIENT_UPDATED } from '../../core/events.js';
import { AppError } from '../../core/errors.js';
import type { Committed } from '../../store/index.js';
import type { PromMetrics } from './prom-metrics.js';
import type { StatusService } from './status.js';

/** The commit-feed topics the counters are fed from (src/app/reactions.ts subscribes them). */
export const METRIC_TOPICS = [MESSAGE_STORED, OUTBOUND_RECIPIENT_UPDATED] as const;

/**
 * GET /metrics behind `metrics.token`. Without a token nothing is served and nothing is
 * counted, and prom-client, whose memory an idle server would carry for nothing
 * (docs/contributing/benchmarks.md), is never loaded. With one, prom-client loads
 * at start; what is counted before it has loaded is kept and replayed, so no count is lost.
 */
export class MetricsService {
  private prom: PromMetrics | null = null;
  private readonly loading: Promise<PromMetrics> | null;
  private pending: ((prom: PromMetrics) => void)[] = [];

  /** @param token `metrics.token`: scrapes must present it as a Bearer token; none configured, none are served. */
  constructor(
    status: StatusService,
    private readonly token: string | undefined,
  ) {
    this.loading = token
      ? import('./prom-metrics.js').then(({ PromMetrics }) => {
          const prom = new PromMetrics(status);
          for (const count of this.pending) count(prom);
          this.pending = [];
          this.prom = prom;
          return prom;
        })
      : null;
    // A failed load surfaces at the next scrape (a 500 with the cause logged), not as a crash.
    this.loading?.catch(() => {});
  }

  /**
   * The exposition for a scrape that presented `bearer`. Metrics name queue sizes and traffic,
   * so they are never public: without `metrics.token` nothing is served (503), and a wrong or
   * missing token is refused (401), compared in constant time.
   */
  async scrape(bearer: string | undefined): Promise<{ contentType: string; body: string }> {
    if (!this.token || !this.loading) {
      throw new AppError('unavailable', 'metrics are off: set metrics.token (AGENTPOST_METRICS_TOKEN) and scrape with it as a Bearer token');
    }
    if (!bearer || !sameSecret(bearer, this.token)) throw new AppError('unauthorized', 'metrics need the Bearer token of metrics.token');
    return (await this.loading).exposition();
  }

  /** A commit-feed listener: cheap counting only. */
  onCommitted(entries: readonly Committed[]): void {
    this.count((prom) => prom.onCommitted(entries));
  }

  webhookAttempt(ok: boolean): void {
    this.count((prom) => prom.webhookAttempt(ok));
  }

  /** `route` is the route template (`/api/v1/agent/email/:id`), never the raw path, to bound the label values. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.count((prom) => prom.observeHttp(method, route, status, seconds));
  }

  private count(update: (prom: PromMetrics) => void): void {
    if (this.prom) update(this.prom);
    else if (this.loading) this.pending.push(update);
  }
}

/** Equal-length digests, so the comparison time says nothing about the token. */
const sameSecret = (given: string, expected: string): boolean =>
  timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());
