import type { AuthenticateMail } from '../core/authentication.js';
import type { AcmeStatusSource, CertificateSource } from '../core/certificates.js';
import type { ServiceDeps, ServicesConfig } from './service-deps.js';
import { NodeClaims } from './cluster/claims.js';
import { AccessKeyPolicyService } from './keys/access-key-policy.js';
import { AccessKeyService } from './keys/access-keys.js';
import { AccountService } from './accounts/accounts.js';
import { AuthService } from './access/auth.js';
import { BalanceService } from './accounts/balance.js';
import { BounceService } from './delivery/bounces.js';
import { CalendarService } from './calendar/calendar.js';
import { DeliveryService } from './delivery/delivery.js';
import { DkimService } from './delivery/dkim.js';
import { createDomainServices, type DomainServices } from './domains/index.js';
import { EventStreamService } from './events/streams.js';
import { ImapSessionService } from './imap/session.js';
import { ImapMailService } from './imap/mail.js';
import { DoctorService } from './health/doctor.js';
import { MetricsService } from './health/metrics.js';
import { StatusService, type RuntimeProbe } from './health/status.js';
import { MessageAuthenticator, uncheckedMail } from './mail/authentication.js';
import { InboundService } from './mail/inbound.js';
import { MailboxDeliveryAgent } from './mail/delivery-agent.js';
import { KeyRotationService } from './keys/key-rotation.js';
import { MessageBodyService } from './mail/bodies.js';
import { PostmasterRoute } from './mail/postmaster.js';
import { MailboxService } from './mail/mailbox.js';
import { FolderService } from './mail/folders.js';
import { MessageOps } from './mail/message-ops.js';
import { MailOrganizer } from './mail/organizer.js';
import { ThreadService } from './mail/threads.js';
import { MailWaitService } from './mail/wait.js';
import { parseMessage } from '../mime/parse.js';
import type { ParseMail } from '../core/parsed-message.js';
import { MailboxWatchers } from './mail/watchers.js';
import { MailboxChangeScan } from './mail/foreign-changes.js';
import { NextHopResolver } from './delivery/next-hop.js';
import { MtaStsService } from './delivery/mta-sts.js';
import { OutboundService } from './sending/outbound.js';
import { InvoiceApplier } from './payments/apply.js';
import { CardPayments } from './payments/card.js';
import { PaymentService } from './payments/payments.js';
import { PolygonPayments } from './payments/polygon.js';
import { hostingLedger } from './payments/hosting-ledger.js';
import { RateLimiter } from './access/rate-limiter.js';
import { SearchIndexService } from './mail/search-index.js';
import { TwoFactorService } from './access/two-factor.js';
import { SendingReputation } from './delivery/reputation.js';
import { SendingLimits } from './sending/send-limits.js';
import { ReplyService } from './sending/reply.js';
import { SendingService } from './sending/sending.js';
import { SuppressionService } from './sending/suppressions.js';
import { WebhookDeliveryService } from './webhooks/deliveries.js';
import { WebhookDispatchService } from './webhooks/dispatch.js';
import { EventLog } from './webhooks/event-log.js';
import { WebhookService } from './webhooks/endpoints.js';
import { SessionTokens } from './access/session-tokens.js';
import { createOwnerServices, type OwnerServices } from './owners/index.js';
import { createJunkServices, type JunkServices } from './junk/index.js';

export type { ServiceDeps, ServicesConfig } from './service-deps.js';

