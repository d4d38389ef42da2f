/**
 * The settings that the environment and command-line flags can set. Every other setting
 * comes from the JSON config file. Names are fixed by the foundation issue.
 */
export interface SettingSource {
  env: string;
  flag: string;
  path: string;
  /** list: comma-separated in the environment and flags. */
  type: 'string' | 'integer' | 'boolean' | 'list';
}

export const SETTING_SOURCES: readonly SettingSource[] = [
  { env: 'AGENTPOST_DATA_DIR', flag: 'data-dir', path: 'dataDir', type: 'string' },
  { env: 'AGENTPOST_SECRETS_DIR', flag: 'secrets-dir', path: 'secretsDir', type: 'string' },
  { env: 'AGENTPOST_NODE_ID', flag: 'node-id', path: 'cluster.nodeId', type: 'string' },
  { env: 'AGENTPOST_CLUSTER_LEASE_MS', flag: 'cluster-lease-ms', path: 'cluster.leaseMs', type: 'integer' },
  { env: 'AGENTPOST_HTTP_HOST', flag: 'http-host', path: 'http.host', type: 'string' },
  { env: 'AGENTPOST_HTTP_PORT', flag: 'http-port', path: 'http.port', type: 'integer' },
  { env: 'AGENTPOST_SMTP_HOST', flag: 'smtp-host', path: 'smtp.host', type: 'string' },
  { env: 'AGENTPOST_SMTP_PORT', flag: 'smtp-port', path: 'smtp.port', type: 'integer' },
  { env: 'AGENTPOST_PARSE_THREADS', flag: 'parse-threads', path: 'smtp.parseThreads', type: 'integer' },
  { env: 'AGENTPOST_SMTP_MAX_CLIENTS', flag: 'smtp-max-clients', path: 'smtp.maxClients', type: 'integer' },
  { env: 'AGENTPOST_SMTP_GREETING_DELAY_MS', flag: 'smtp-greeting-delay-ms', path: 'smtp.greetingDelayMs', type: 'integer' },
  { env: 'AGENTPOST_SMTP_POSTMASTER', flag: 'smtp-postmaster', path: 'smtp.postmaster', type: 'string' },
  { env: 'AGENTPOST_SMTP_AUTHENTICATION_CHECKS', flag: 'smtp-authentication-checks', path: 'smtp.authenticationChecks', type: 'boolean' },
  { env: 'AGENTPOST_SMTP_AUTHENTICATION_THREAD', flag: 'smtp-authentication-thread', path: 'smtp.authenticationThread', type: 'boolean' },
  { env: 'AGENTPOST_SMTP_QUEUE_INLINE_LIMIT', flag: 'smtp-queue-inline-limit', path: 'smtp.queue.inlineLimit', type: 'integer' },
  { env: 'AGENTPOST_SMTP_QUEUE_MAX_MESSAGES', flag: 'smtp-queue-max-messages', path: 'smtp.queue.maxMessages', type: 'integer' },
  { env: 'AGENTPOST_PARSE_TIMEOUT_MS', flag: 'parse-timeout-ms', path: 'smtp.parseTimeoutMs', type: 'integer' },
  { env: 'AGENTPOST_SMTP_MAX_HEADER_BYTES', flag: 'smtp-max-header-bytes', path: 'smtp.maxHeaderBytes', type: 'integer' },
  { env: 'AGENTPOST_SMTP_MAX_HEADER_LINES', flag: 'smtp-max-header-lines', path: 'smtp.maxHeaderLines', type: 'integer' },
  { env: 'AGENTPOST_IMAP_HOST', flag: 'imap-host', path: 'imap.host', type: 'string' },
  { env: 'AGENTPOST_IMAP_PORT', flag: 'imap-port', path: 'imap.port', type: 'integer' },
  { env: 'AGENTPOST_IMAP_MAX_CLIENTS', flag: 'imap-max-clients', path: 'imap.maxClients', type: 'integer' },
  { env: 'AGENTPOST_IMAP_MAX_APPEND_BYTES', flag: 'imap-max-append-bytes', path: 'imap.maxAppendBytes', type: 'integer' },
  { env: 'AGENTPOST_IMAP_MAX_FOLDERS', flag: 'imap-max-folders', path: 'imap.maxFolders', type: 'integer' },
  { env: 'AGENTPOST_MAIL_DOMAIN', flag: 'mail-domain', path: 'mailDomain', type: 'string' },
  { env: 'AGENTPOST_BASE_URL', flag: 'base-url', path: 'baseUrl', type: 'string' },
  { env: 'AGENTPOST_TIME_ZONE', flag: 'time-zone', path: 'timeZone', type: 'string' },
  { env: 'AGENTPOST_TRUST_PROXY', flag: 'trust-proxy', path: 'http.trustProxy', type: 'boolean' },
  { env: 'AGENTPOST_SUBMISSION_HOST', flag: 'submission-host', path: 'submission.host', type: 'string' },
  { env: 'AGENTPOST_SUBMISSION_PORT', flag: 'submission-port', path: 'submission.port', type: 'integer' },
  { env: 'AGENTPOST_DNS_SERVERS', flag: 'dns-servers', path: 'dns.servers', type: 'list' },
  { env: 'AGENTPOST_SUBMISSION_MAX_CLIENTS', flag: 'submission-max-clients', path: 'submission.maxClients', type: 'integer' },
  { env: 'AGENTPOST_SUBMISSION_GREETING_DELAY_MS', flag: 'submission-greeting-delay-ms', path: 'submission.greetingDelayMs', type: 'integer' },
  { env: 'AGENTPOST_SUBMISSION_TLS_PORT', flag: 'submission-tls-port', path: 'submission.tlsPort', type: 'integer' },
  { env: 'AGENTPOST_IMAP_TLS_PORT', flag: 'imap-tls-port', path: 'imap.tlsPort', type: 'integer' },
  { env: 'AGENTPOST_TLS_CERT', flag: 'tls-cert', path: 'tls.cert', type: 'string' },
  { env: 'AGENTPOST_TLS_KEY', flag: 'tls-key', path: 'tls.key', type: 'string' },
  { env: 'AGENTPOST_HTTP_TLS', flag: 'http-tls', path: 'http.tls', type: 'boolean' },
  { env: 'AGENTPOST_ACME_DIRECTORY_URL', flag: 'acme-directory-url', path: 'tls.acme.directoryUrl', type: 'string' },
  { env: 'AGENTPOST_ACME_EMAIL', flag: 'acme-email', path: 'tls.acme.email', type: 'string' },
  { env: 'AGENTPOST_ACME_HOSTNAMES', flag: 'acme-hostnames', path: 'tls.acme.hostnames', type: 'list' },
  { env: 'AGENTPOST_ACME_HTTP_PORT', flag: 'acme-http-port', path: 'tls.acme.httpPort', type: 'integer' },
  { env: 'AGENTPOST_ACME_CA_FILE', flag: 'acme-ca-file', path: 'tls.acme.caFile', type: 'string' },
  { env: 'AGENTPOST_FUNDING_PAUSED', flag: 'funding-paused', path: 'funding.paused', type: 'boolean' },
  { env: 'AGENTPOST_DOMAINS_SPF', flag: 'domains-spf', path: 'domains.spf', type: 'string' },
  { env: 'AGENTPOST_STRIPE_SECRET_KEY', flag: 'stripe-secret-key', path: 'payments.card.secretKey', type: 'string' },
  { env: 'AGENTPOST_STRIPE_WEBHOOK_SECRET', flag: 'stripe-webhook-secret', path: 'payments.card.webhookSecret', type: 'string' },
  { env: 'AGENTPOST_POLYGON_RPC_URL', flag: 'polygon-rpc-url', path: 'payments.polygon.rpcUrl', type: 'string' },
  { env: 'AGENTPOST_POLYGON_XPUB', flag: 'polygon-xpub', path: 'payments.polygon.xpub', type: 'string' },
  { env: 'AGENTPOST_METRICS_TOKEN', flag: 'metrics-token', path: 'metrics.token', type: 'string' },
  { env: 'AGENTPOST_LOG_LEVEL', flag: 'log-level', path: 'log.level', type: 'string' },
  { env: 'AGENTPOST_OUTBOUND_CA_FILE', flag: 'outbound-ca-file', path: 'outbound.caFile', type: 'string' },
  { env: 'AGENTPOST_OUTBOUND_ALLOW_LOOPBACK_MX', flag: 'outbound-allow-loopback-mx', path: 'outbound.allowLoopbackMx', type: 'boolean' },
  { env: 'AGENTPOST_OWNERS_SIGNUP', flag: 'owners-signup', path: 'owners.signup', type: 'string' },
  { env: 'AGENTPOST_OPERATORS', flag: 'operators', path: 'owners.operators', type: 'list' },
  { env: 'AGENTPOST_WEBHOOKS_ALLOW_INSECURE', flag: 'webhooks-allow-insecure', path: 'webhooks.allowInsecure', type: 'boolean' },
  { env: 'AGENTPOST_THREADS_ENABLED', flag: 'threads-enabled', path: 'threads.enabled', type: 'boolean' },
  { env: 'AGENTPOST_THREADS_SUBJECT_WINDOW_DAYS', flag: 'threads-subject-window-days', path: 'threads.subjectWindowDays', type: 'integer' },
  { env: 'AGENTPOST_EVENTS_MAX_STREAMS', flag: 'events-max-streams', path: 'events.maxStreams', type: 'integer' },
  { env: 'AGENTPOST_EVENTS_MAX_STREAMS_PER_ACCOUNT', flag: 'events-max-streams-per-account', path: 'events.maxStreamsPerAccount', type: 'integer' },
  { env: 'AGENTPOST_JUNK_ENABLED', flag: 'junk-enabled', path: 'junk.enabled', type: 'boolean' },
  { env: 'AGENTPOST_JUNK_BLOCKLISTS', flag: 'junk-blocklists', path: 'junk.blocklists', type: 'list' },
  { env: 'AGENTPOST_JUNK_SERVER_MODEL_TRAINERS', flag: 'junk-server-model-trainers', path: 'junk.serverModelTrainers', type: 'list' },
];

export const CONFIG_FILE_ENV = 'AGENTPOST_CONFIG';
export const CONFIG_FILE_FLAG = 'config';
