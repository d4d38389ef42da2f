import { join } from 'node:path';
import type { Config } from '../config/types.js';
import { certificatePaths, servicesConfigOf } from '../config/services-config.js';
import { secretsDirOf } from '../config/secrets.js';
import type { AuthenticateMail } from '../core/authentication.js';
import { systemClock } from '../core/clock.js';
import { createLogger, type Logger } from '../core/logger.js';
import type { ParseMail } from '../core/parsed-message.js';
import type { Argon2Binding, Argon2Loader } from '../core/passwords.js';
import { certificateFiles } from '../net/certificate-files.js';
import { createDnsResolver } from '../net/dns-resolver.js';
import { HttpsMtaStsFetcher } from '../net/mta-sts-http.js';
import { paymentAdapters } from '../net/payment-adapters.js';
import { tcpGreetingProbe } from '../net/port-probe.js';
import { HttpWebhookSender } from '../net/webhook-http.js';
import type { RuntimeProbe } from '../services/health/status.js';
import { createServices } from '../services/index.js';
import { SmtpHandoff } from '../smtp/outbound.js';
import { Store } from '../store/index.js';
import { loadSecretKey, loadSessionKey } from '../store/secret-key.js';
import { acmeStatusFile } from '../tls/acme-files.js';
import { readTrustAnchors } from '../tls/trust-anchors.js';
import type { AppOptions } from './options.js';
import { createIndexWriter } from './workers.js';

/** A receiver answers with a small response; more than this is not read (docs/agents/webhooks.md). */
const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;

export const databasePath = (config: Config): string => join(config.dataDir, 'agentpost.db');

/** The logger the caller gave, or one at the configured level on stderr. */
export const loggerOf = (config: Config, options: AppOptions): Logger => options.logger ?? createLogger(config.log.level, (line) => process.stderr.write(line));

/** What only `serve` has for the services: its threads and listeners. */
export interface ServeParts {
  parseMail?: ParseMail;
  authenticateMail?: AuthenticateMail;
  runtime?: RuntimeProbe;
}

/** Opens the store and builds the services: what both `serve` and the admin commands need. */
export const openCore = (config: Config, options: AppOptions = {}, { parseMail, authenticateMail, runtime }: ServeParts = {}) => {
  const clock = options.clock ?? systemClock;
  const logger = loggerOf(config, options);
  const store = Store.open(databasePath(config), { nativeBinding: options.nativeBinding, rankSampleSpacing: options.rankSampleSpacing });
  const indexWriter = createIndexWriter(store, options, logger);
  // No connection is opened until a delivery run needs one; admin commands never do.
  const extraCa = config.outbound.caFile ? [readTrustAnchors(config.outbound.caFile)] : undefined;
  const handoff = new SmtpHandoff({
    heloName: config.smtp.hostname,
    timeoutMs: config.outbound.timeoutMs,
    maxIdlePerHost: config.outbound.maxIdlePerHost,
    idleMs: 30_000,
    extraCa,
    logger,
  });
  const dns = options.dns ?? createDnsResolver(config.dns);
  const addressResolver = options.addressResolver ?? dns;
  const webhookSender = new HttpWebhookSender(addressResolver, {
    allowInsecure: config.webhooks.allowInsecure,
    timeoutMs: config.webhooks.timeoutMs,
    maxResponseBytes: WEBHOOK_MAX_RESPONSE_BYTES,
  });
  // RFC 8461 section 3.3 does not fix a timeout; a policy is a few lines, 15 s is generous.
  const mtaStsFetcher = new HttpsMtaStsFetcher(addressResolver, {
    allowLoopback: config.outbound.allowLoopbackMx,
    timeoutMs: 15_000,
    port: options.mtaStsPort,
    extraCa,
  });
  // The card checkout's return page is the base URL, known once the HTTP listener is bound.
  const urls = { base: config.baseUrl ?? '' };
  const payments = paymentAdapters(config, () => urls.base);
  const services = createServices({
    store,
    clock,
    logger,
    handoff,
    resolver: options.resolver ?? dns,
    addressResolver,
    dns,
    webhookSender,
    mtaStsFetcher,
    parseMail,
    authenticateMail,
    indexWriter,
    runtime,
    argon2: argon2Loader(options.argon2),
    cardProcessor: payments.cardProcessor,
    polygon: payments.polygon,
    probe: tcpGreetingProbe,
    certificates: certificateFiles(certificatePaths(config)),
    acme: acmeStatusFile(config),
    config: {
      ...servicesConfigOf(config),
      secretKey: loadSecretKey(secretsDirOf(config)),
      owners: { ...config.owners, sessionKey: loadSessionKey(secretsDirOf(config)) },
    },
  });
  return { clock, logger, store, services, handoff, indexWriter, dns, urls, payments };
};

export type Core = ReturnType<typeof openCore>;

/**
 * The binding given (the executable's), else the package, imported on first use: a process
 * that never checks a password never loads the addon.
 */
const argon2Loader = (given: Argon2Binding | undefined): Argon2Loader => {
  let loaded: Promise<Argon2Binding> | null = given ? Promise.resolve(given) : null;
  return () => (loaded ??= import('@node-rs/argon2') as Promise<Argon2Binding>);
};