export interface Services extends OwnerServices, DomainServices, JunkServices {
  accounts: AccountService;
  auth: AuthService;
  mailbox: MailboxService;
  inbound: InboundService;
  rateLimiter: RateLimiter;
  keyRotation: KeyRotationService;
  accessKeys: AccessKeyService;
  twoFactor: TwoFactorService;
  /** Limited keys' address lists and recipient budgets, checked by the send path (keys/access-key-policy.ts). */
  accessKeyPolicy: AccessKeyPolicyService;
  balance: BalanceService;
  sending: SendingService;
  /** Replies to stored messages, through the send path. */
  replies: ReplyService;
  outbound: OutboundService;
  delivery: DeliveryService;
  bounces: BounceService;
  suppressions: SuppressionService;
  dkim: DkimService;
  webhooks: WebhookService;
  webhookDeliveries: WebhookDeliveryService;
  webhookDispatch: WebhookDispatchService;
  imap: ImapSessionService;
  /** FETCH, STORE, COPY, MOVE, EXPUNGE, APPEND and SEARCH of an IMAP session. */
  imapMail: ImapMailService;
  /** Folders of a mailbox: create, delete, rename, subscribe, special-use (IMAP and REST). */
  folders: FolderService;
  /** Flags, copy, move and expunge of stored messages (IMAP and REST). */
  messageOps: MessageOps;
  /** REST's folder list with counts, move and delete. */
  organizer: MailOrganizer;
  /** Who is watching which mailbox (IMAP IDLE); fed by the store's after-commit hook. */
  mailboxWatchers: MailboxWatchers;
  /** Tells the mailbox watchers of changes other processes committed (src/app/foreign-commits.ts looks). */
  mailboxChangeScan: MailboxChangeScan;
  /** The full-text index's feed and backfill; its queue runs in src/app/queues.ts. */
  searchIndex: SearchIndexService;
  /** Stored bodies (what reads and IMAP FETCH answer from) and their backfill; its queue runs in src/app/queues.ts. */
  bodies: MessageBodyService;
  /** Invoices for credits and hosting, by card or Polygon; the calendar (src/app/calendar-jobs.ts) runs the Polygon watcher. */
  payments: PaymentService;
  /** Conversations: assigned at store time, listed and read over REST and MCP. */
  threads: ThreadService;
  /** Waits for new INBOX mail, woken by the mailbox watchers (MCP wait_for_email). */
  mailWait: MailWaitService;
  /** Server-Sent Event streams over the account's event log; woken by the after-commit hook. */
  eventStreams: EventStreamService;
  /** The status page: each part's health (GET /api/v1/status). */
  status: StatusService;
  /** Prometheus counters and gauges (GET /metrics), fed by the commit feed and the adapters. */
  metrics: MetricsService;
  /** The deployment checks (`agentpost doctor`, the console's Health page). */
  doctor: DoctorService;
  /** Calendar jobs' due rows (src/runtime/calendar.ts runs them). */
  calendar: CalendarService;
  /** This node's claims on queued work and their leases. */
  claims: NodeClaims;
  /** The event log and webhook events, written in the transaction of each change. */
  eventLog: EventLog;
}

