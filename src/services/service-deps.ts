// The services' inputs: the settings src/app/core.ts derives from the config, and the adapters and
// threads it hands in. Apart from index.ts so the composition reads without them.
import type { AddressResolver } from '../core/address-resolver.js';
import type { AuthenticateMail } from '../core/authentication.js';
import type { AcmeStatusSource, CertificateSource } from '../core/certificates.js';
import type { NodeLease } from '../core/cluster.js';
import type { PortProbe } from '../core/doctor.js';
import type { DnsResolver } from '../core/dns.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Argon2Loader } from '../core/passwords.js';
import type { MtaStsFetcher } from '../core/mta-sts.js';
import type { Handoff, MxResolver } from '../core/outbound.js';
import type { ParseMail } from '../core/parsed-message.js';
import type { CardProcessor, PolygonPort } from '../core/payments.js';
import type { IndexWriter } from '../core/search-index.js';
import type { HeaderLimits } from '../mime/header-limits.js';
import type { WebhookLimits, WebhookSender } from '../core/webhooks.js';
import type { Store } from '../store/index.js';
import type { DomainsSettings } from './domains/index.js';
import type { JunkSettings } from '../core/junk.js';
import type { ListenerSpec } from './health/checks-listeners.js';
import type { RuntimeProbe } from './health/status.js';
import type { ThreadingConfig } from './mail/threads.js';
import type { OwnersConfig } from './owners/index.js';
import type { PaymentsConfig } from './payments/payments.js';
import type { OutboundConfig } from './sending/outbound.js';
import type { SendingLimitsConfig } from './sending/send-limits.js';
import type { SendingConfig } from './sending/sending.js';
import type { SuppressionLimits } from './sending/suppressions.js';

/** The settings services need; src/app/core.ts derives them from the validated config. */
export interface ServicesConfig {
  /** The junk filter (config `junk.*`). */
  junk: JunkSettings;
  mailDomain: string;
  smtpHostname: string;
  /** `smtp.postmaster`: the mailbox that receives postmaster@`mailDomain` (RFC 5321 section 4.5.1). */
  postmaster?: string;
  /** false: received mail is stored unjudged (`smtp.authenticationChecks`). */
  authenticationChecks: boolean;
  /** Inbound authentication lookups still running after this long are recorded as temperror. */
  authenticationTimeoutMs: number;
  /** `smtp.maxHeaderBytes` and `smtp.maxHeaderLines`: for mail received by the MX, submission and IMAP APPEND. */
  headerLimits: HeaderLimits;
  /** `smtp.queue`: when the MX answers 250 before delivering (InboundQueuePolicy). */
  smtpQueue: { inlineLimit: number; maxMessages: number };
  registrationsPerIpPerHour: number;
  readMaxBytes: number;
  /** IANA zone of day boundaries (daily limits, access-key daily budgets). */
  timeZone: string;
  /** This node's name and how long its claims last (config `cluster.*`). */
  cluster: NodeLease;
  /** The service's secret key (secretsDir): seals TOTP seeds and DKIM private keys. */
  secretKey: Buffer;
  keyRotationMutationsPer15Minutes: number;
  keyReplacementMinutes: number;
  factorAttemptsPer15Minutes: number;
  sending: Omit<SendingConfig, 'mailDomain' | 'hostname' | 'headerLimits'> & {
    limits: Omit<SendingLimitsConfig, 'timeZone'>;
  };
  outboundTracking: OutboundConfig;
  /** Usable access keys per account, and the list's length. */
  accessKeysPerAccount: number;
  suppressions: SuppressionLimits;
  webhooks: WebhookLimits;
  /** Remote delivery (config `outbound.*`). */
  outbound: {
    relay?: string;
    port: number;
    /** MX answers may point at loopback (local development and tests only). */
    allowLoopbackMx: boolean;
    retryMs: number;
    concurrency: number;
  };
  /** threads.*: whether threads are assigned, how long one stays joinable by subject alone (src/services/mail/threads.ts). */
  threads: ThreadingConfig;
  /** events.maxStreamsPerAccount: event streams open at once per account. */
  maxEventStreamsPerAccount: number;
  /** events.maxStreams: event streams open at once on the whole server. */
  maxEventStreams: number;
  /** webhooks.allowInsecure: http, any port and loopback targets (local development and tests only). */
  webhooksAllowInsecure: boolean;
  /** Folders one mailbox may hold (imap.maxFolders). */
  maxFolders: number;
  /** Human owners (config `owners.*`); sessionKey is the service's session.key (in secretsDir). */
  owners: OwnersConfig;
  /** Custom domains, their plan and whether payments are paused. */
  domains: DomainsSettings;
  /** funding.paused and the invoice timings (config `payments.*`). */
  payments: PaymentsConfig;
  /** `metrics.token`: the Bearer token /metrics asks for; unset, metrics are not served. */
  metricsToken?: string;
  /** Where each listener is configured to answer, for the deployment checks. */
  listeners: ListenerSpec[];
}

export interface ServiceDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  config: ServicesConfig;
  /** The SMTP client and DNS that remote delivery uses; adapters, so src/app/core.ts passes them in. */
  handoff: Handoff;
  resolver: MxResolver;
  /** DNS for webhook target checks; tests inject their own. */
  addressResolver: AddressResolver;
  /** The one resolver every other lookup goes through (`dns.servers`). */
  dns: DnsResolver;
  /** The outgoing HTTP adapter that performs webhook attempts, injected by src/app/core.ts. */
  webhookSender: WebhookSender;
  /** Fetches recipient domains' MTA-STS policies (RFC 8461); without it, none is looked for. */
  mtaStsFetcher?: MtaStsFetcher;
  /** Judges inbound SMTP mail; src/app/workers.ts gives an authentication worker's. Default: MessageAuthenticator on this thread. */
  authenticateMail?: AuthenticateMail;
  /**
   * Parses mail (inbound, submitted, and stored bodies built later); src/app/workers.ts passes its parse
   * threads' pool, which enforces the parse's time budget. Default: parseMessage on this
   * thread (admin commands and tools that never parse received mail).
   */
  parseMail?: ParseMail;
  /** Writes the full-text index (its own file); src/app/workers.ts picks a worker or the main thread. */
  indexWriter: IndexWriter;
  /** @node-rs/argon2, loaded on first use (src/app/core.ts; the executable passes its asset's). */
  argon2: Argon2Loader;
  /** Stripe Checkout, when `payments.card` is configured; card payments answer 503 without it. */
  cardProcessor?: CardProcessor;
  /** The Polygon RPC and invoice addresses, when `payments.polygon` is configured. */
  polygon?: PolygonPort;
  /** Listeners and threads, for the status page; admin commands have none. */
  runtime?: RuntimeProbe;
  /** The configured TLS certificate files, for the status page and the deployment checks. */
  certificates?: CertificateSource;
  /** What the ACME client reported, when certificates come by ACME. */
  acme?: AcmeStatusSource;
  /** Connects to listeners for the deployment checks. */
  probe: PortProbe;
}
