import type { Config } from './types.js';

/** The embedded defaults: `npm start` on a fresh machine runs with exactly these. */
export const defaultConfig = (): Config => ({
  dataDir: './data',
  // One process: one node, named so that its claims left by a crash are its own again at the next start.
  // leaseMs: far longer than a handoff's or a webhook attempt's own timeouts, so a live node never loses a lease it renews.
  cluster: { nodeId: 'main', leaseMs: 60_000 },
  mailDomain: 'agents.localhost',
  timeZone: 'UTC',
  http: {
    host: '127.0.0.1',
    port: 8080,
    trustProxy: false,
    // Only a send by a key that may send gets the large limit; every other body is small.
    maxBodyBytes: 16 * 1024 * 1024,
    maxSmallBodyBytes: 16 * 1024,
    maxBufferedBodyBytes: 24 * 1024 * 1024,
    tls: false,
  },
  // Every parse runs on a thread: the time budget works by replacing a thread that overruns it.
  // maxRecipients: the least RFC 5321 4.5.3.1.8 allows; each accepted recipient is a stored copy.
  // greetingDelayMs: the least pause that still refused every client that talked the moment it
  // connected (docs/operators/inbound.md; the figures in docs/contributing/benchmarks.md).
  smtp: {
    host: '127.0.0.1',
    port: 2525,
    hostname: 'localhost',
    maxMessageBytes: 25 * 1024 * 1024,
    // Postfix's header_size_limit; Gmail refuses past 500 KB and 5,000 fields (docs/operators/inbound.md "Header limits").
    maxHeaderBytes: 100 * 1024,
    maxHeaderLines: 10_000,
    // Received mail held in memory at once (MX, submission, IMAP APPEND); the rest waits in the
    // spool, up to its own limit (docs/operators/inbound.md, "Large messages").
    maxBufferedMessageBytes: 32 * 1024 * 1024,
    maxSpooledMessageBytes: 1024 * 1024 * 1024,
    parseThreads: 1,
    parseTimeoutMs: 2_000,
    maxRecipients: 100,
    maxClients: 2000,
    greetingDelayMs: 10,
    authenticationChecks: true,
    // On the main thread: the header limits bound what a message's checks hold it (tens of ms at
    // most), and a thread of their own costs memory at a burst's peak (docs/operators/configuration.md).
    authenticationThread: false,
    authenticationTimeoutMs: 20_000,
    // Past 8 deliveries in progress a burst is on: messages are queued, answered, and delivered
    // once it pauses (a trickle meanwhile); 20,000 waiting (80 MB of 4 KB mail, on disk) bring
    // back delivery before 250 (docs/operators/inbound.md).
    queue: { inlineLimit: 8, maxMessages: 20_000 },
  },
  // Submission clients authenticate, so a pause before the greeting would protect nothing.
  submission: { host: '127.0.0.1', port: 2587, tlsPort: 2465, allowInsecureAuth: false, maxClients: 200, greetingDelayMs: 0 },
  imap: {
    host: '127.0.0.1',
    port: 2143,
    tlsPort: 2993,
    allowInsecureAuth: false,
    maxLineBytes: 64 * 1024,
    maxClients: 2000,
    maxAppendBytes: 25 * 1024 * 1024,
    maxFolders: 1000,
  },
  // RFC 8996 retired TLS 1.0 and 1.1; RFC 9325 section 3.1.1 asks for 1.2 at least.
  tls: { minVersion: '1.2' },
  limits: {
    registrationsPerIpPerHour: 5,
    readMaxBytes: 10 * 1024 * 1024,
    keyRotationMutationsPer15Minutes: 12,
    keyReplacementMinutes: 30,
    factorAttemptsPer15Minutes: 10,
    sendRequestsPerMinute: 100,
    sendTextMaxBytes: 1024 * 1024,
    sendAttachmentsMaxBytes: 8 * 1024 * 1024,
    // Sending limits (docs/agents/sending.md): probation 10/day and 3/min, standard 100/day. Reviewed and the
    // per-minute numbers of standard and reviewed are ours (README "Limits").
    sendingStates: {
      probation: { recipientsPerDay: 10, recipientsPerMinute: 3 },
      standard: { recipientsPerDay: 100, recipientsPerMinute: 50 },
      reviewed: { recipientsPerDay: 1000, recipientsPerMinute: 200 },
    },
    idempotencyRetentionHours: 24,
    outboundTrackingDays: 90,
    // The rest of the limits, one setting per number (docs/operators/configuration.md).
    recipientsPerMessage: 50,
    recipientsPerAddressList: 50,
    subjectMaxChars: 998,
    attachmentsPerMessage: 20,
    attachmentFilenameMaxChars: 255,
    idempotencyKeyMaxChars: 128,
    inboxPageMax: 100,
    inboxPageDefault: 50,
    searchMaxChars: 200,
    accessKeysPerAccount: 100,
    outboundPerPage: 50,
    outboundStateChanges: 200,
    suppressionsListed: 100,
    suppressionReleasesPerHour: 10,
    // docs/design.md "webhook retry schedule": 8 attempts over 24 hours.
    webhookRetrySeconds: [0, 5, 300, 1800, 7200, 18000, 36000, 86400],
    webhookReplays: 3,
    webhookHistoryDays: 30,
    webhookDeliveriesPerPage: 50,
    // A human account sends to 3 recipients a day for free (`limits.humanRecipientsPerDay`, docs/operators/owners.md).
    humanRecipientsPerDay: 3,
    // The Personal plan includes one domain, 10 aliases and up to 10 mailboxes (docs/operators/domains.md).
    personalPlan: { domains: 1, aliases: 10, mailboxes: 10 },
  },
  owners: {
    signup: 'invite',
    signupsPerIpPerHour: 5,
    signInAttemptsPerAccountPer15Minutes: 10,
    signInAttemptsPerIpPer15Minutes: 50,
    sessionHours: 12,
    passwordLinkHours: 72,
    claimCodeMinutes: 60,
    operators: [],
  },
  outbound: { port: 25, allowLoopbackMx: false, timeoutMs: 60_000, concurrency: 20, maxIdlePerHost: 20, retryHours: 48 },
  webhooks: { allowInsecure: false, timeoutMs: 7000, concurrency: 32 },
  threads: { enabled: true, subjectWindowDays: 7 },
  // maxStreams: as many as smtp.maxClients; what idle streams cost is in docs/contributing/benchmarks.md (connections).
  events: { maxStreamsPerAccount: 5, maxStreams: 2000, heartbeatSeconds: 15 },
  // threshold: the statistics alone reach it at 80% junk-like (docs/contributing/benchmarks.md, bench:junk).
  junk: {
    enabled: true,
    threshold: 3,
    minJudgments: 20,
    timeoutMs: 2000,
    blocklists: [],
    blocklistPoints: 3,
    serverModelTrainers: [],
    cacheMegabytes: 64,
  },
  // c-ares' own default is 5 s and 4 tries; mail paths wait on these, so fewer tries.
  dns: { servers: [], timeoutMs: 5000, tries: 2 },
  // Daily, at an hour few people pick, so re-checks of many servers do not all land at midnight.
  domains: { recheckSchedule: '0 17 3 * * *', deletedMailboxRetentionDays: 30, mtaStsMode: 'testing' },
  funding: { paused: true },
  // A Polygon payment needs 128 confirmations (docs/operators/payments.md). The token is Circle's USDC on Polygon PoS.
  payments: {
    invoiceMinutes: 60,
    card: {},
    polygon: {
      tokenContract: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
      tokenDecimals: 6,
      // Polygon PoS mainnet, which the payment URIs (EIP-681) of invoices name.
      chainId: 137,
      confirmations: 128,
      watchSchedule: '*/20 * * * * *',
      lateWatchHours: 24,
    },
  },
  metrics: {},
  log: { level: 'info' },
});

/**
 * What `tls.acme` gets for the settings it does not give. Not in defaultConfig: ACME runs only
 * when the operator gives some `tls.acme.*` setting (an email, a directory), never by itself.
 * Let's Encrypt's production directory, and port 80, the only one the CA asks for http-01
 * (RFC 8555 section 8.3).
 */
export const acmeDefaults = () => ({ directoryUrl: 'https://acme-v02.api.letsencrypt.org/directory', httpPort: 80 });
