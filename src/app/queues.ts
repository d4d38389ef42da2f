import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Services } from '../services/index.js';
import { Calendar } from '../runtime/calendar.js';
import { QueueRunner } from '../runtime/queue-runner.js';
import { bodyBackfillQueue, BACKFILL_DELAY_MS, type BodyBackfillRun } from '../runtime/queues/bodies.js';
import { deliveryQueue, type DeliveryRun } from '../runtime/queues/delivery.js';
import { InboundQueue, type InboundRun } from '../runtime/queues/inbound.js';
import { junkTrainingQueue, TRAIN_DELAY_MS } from '../runtime/queues/junk-trainer.js';
import { INDEX_DELAY_MS, searchIndexQueue, type SearchIndexRun } from '../runtime/queues/search-index.js';
import { WebhookQueue, type WebhookRun } from '../runtime/queues/webhooks.js';
import type { CalendarRun } from '../runtime/calendar.js';

/** Every durable queue of the service, each with its one runner. */
export interface Queues {
  delivery: QueueRunner<DeliveryRun>;
  webhooks: QueueRunner<WebhookRun>;
  inbound: QueueRunner<InboundRun>;
  search: QueueRunner<SearchIndexRun>;
  bodies: QueueRunner<BodyBackfillRun>;
  calendar: QueueRunner<CalendarRun>;
  /** The junk filter's training on judgments made over IMAP (src/services/junk/training.ts). */
  junkTraining: QueueRunner;
}

export type QueueName = keyof Queues;

export interface BuiltQueues {
  queues: Queues;
  /** The inbound queue's work, told of each queued message (its burst pacing). */
  inbound: InboundQueue;
  /** The calendar's work, which the jobs are registered with at start. */
  calendar: Calendar;
}

/** How many webhook attempts may be in flight at once, across endpoints. */
export interface QueueSettings {
  webhookConcurrency: number;
}

/**
 * The runners over the services' queues. A webhook attempt's end kicks the webhook runner (a
 * slot is free); everything else is kicked after a commit (src/app/reactions.ts) or woken at
 * its queue's next due time.
 */
export const createQueues = (services: Services, clock: Clock, logger: Logger, settings: QueueSettings): BuiltQueues => {
  const inbound = new InboundQueue(services.inbound, logger);
  const calendar = new Calendar(services.calendar, logger);
  const webhooks: QueueRunner<WebhookRun> = QueueRunner.of(
    { name: 'webhooks', kickDelayMs: WEBHOOK_KICK_DELAY_MS },
    new WebhookQueue(services.webhookDispatch, logger, {
      concurrency: settings.webhookConcurrency,
      onAttempt: (ok) => services.metrics.webhookAttempt(ok),
      onSettled: () => webhooks.kick(),
    }),
    clock,
    logger,
  );
  const queues: Queues = {
    delivery: QueueRunner.of({ name: 'delivery' }, deliveryQueue(services.delivery, logger), clock, logger),
    webhooks,
    inbound: QueueRunner.of({ name: 'inbound' }, inbound, clock, logger),
    search: QueueRunner.of({ name: 'search-index', kickDelayMs: INDEX_DELAY_MS }, searchIndexQueue(services.searchIndex, logger), clock, logger),
    bodies: QueueRunner.of({ name: 'body-backfill', kickDelayMs: BACKFILL_DELAY_MS }, bodyBackfillQueue(services.bodies, logger), clock, logger),
    calendar: QueueRunner.of({ name: 'calendar' }, calendar, clock, logger),
    junkTraining: QueueRunner.of({ name: 'junk-training', kickDelayMs: TRAIN_DELAY_MS }, junkTrainingQueue(services.junkTraining, logger), clock, logger),
  };
  return { queues, inbound, calendar };
};

/**
 * How long a webhook kick waits for more commits to share its run: under an SMTP burst a run
 * per group-commit batch read an outbox of a few rows each time, a cost paid per run
 * (docs/contributing/benchmarks.md). 10 ms is nothing a receiver notices beside its network.
 */
const WEBHOOK_KICK_DELAY_MS = 10;
