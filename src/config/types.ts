import type { JunkSettings } from '../core/junk.js';

/** A listener's address and its cap on concurrent connections. */
export interface Listener {
  host: string;
  port: number;
  maxClients: number;
}

/** Mirrors schema/config.json, which validates it. */
export interface Config {
  dataDir: string;
  /** Where the service's secret keys are (secret.key, session.key, acme/); unset: `dataDir`. Every node of one service shares it. */
  secretsDir?: string;
  /**
   * This process's part in a service of several processes on one data folder (docs/design.md,
   * "Several processes on one store"): nodeId names its claims and leases, leaseMs is how long
   * a claim stays its own without renewal.
   */
  cluster: { nodeId: string; leaseMs: number };
  mailDomain: string;
  /** When unset, derived from the HTTP listener once it is bound. */
  baseUrl?: string;
  timeZone: string;
  /** tls: serve HTTPS with the `tls` certificates instead of plain HTTP. */
  http: { host: string; port: number; trustProxy: boolean; maxBodyBytes: number; maxSmallBodyBytes: number; maxBufferedBodyBytes: number; tls: boolean };
  /**
   * parseThreads: worker threads for every MIME parse of mail (never on the main thread);
   * parseTimeoutMs: the time budget of one parse, past which its thread is replaced and the
   * message kept with the bounded fallback.
   */
  smtp: Listener & {
    hostname: string;
    /** The address of a mailbox here that receives postmaster@mailDomain (RFC 5321 section 4.5.1); unset: refused. */
    postmaster?: string;
    maxMessageBytes: number;
    /** The header section of a message received by the MX, submission or IMAP APPEND (src/mime/header-limits.ts). */
    maxHeaderBytes: number;
    maxHeaderLines: number;
    /** Received mail (MX, submission, IMAP APPEND) held in memory at once (src/core/message-intake.ts). */
    maxBufferedMessageBytes: number;
    /** Received mail waiting in the spool at once; past it 452 4.3.1 and NO [LIMIT]. */
    maxSpooledMessageBytes: number;
    parseThreads: number;
    parseTimeoutMs: number;
    maxRecipients: number;
    greetingDelayMs: number;
    authenticationChecks: boolean;
    authenticationThread: boolean;
    authenticationTimeoutMs: number;
    /** When the MX answers 250 before delivering (src/services/mail/inbound.ts, InboundQueuePolicy). */
    queue: { inlineLimit: number; maxMessages: number };
  };
  /** tlsPort: implicit TLS (RFC 8314), listening only when a certificate is configured. */
  submission: Listener & { tlsPort: number; allowInsecureAuth: boolean; greetingDelayMs: number };
  imap: Listener & { tlsPort: number; allowInsecureAuth: boolean; maxLineBytes: number; maxAppendBytes: number; maxFolders: number };
  /**
   * PEM files: `cert` and `key` are the default pair; `hosts` adds pairs chosen by the name a
   * client asks for (SNI). `acme`: the default pair comes from an ACME CA instead (used only
   * without `cert`). Neither: no listener offers TLS.
   */
  tls: { cert?: string; key?: string; hosts?: Record<string, CertificateFiles>; minVersion: '1.2' | '1.3'; acme?: AcmeConfig };
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
    recipientsPerMessage: number;
    recipientsPerAddressList: number;
    subjectMaxChars: number;
    attachmentsPerMessage: number;
    attachmentFilenameMaxChars: number;
    idempotencyKeyMaxChars: number;
    inboxPageMax: number;
    inboxPageDefault: number;
    searchMaxChars: number;
    accessKeysPerAccount: number;
    outboundPerPage: number;
    outboundStateChanges: number;
    suppressionsListed: number;
    suppressionReleasesPerHour: number;
    /** Attempt n happens this many seconds after the event. */
    webhookRetrySeconds: number[];
    webhookReplays: number;
    webhookHistoryDays: number;
    webhookDeliveriesPerPage: number;
    /** Daily recipients of a human (owner) account, below its sending state's own limit. */
    humanRecipientsPerDay: number;
    /** Per domain holder: domains whose addresses the plan covers, aliases, separate mailboxes. */
    personalPlan: { domains: number; aliases: number; mailboxes: number };
  };
  /** Human owners and the console (docs/design.md "Owners, domains and payments"). */
  owners: {
    /** invite: only `agentpost owners create`; open: anyone may sign up (limited per client address). */
    signup: 'invite' | 'open';
    signupsPerIpPerHour: number;
    signInAttemptsPerAccountPer15Minutes: number;
    signInAttemptsPerIpPer15Minutes: number;
    /** A console session (and every JWT of it) ends this long after sign-in. */
    sessionHours: number;
    passwordLinkHours: number;
    claimCodeMinutes: number;
    /**
     * Login emails of the owners who operate this service: the console's Health page shows
     * them the listeners and certificate files; other owners see their own domains' checks.
     */
    operators: string[];
  };
  outbound: {
    relay?: string;
    /** PEM file of certificate authorities trusted beside Node's roots where outgoing TLS must verify. */
    caFile?: string;
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
  /** enabled: threads assigned at ingest; subjectWindowDays: how long after its last message a thread can be joined by subject alone. */
  threads: { enabled: boolean; subjectWindowDays: number };
  /** The Server-Sent Events stream (GET /api/v1/agent/events): streams open at once per account, heartbeat interval. */
  events: { maxStreamsPerAccount: number; maxStreams: number; heartbeatSeconds: number };
  /** The junk filter (docs/operators/junk.md). */
  junk: JunkSettings;
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
  payments: PaymentsConfig;
  /** token: the Bearer token GET /metrics asks for; unset, metrics are not served. */
  metrics: { token?: string };
  log: { level: 'debug' | 'info' | 'warn' | 'error' | 'silent' };
}