export const createServices = ({
  store,
  clock,
  logger,
  config,
  handoff,
  resolver,
  addressResolver,
  dns,
  webhookSender,
  parseMail,
  indexWriter,
  argon2,
  cardProcessor,
  polygon,
  mtaStsFetcher,
  runtime = NO_RUNTIME,
  certificates = NO_CERTIFICATES,
  acme = NO_ACME,
  probe,
  authenticateMail,
}: ServiceDeps): Services => {
  const rateLimiter = new RateLimiter(store, clock);
  const parse: ParseMail = parseMail ?? ((raw, wants) => parseMessage(raw, wants));
  const searchIndex = new SearchIndexService(store, logger, indexWriter, parse, clock, config.cluster);
  const bodies = new MessageBodyService(store, logger, parse);
  const messageOps = new MessageOps(store, clock);
  const folders = new FolderService(store, clock, messageOps, config.maxFolders);
  const threads = new ThreadService(store, searchIndex, config.threads);
  const postmaster = new PostmasterRoute(store, config.mailDomain, config.postmaster);
  const mailbox = new MailboxService(store, clock, config.readMaxBytes, searchIndex, bodies, folders, messageOps, threads, postmaster);
  const accounts = new AccountService(store, clock, rateLimiter, mailbox, {
    mailDomain: config.mailDomain,
    registrationsPerIpPerHour: config.registrationsPerIpPerHour,
  });
  const twoFactor = new TwoFactorService(store, clock, rateLimiter, {
    secretKey: config.secretKey,
    issuer: 'agentpost',
    attemptsPer15Minutes: config.factorAttemptsPer15Minutes,
  });
  const keyRotation = new KeyRotationService(store, clock, rateLimiter, {
    mutationsPer15Minutes: config.keyRotationMutationsPer15Minutes,
    replacementMinutes: config.keyReplacementMinutes,
  });
  const accessKeyPolicy = new AccessKeyPolicyService(store, clock, config.timeZone);
  const limits = new SendingLimits(store, clock, rateLimiter, { ...config.sending.limits, timeZone: config.timeZone });
  const status = new StatusService(store, clock, runtime, certificates, () => searchIndex.backlog(), acme);
  const authenticator = new MessageAuthenticator(dns, config.smtpHostname, config.authenticationTimeoutMs);
  const { limits: sendingLimits, ...sendingConfig } = config.sending;
  const junk = createJunkServices({ store, logger, dns, parse, mailbox, folders, messageOps, config: config.junk, hostname: config.smtpHostname });
  // The one way into a mailbox: the MX, the inbound queue and local sends all go through it, judged by the junk filter.
  const deliveryAgent = new MailboxDeliveryAgent(mailbox, config.smtpHostname, junk.junkFilter ?? undefined);
  const sending = new SendingService(
    store,
    clock,
    mailbox,
    limits,
    accessKeyPolicy,
    parse,
    { ...sendingConfig, mailDomain: config.mailDomain, hostname: config.smtpHostname, headerLimits: config.headerLimits },
    authenticator,
    deliveryAgent,
  );
  const reputation = new SendingReputation(store);
  const bounces = new BounceService(store, clock, logger, reputation, config.mailDomain);
  const dkim = new DkimService(store, clock, config.secretKey);
  // MTA-STS TXT records come through the same resolver as the MX answers they qualify.
  const mtaSts = mtaStsFetcher ? new MtaStsService(store, resolver, mtaStsFetcher, clock, logger) : undefined;
  const nextHops = new NextHopResolver(
    resolver,
    { relay: config.outbound.relay, port: config.outbound.port, allowLoopback: config.outbound.allowLoopbackMx },
    mtaSts,
  );
  // This node's claims on queued work, each with a lease (docs/design.md, "Several processes on one store").
  const claims = new NodeClaims(store, clock, config.cluster);
  const delivery = new DeliveryService(
    store,
    clock,
    logger,
    nextHops,
    handoff,
    dkim,
    bounces,
    reputation,
    {
      retryMs: config.outbound.retryMs,
      concurrency: config.outbound.concurrency,
      claimLimit: config.outbound.concurrency * 50,
    },
    claims,
  );
  const webhookDispatch = new WebhookDispatchService(store, clock, webhookSender, logger, config.webhooks, claims);
  // Every transaction of the store from here on logs the changes it makes (the event streams' log, webhook events).
  const eventLog = new EventLog(store, clock);
  eventLog.attach();
  const sessionTokens = new SessionTokens(config.owners.sessionKey, clock);
  const auth = new AuthService(store, clock, sessionTokens);
  const mailboxWatchers = new MailboxWatchers();
  const domainServices = createDomainServices({
    store,
    clock,
    logger,
    dns,
    rateLimiter,
    accounts,
    twoFactor,
    messageOps,
    settings: config.domains,
    mailDomain: config.mailDomain,
    hostname: config.smtpHostname,
    relay: config.outbound.relay,
    secretKey: config.secretKey,
  });
  const hosting = hostingLedger(store, domainServices.hosting, domainServices.domainPlan);
  const applier = new InvoiceApplier(store, clock, logger, hosting);
  const payments = new PaymentService(
    store,
    clock,
    config.payments,
    {
      card: cardProcessor ? new CardPayments(store, clock, logger, cardProcessor, applier) : null,
      polygon: polygon ? new PolygonPayments(store, clock, logger, polygon, applier) : null,
    },
    hosting,
  );
  const queuePolicy = { inlineLimit: config.smtpQueue.inlineLimit, maxQueued: config.smtpQueue.maxMessages };
  const checks = inboundChecks(config, authenticator, authenticateMail);
  const core = {
    ...junk,
    accounts,
    auth,
    mailbox,
    inbound: new InboundService(
      store,
      clock,
      deliveryAgent,
      config.smtpHostname,
      checks,
      parse,
      bounces,
      { ...queuePolicy, headerLimits: config.headerLimits },
      claims,
      junk.junkFilter ?? undefined,
    ),
    rateLimiter,
    keyRotation,
    accessKeys: new AccessKeyService(store, clock, twoFactor, accessKeyPolicy, config.accessKeysPerAccount),
    twoFactor,
    accessKeyPolicy,
    balance: new BalanceService(accounts, accessKeyPolicy),
    sending,
    replies: new ReplyService(mailbox, bodies, sending),
    outbound: new OutboundService(store, clock, config.outboundTracking),
    delivery,
    bounces,
    suppressions: new SuppressionService(store, clock, rateLimiter, reputation, config.suppressions),
    dkim,
    webhooks: new WebhookService(store, clock, addressResolver, webhookSender, { allowInsecure: config.webhooksAllowInsecure }),
    webhookDeliveries: new WebhookDeliveryService(store, clock, webhookDispatch, config.webhooks),
    webhookDispatch,
    imap: new ImapSessionService(store, auth, mailbox, folders, mailboxWatchers),
    imapMail: new ImapMailService(store, mailbox, messageOps, bodies, parse, config.headerLimits),
    folders,
    messageOps,
    organizer: new MailOrganizer(store, mailbox, folders, messageOps),
    mailboxWatchers,
    mailboxChangeScan: new MailboxChangeScan(store, mailboxWatchers),
    searchIndex,
    bodies,
    payments,
    threads,
    mailWait: new MailWaitService(store, mailbox, mailboxWatchers),
    eventStreams: new EventStreamService(store, clock, auth, {
      maxStreamsPerAccount: config.maxEventStreamsPerAccount,
      maxStreams: config.maxEventStreams,
      historyMs: config.webhooks.historyMs,
    }),
    status,
    calendar: new CalendarService(store, clock, config.cluster.nodeId),
    claims,
    eventLog,
    metrics: new MetricsService(status, config.metricsToken),
    doctor: new DoctorService(
      dns,
      dkim,
      clock,
      probe,
      { files: certificates, acme },
      {
        mailDomain: config.mailDomain,
        hostname: config.smtpHostname,
        relay: config.outbound.relay,
        listeners: config.listeners,
      },
      runtime,
      () => domainServices.domains.verifiedNames(),
      async (address) => (await mailbox.mailboxForRecipient(address))?.address ?? null,
    ),
  };
  return {
    ...core,
    ...domainServices,
    ...createOwnerServices({
      ...core,
      store,
      clock,
      timeZone: config.timeZone,
      argon2,
      sessionTokens,
      config: config.owners,
      draftsConfig: {
        mailDomain: config.mailDomain,
        textMaxBytes: config.sending.textMaxBytes,
        attachmentsMaxBytes: config.sending.attachmentsMaxBytes,
        recipientsPerMessage: config.sending.recipientsPerMessage,
        recipientsPerAddressList: config.sending.recipientsPerAddressList,
      },
    }),
  };
};

const NO_RUNTIME: RuntimeProbe = { listeners: () => ({}), searchMode: () => 'main' };
const NO_CERTIFICATES: CertificateSource = async () => [];
const NO_ACME: AcmeStatusSource = async () => null;

/** How received mail is judged: on the authentication worker (src/app/workers.ts) when there is one, else on this thread; not at all when the operator turned the checks off. */
const inboundChecks = (config: ServicesConfig, authenticator: MessageAuthenticator, onThread: AuthenticateMail | undefined): AuthenticateMail =>
  !config.authenticationChecks ? uncheckedMail(config.smtpHostname) : (onThread ?? authenticator.check);
