import type { ServicesConfig } from '../services/index.js';
import { acmeCertificateFiles, acmeInUse, tlsConfigured } from './acme.js';
import { servicesLimits } from './services-limits.js';
import { secretsDirOf } from './secrets.js';
import type { Config } from './types.js';

/** The settings the services take, in their units (milliseconds, listener specs); the keys on disk are read by src/app/core.ts. */
export const servicesConfigOf = (config: Config): Omit<ServicesConfig, 'secretKey' | 'owners'> => ({
  mailDomain: config.mailDomain,
  cluster: config.cluster,
  smtpHostname: config.smtp.hostname,
  ...(config.smtp.postmaster === undefined ? {} : { postmaster: config.smtp.postmaster }),
  authenticationChecks: config.smtp.authenticationChecks,
  authenticationTimeoutMs: config.smtp.authenticationTimeoutMs,
  headerLimits: { maxBytes: config.smtp.maxHeaderBytes, maxLines: config.smtp.maxHeaderLines },
  smtpQueue: config.smtp.queue,
  registrationsPerIpPerHour: config.limits.registrationsPerIpPerHour,
  readMaxBytes: config.limits.readMaxBytes,
  maxFolders: config.imap.maxFolders,
  timeZone: config.timeZone,
  keyRotationMutationsPer15Minutes: config.limits.keyRotationMutationsPer15Minutes,
  keyReplacementMinutes: config.limits.keyReplacementMinutes,
  factorAttemptsPer15Minutes: config.limits.factorAttemptsPer15Minutes,
  ...servicesLimits(config.limits),
  outbound: {
    relay: config.outbound.relay,
    port: config.outbound.port,
    allowLoopbackMx: config.outbound.allowLoopbackMx,
    retryMs: config.outbound.retryHours * 60 * 60 * 1000,
    concurrency: config.outbound.concurrency,
  },
  webhooksAllowInsecure: config.webhooks.allowInsecure,
  metricsToken: config.metrics.token,
  domains: { ...config.domains, plan: config.limits.personalPlan, fundingPaused: config.funding.paused },
  payments: {
    paused: config.funding.paused,
    invoiceMs: config.payments.invoiceMinutes * 60 * 1000,
    lateWatchMs: config.payments.polygon.lateWatchHours * 60 * 60 * 1000,
    idempotencyKeyMaxChars: config.limits.idempotencyKeyMaxChars,
    chain: { chainId: config.payments.polygon.chainId, confirmations: config.payments.polygon.confirmations },
  },
  threads: { enabled: config.threads.enabled, subjectWindowMs: config.threads.subjectWindowDays * 24 * 60 * 60 * 1000 },
  maxEventStreamsPerAccount: config.events.maxStreamsPerAccount,
  maxEventStreams: config.events.maxStreams,
  junk: { ...config.junk, serverModelTrainers: config.junk.serverModelTrainers.map((address) => address.toLowerCase()) },
  listeners: [
    { name: 'smtp', host: config.smtp.host, port: config.smtp.port, greeting: '220', tls: false },
    { name: 'submission', host: config.submission.host, port: config.submission.port, greeting: '220', tls: false },
    // The implicit-TLS ports (RFC 8314) greet inside the handshake: the probe makes one.
    ...(tlsConfigured(config) ? [{ name: 'submissionTls', host: config.submission.host, port: config.submission.tlsPort, greeting: '220', tls: true }] : []),
    { name: 'imap', host: config.imap.host, port: config.imap.port, greeting: '* OK', tls: false },
    ...(tlsConfigured(config) ? [{ name: 'imapTls', host: config.imap.host, port: config.imap.tlsPort, greeting: '* OK', tls: true }] : []),
    { name: 'http', host: config.http.host, port: config.http.port, greeting: null, tls: config.http.tls },
    // The CA must reach the http-01 challenge's listener (RFC 8555 section 8.3).
    ...(acmeChallengeListens(config) ? [{ name: 'acmeHttp', host: config.http.host, port: config.tls.acme?.httpPort ?? 80, greeting: null, tls: false }] : []),
  ],
});

/**
 * The certificate files the listeners serve (`tls.cert` or the one ACME keeps, then each SNI
 * pair's with its host), for the status page and doctor. ACME's is `optional`: absent until
 * the first one comes.
 */
export const certificatePaths = (config: Config): { path: string; host?: string; optional?: boolean }[] => {
  const main = config.tls.cert
    ? { path: config.tls.cert }
    : acmeInUse(config)
      ? { path: acmeCertificateFiles(secretsDirOf(config)).cert, optional: true }
      : null;
  if (!main) return [];
  return [main, ...Object.entries(config.tls.hosts ?? {}).map(([host, pair]) => ({ path: pair.cert, host: host.toLowerCase() }))];
};

/** The http-01 challenge gets a listener of its own unless `tls.acme.httpPort` is the HTTP listener's port. */
export const acmeChallengeListens = (config: Config): boolean => {
  const acme = acmeInUse(config);
  return acme !== null && acme.httpPort !== config.http.port;
};