/**
 * Selling credits and hosting. A method without its settings is off (503 when asked for).
 * invoiceMinutes: how long an invoice or a checkout can be paid.
 */
export interface PaymentsConfig {
  invoiceMinutes: number;
  /**
   * Stripe Checkout: the secret API key and the webhook signing secret; apiUrl replaces
   * https://api.stripe.com (local development and tests); returnUrl is where the buyer lands
   * after the checkout (default: the service's base URL).
   */
  card: { secretKey?: string; webhookSecret?: string; apiUrl?: string; returnUrl?: string };
  /**
   * USDC on Polygon: the JSON-RPC URL, the extended public key every invoice's address is
   * derived from (one index per invoice), the chain id payment URIs name (EIP-681), the token
   * contract and its decimals, the
   * confirmations a paying block needs, how often the watcher looks, and how long after an
   * invoice's expiry late transfers are still looked for and recorded.
   */
  polygon: {
    rpcUrl?: string;
    xpub?: string;
    chainId: number;
    tokenContract: string;
    tokenDecimals: number;
    confirmations: number;
    watchSchedule: string;
    lateWatchHours: number;
  };
}

/**
 * Certificates by ACME (RFC 8555). Present when any `tls.acme.*` setting is given; the loader
 * fills `directoryUrl` and `httpPort` from `acmeDefaults` (src/config/defaults.ts).
 */
export interface AcmeConfig {
  directoryUrl: string;
  /** The account's contact (RFC 8555 section 7.3); the CA writes there about the account. */
  email?: string;
  /** Default: `smtp.hostname`, the host of `baseUrl`, and `mta-sts.<domain>` of each verified domain. */
  hostnames?: string[];
  /** Where the http-01 challenge (RFC 8555 section 8.3) is answered: the CA asks port 80. */
  httpPort: number;
  /** PEM file of certificate authorities trusted beside Node's roots when talking to the directory. */
  caFile?: string;
}

export interface CertificateFiles {
  cert: string;
  key: string;
}

export interface RecipientLimits {
  recipientsPerDay: number;
  recipientsPerMinute: number;
}

/** A partial config, as a file, the environment or flags give it. */
export type ConfigLayer = { [key: string]: unknown };
