import type { Config } from './types.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** The `limits.*` settings (docs/operators/configuration.md) as the services take them. */
export const servicesLimits = (limits: Config['limits']) => ({
  sending: {
    limits: { sendRequestsPerMinute: limits.sendRequestsPerMinute, states: limits.sendingStates, humanRecipientsPerDay: limits.humanRecipientsPerDay },
    textMaxBytes: limits.sendTextMaxBytes,
    attachmentsMaxBytes: limits.sendAttachmentsMaxBytes,
    idempotencyRetentionMs: limits.idempotencyRetentionHours * HOUR_MS,
    idempotencyKeyMaxChars: limits.idempotencyKeyMaxChars,
    recipientsPerMessage: limits.recipientsPerMessage,
    recipientsPerAddressList: limits.recipientsPerAddressList,
    subjectMaxChars: limits.subjectMaxChars,
    attachmentsPerMessage: limits.attachmentsPerMessage,
    attachmentFilenameMaxChars: limits.attachmentFilenameMaxChars,
  },
  outboundTracking: { trackingMs: limits.outboundTrackingDays * DAY_MS, perPage: limits.outboundPerPage, stateChanges: limits.outboundStateChanges },
  accessKeysPerAccount: limits.accessKeysPerAccount,
  suppressions: { listed: limits.suppressionsListed, releasesPerHour: limits.suppressionReleasesPerHour },
  webhooks: {
    retryMs: limits.webhookRetrySeconds.map((seconds) => seconds * 1000),
    replays: limits.webhookReplays,
    historyMs: limits.webhookHistoryDays * DAY_MS,
    perPage: limits.webhookDeliveriesPerPage,
  },
});
