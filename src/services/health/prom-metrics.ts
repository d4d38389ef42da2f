import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AcmeStatus } from '../../core/certificates.js';
import { MESSAGE_STORED, OUTBOUND_RECIPIENT_UPDATED, type MessageStoredEvent, type OutboundRecipientUpdatedEvent } from '../../core/events.js';
import type { Committed } from '../../store/index.js';
import { INBOX, SENT } from '../mail/mailbox.js';
import type { StatusReport, StatusService } from './status.js';

/**
 * Prometheus metrics with prom-client (text exposition format 0.0.4) in a registry of this
 * app's own, so two apps in one process (tests) never share counters. Counters count what
 * committed, as the store's commit feed reports it; gauges are read from the status figures
 * at scrape time. Counters start at zero with the process, as Prometheus expects of a restart.
 */
export class PromMetrics {
  private readonly registry = new Registry();
  private readonly received: Counter;
  private readonly sent: Counter;
  private readonly outcomes: Counter<'status'>;
  private readonly webhookAttempts: Counter<'outcome'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;

  constructor(private readonly status: StatusService) {
    const registers = [this.registry];
    this.received = new Counter({ name: 'agentpost_messages_received_total', help: 'Messages stored in an INBOX (one per local recipient).', registers });
    this.sent = new Counter({ name: 'agentpost_messages_sent_total', help: 'Messages accepted for sending (REST, MCP, SMTP submission).', registers });
    this.outcomes = new Counter({
      name: 'agentpost_delivery_outcomes_total',
      help: 'Outgoing recipients entering each state (queued on acceptance, then delivered, deferred, bounced, ...).',
      labelNames: ['status'],
      registers,
    });
    this.webhookAttempts = new Counter({
      name: 'agentpost_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'agentpost_http_request_duration_seconds',
      help: 'HTTP request latency (REST, MCP, health) by route template.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.queueGauges();
    // Process figures: CPU, memory, event-loop lag.
    collectDefaultMetrics({ register: this.registry, prefix: 'agentpost_' });
    this.renameTotalGauges();
  }

  /**
   * prom-client's default metrics name three gauges `..._total`, the suffix Prometheus keeps
   * for counters (https://prometheus.io/docs/practices/naming/; promtool flags them). Each is
   * served under a gauge's name instead, read from the original at scrape time.
   */
  private renameTotalGauges(): void {
    for (const kind of ['handles', 'requests', 'resources']) {
      const name = `agentpost_nodejs_active_${kind}_total`;
      const original = this.registry.getSingleMetric(name);
      // Absent on a Node.js without the call it reads.
      if (!original) continue;
      this.registry.removeSingleMetric(name);
      const renamed: Gauge = new Gauge({
        name: `agentpost_nodejs_${kind}_active`,
        help: `Total number of active ${kind} (the sum of agentpost_nodejs_active_${kind} over its types).`,
        registers: [this.registry],
        async collect() {
          const { values } = await original.get();
          renamed.reset();
          for (const { labels, value } of values) renamed.set(labels, value);
        },
      });
    }
  }

  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** A commit-feed listener: cheap counting only. */
  onCommitted(entries: readonly Committed[]): void {
    for (const { topic, payload } of entries) {
      if (topic === MESSAGE_STORED) {
        const { folder } = payload as MessageStoredEvent;
        if (folder === INBOX) this.received.inc();
        else if (folder === SENT) this.sent.inc();
      } else if (topic === OUTBOUND_RECIPIENT_UPDATED) {
        this.outcomes.inc({ status: (payload as OutboundRecipientUpdatedEvent).status });
      }
    }
  }

  webhookAttempt(ok: boolean): void {
    this.webhookAttempts.inc({ outcome: ok ? 'success' : 'failure' });
  }

  /** `route` is the route template (`/api/v1/agent/email/:id`), never the raw path, to bound the label values. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status) }, seconds);
  }

  /** Gauges read from one status report per scrape: prom-client collects every metric at once. */
  private queueGauges(): void {
    let scrape: { at: number; report: Promise<StatusReport> } | null = null;
    const report = (): Promise<StatusReport> => {
      if (!scrape || Date.now() - scrape.at > 1000) scrape = { at: Date.now(), report: this.status.report() };
      return scrape.report;
    };
    const gauge = (name: string, help: string, labelNames: string[], fill: (gauge: Gauge, parts: StatusReport['parts']) => void) => {
      const metric: Gauge = new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        async collect() {
          metric.reset();
          fill(metric, (await report()).parts);
        },
      });
    };
    const queues = (parts: StatusReport['parts']) => ({ inbound: parts.inbound, delivery: parts.delivery, webhooks: parts.webhooks });
    gauge(
      'agentpost_queue_depth',
      'Work waiting: queue="inbound" (received messages not yet in their mailboxes), "delivery" (recipients), "webhooks" (events), "search" (messages to index).',
      ['queue'],
      (metric, parts) => {
        for (const [queue, part] of Object.entries(queues(parts))) metric.set({ queue }, 'depth' in part ? part.depth : 0);
        metric.set({ queue: 'search' }, 'backlog' in parts.searchIndex ? parts.searchIndex.backlog : 0);
      },
    );
    gauge('agentpost_queue_oldest_age_seconds', 'Age of the oldest waiting item per queue (0 when empty).', ['queue'], (metric, parts) => {
      for (const [queue, part] of Object.entries(queues(parts))) metric.set({ queue }, 'oldestAgeSeconds' in part ? part.oldestAgeSeconds : 0);
    });
    gauge('agentpost_queue_due_lag_seconds', 'How long the earliest due item has waited past its due time, per queue.', ['queue'], (metric, parts) => {
      for (const [queue, part] of Object.entries(queues(parts))) metric.set({ queue }, 'dueLagSeconds' in part ? part.dueLagSeconds : 0);
    });
    gauge('agentpost_part_up', '1 when the part is ok or degraded, 0 when down (GET /api/v1/status has the detail).', ['part'], (metric, parts) => {
      for (const [part, value] of Object.entries(parts)) metric.set({ part }, value.status === 'down' ? 0 : 1);
    });
    // Labelled so that without a certificate there is no sample at all, rather than a 0.
    gauge(
      'agentpost_certificate_expiry_timestamp_seconds',
      'When the configured TLS certificate (the soonest to expire) expires; absent without one.',
      ['certificate'],
      (metric, parts) => {
        if ('expiresAt' in parts.certificate && parts.certificate.expiresAt) metric.set({ certificate: 'tls' }, Date.parse(parts.certificate.expiresAt) / 1000);
      },
    );
    // Labelled by the CA's directory: absent unless certificates come by ACME.
    const acmeGauge = (name: string, help: string, value: (acme: AcmeStatus) => number | null) =>
      gauge(name, help, ['directory'], (metric, parts) => {
        const acme = parts.certificate.acme ?? null;
        const figure = acme ? value(acme) : null;
        if (acme && figure !== null) metric.set({ directory: acme.directoryUrl }, figure);
      });
    acmeGauge('agentpost_acme_failures', 'ACME attempts failed since the last certificate came (0 when the last one succeeded).', (acme) => acme.failures);
    acmeGauge(
      'agentpost_acme_last_failure_timestamp_seconds',
      'When an ACME attempt last failed (GET /api/v1/status has the error); absent when none has.',
      (acme) => (acme.lastErrorAt ? Date.parse(acme.lastErrorAt) / 1000 : null),
    );
    acmeGauge('agentpost_acme_renewal_timestamp_seconds', 'When the certificate from ACME is to be renewed.', (acme) =>
      acme.renewAt ? Date.parse(acme.renewAt) / 1000 : null,
    );
  }
}
