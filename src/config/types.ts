/** A listener's address and its cap on concurrent connections. */
export interface Listener { host: string; port: number; maxClients: number }

/** Mirrors schema/config.json, which validates it. */
export interface Config {
  dataDir: string;
  mailDomain: string;
  /** When unset, derived from the HTTP listener once it is bound. */
  baseUrl?: string;
  timeZone: string;
  http: { host: string; port: number; trustProxy: boolean; maxBodyBytes: number; maxSmallBodyBytes: number; maxBufferedBodyBytes: number };
  /**
   * parseThreads: worker threads for every MIME parse of mail (never on the main thread);
   * parseTimeoutMs: the time budget of one parse, past which its thread is replaced and the
   * message kept with the bounded fallback.
   */
  smtp: Listener & { hostname: string; maxMessageBytes: number; parseThreads: number; parseTimeoutMs: number; maxRecipients: number; greetingDelayMs: number };
  submission: Listener & { allowInsecureAuth: boolean; greetingDelayMs: number };
  imap: Listener & { allowInsecureAuth: boolean; maxLineBytes: number };
  limits: {
    registrationsPerIpPerHour: number;
    readMaxBytes: number;
    keyRotationMutationsPer15Minutes: number;
    keyReplacementMinutes: number;
    factorAttemptsPer15Minutes: number;
    sendRequestsPerMinute: number;
    sendTextMaxBytes: number;
    sendAttachmentsMaxBytes: number;
    sendingStates: Record<'probation' | 'standard' | 'reviewed', RecipientLimits>;
    idempotencyRetentionHours: number;
    outboundTrackingDays: number;
    /** Per domain holder: domains whose addresses the plan covers, aliases, separate mailboxes. */
    personalPlan: { domains: number; aliases: number; mailboxes: number };
  };
  outbound: {
    relay?: string;
    port: number;
    /** Local development and tests only: MX answers may point at loopback. */
    allowLoopbackMx: boolean;
    timeoutMs: number;
    concurrency: number;
    maxIdlePerHost: number;
    retryHours: number;
  };
  /** allowInsecure is for local development and tests only: it lets webhooks reach http and loopback. */
  webhooks: { allowInsecure: boolean; timeoutMs: number; concurrency: number };
  /** servers empty: the system's resolvers (/etc/resolv.conf). */
  dns: { servers: string[]; timeoutMs: number; tries: number };
  /**
   * Custom domains. spf: the SPF mechanisms their records name (unset: derived from the host
   * name or the relay); recheckSchedule: cron of the daily DNS re-check; a deleted domain
   * mailbox's mail is kept deletedMailboxRetentionDays; mtaStsMode: the served policy's mode.
   */
  domains: { spf?: string; recheckSchedule: string; deletedMailboxRetentionDays: number; mtaStsMode: 'testing' | 'enforce' };
  /** paused: payment endpoints answer 503 and hosting comes from operator grants only. */
  funding: { paused: boolean };
  log: { level: 'debug' | 'info' | 'warn' | 'error' | 'silent' };
}


export interface RecipientLimits {
  recipientsPerDay: number;
  recipientsPerMinute: number;
}

/** A partial config, as a file, the environment or flags give it. */
export type ConfigLayer = { [key: string]: unknown };
