import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { SMTPServer } from 'smtp-server';
import { schemasWithLimits } from '../schema/limits.js';
import type { Config } from './config/types.js';
import type { AddressResolver } from './core/address-resolver.js';
import { BodyBudget, type BodyLimits } from './core/body-budget.js';
import type { AuthenticateMail } from './core/authentication.js';
import type { DnsResolver } from './core/dns.js';
import { systemClock, type Clock } from './core/clock.js';
import { createLogger, type Logger } from './core/logger.js';
import type { MxResolver } from './core/outbound.js';
import type { ParseMail } from './core/parsed-message.js';
import { createValidator } from './core/validate.js';
import { createConsole } from './console/index.js';
import { createHttpApp } from './http/app.js';
import { createHttpListener } from './http/listener.js';
import { lazyMcpEndpoint, MCP_PATHS } from './mcp/lazy-endpoint.js';
import { createImapServer } from './imap/server.js';
import type { RuntimeProbe } from './services/health/status.js';
import { certificatePaths, servicesConfigOf } from './config/services-config.js';
import { createServices, type Services } from './services/index.js';
import { createInboundServer } from './smtp/inbound.js';
import { createSubmissionServer } from './smtp/submission.js';
import { SmtpHandoff } from './smtp/outbound.js';
import type { IndexWriter } from './core/search-index.js';
import { Store } from './store/index.js';
import { CertificateStore, type ReloadTrigger } from './tls/certificate-store.js';
import { presentCertificates } from './smtp/tls.js';
import { InlineIndexWriter, SearchIndexFileWriter } from './store/search-db.js';
import { loadSecretKey, loadSessionKey } from './store/secret-key.js';
import type { Argon2Binding, Argon2Loader } from './core/passwords.js';
import { DeliveryWorker } from './workers/jobs/delivery.js';
import { AuthThread, type AuthWorkerFactory } from './workers/threads/auth-thread-client.js';
import { IDLE_THREAD_MS as PARSE_IDLE_MS, ParsePool, type ParseWorkerFactory } from './workers/threads/parse-pool.js';
import { domainRecheckRunOnce } from './workers/jobs/domain-recheck.js';
import { Scheduler } from './workers/jobs/scheduler.js';
import { SearchIndexer } from './workers/jobs/search-indexer.js';
import { IDLE_THREAD_MS as SEARCH_IDLE_MS, SearchWriterThread, type SearchWorkerFactory } from './workers/threads/search-writer-thread.js';
import { reactAfterCommit } from './workers/after-commit.js';
import { InboundDrain } from './workers/jobs/inbound-drain.js';
import { BodyBackfill } from './workers/jobs/body-backfill.js';
import { fullGc, releaseWhenQuiet } from './workers/memory-release.js';
import { keyExpiryRunOnce } from './workers/jobs/key-expiry.js';
import { sweepRunOnce } from './workers/jobs/sweep.js';
import { createDnsResolver } from './workers/net/dns-resolver.js';
import { certificateFiles } from './workers/net/certificate-files.js';
import { tcpGreetingProbe } from './workers/net/port-probe.js';
import { WebhookDispatcher } from './workers/jobs/webhook-dispatcher.js';
import { HttpWebhookSender } from './workers/net/webhook-http.js';
import { paymentAdapters } from './workers/net/payment-adapters.js';
import { polygonWatcherRunOnce } from './workers/jobs/polygon-watcher.js';
import { HttpsMtaStsFetcher } from './workers/net/mta-sts-http.js';
import { readTrustAnchors } from './tls/trust-anchors.js';

/** Contract Events 2: the receiver answers "a small response"; more than this is not read. */
const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;

/** How long after the main thread's quiet-time collection the C heap is trimmed (see there). */
const TRIM_AFTER_MS = 3000;

export interface AppOptions {
  clock?: Clock;
  logger?: Logger;
  /** better-sqlite3's addon, when the single executable loaded it from its assets. */
  nativeBinding?: object;
  /**
   * Every DNS lookup; default: node:dns `Resolver` asking `dns.servers`. Tests point
   * `dns.servers` at a DNS server on loopback, or pass a fake here.
   */
  dns?: DnsResolver;
  /** DNS for direct MX delivery only, over `dns` (tests of delivery answer MX with a fake). */
  resolver?: MxResolver;
  /** False: no cron run and no kick after a send; the caller drives `workers.delivery` (tests). Default true. */
  autoDeliver?: boolean;
  /** False: no per-second webhook tick, so only the kick after a commit starts attempts (its tests). Default true. */
  webhookTick?: boolean;
  /** False: queued inbound mail waits for the caller to kick `workers.inbound` (tests of the queue). Default true. */
  inboundDrain?: boolean;
  /** DNS for webhook target checks only, over `dns` (DESIGN.md "How to test"). */
  addressResolver?: AddressResolver;
  /**
   * Starts one parse thread (src/workers/threads/parse-pool.ts). bin/main.ts and the test
   * helpers pass sourceParseWorker, the executable an eval'd asset; without one (only some
   * benches), mail is parsed on the main thread with no time budget.
   */
  parseWorker?: ParseWorkerFactory;
  /**
   * Starts the search thread, the full-text index's writer (src/workers/threads/search-writer-thread.ts).
   * Without one, the index is written on the main thread.
   */
  searchWorker?: SearchWorkerFactory;
  /**
   * Starts the authentication thread (src/workers/threads/auth-thread-client.ts); without one,
   * or with `dns` injected, inbound mail is judged on the main thread.
   */
  authWorker?: AuthWorkerFactory;
  /** In the single executable: the addon file behind `nativeBinding`, which the search thread loads too. */
  nativeBindingFile?: string;
  /** How often the `tls.*` files are looked at for a renewed certificate. Default 5 s; tests shorten it. */
  tlsPollMs?: number;
  /** @node-rs/argon2's exports, when the single executable loaded its addon from an asset. */
  argon2?: Argon2Binding;
  /**
   * Hands back the native memory a burst left resident (src/workers/native-memory.ts: the C
   * heap's free pages, the executable's own file pages), when the single executable has
   * native/heap-trim.c; called once quiet, after the full GC, and when an idle thread ends.
   */
  releaseNativeMemory?: () => void;
  /** Tests serve MTA-STS policies on a port of their own (RFC 8461 fixes 443). */
  mtaStsPort?: number;
  /** Messages between a folder's rank samples (src/store/rank-samples.ts); tests make it small so few messages reach many samples. */
  rankSampleSpacing?: number;
  /** How long stored mail waits for the search indexer (INDEX_DELAY_MS); tests that look at the queue before it runs lengthen it. */
  searchIndexDelayMs?: number;
}

export interface BoundPorts {
  http: number;
  smtp: number;
  submission: number;
  /** Submission over implicit TLS; null without a certificate. */
  submissionTls: number | null;
  imap: number;
  /** IMAP over implicit TLS; null without a certificate. */
  imapTls: number | null;
}

export interface App {
  readonly config: Config;
  readonly store: Store;
  readonly services: Services;
  readonly logger: Logger;
  readonly workers: { delivery: DeliveryWorker; webhooks: WebhookDispatcher; bodies: BodyBackfill; inbound: InboundDrain };
  /** Request body bytes held at once across HTTP and MCP requests (`http.maxBufferedBodyBytes`). */
  readonly bodyBudget: BodyBudget;
  /** The `tls.*` certificates; null when none is configured. */
  readonly certificates: CertificateStore | null;
  /** Known after start(). */
  ports: BoundPorts;
  baseUrl: string;
  start(): Promise<BoundPorts>;
  stop(): Promise<void>;
  /** SIGHUP: reads the certificate files again (certbot's deploy hook); a bad new pair is refused and logged. */
  reloadCertificates(trigger: ReloadTrigger): void;
}

export const databasePath = (config: Config): string => join(config.dataDir, 'agentpost.db');

/** The logger the caller gave, or one at the configured level on stderr. */
const loggerOf = (config: Config, options: AppOptions): Logger => options.logger ?? createLogger(config.log.level, (line) => process.stderr.write(line));

/** Opens the store and builds the services: what both `serve` and the admin commands need. */
/** What only `serve` has for the services: its threads and listeners. */
interface ServeParts {
  parseMail?: ParseMail;
  authenticateMail?: AuthenticateMail;
  runtime?: RuntimeProbe;
}

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
    config: { ...servicesConfigOf(config), secretKey: loadSecretKey(config.dataDir), owners: { ...config.owners, sessionKey: loadSessionKey(config.dataDir) } },
  });
  return { clock, logger, store, services, handoff, indexWriter, dns, urls, payments };
};

/** Wiring: config -> store -> services -> adapters (DESIGN.md). Nothing listens until start(). */
export const createApp = (config: Config, options: AppOptions = {}): App => {
  const logger = loggerOf(config, options);
  const certificates = CertificateStore.fromConfig(config, logger, options.clock ?? systemClock);
  // A parse thread ended for idleness leaves its arena's pages free: handed back at once.
  const parsePool = createParsePool(config, options.parseWorker, logger, () => options.releaseNativeMemory?.());
  // Read at each status request, when the listeners below exist.
  const runtime: RuntimeProbe = {
    listeners: () => ({
      http: listenerState(httpListener.server, app.ports.http),
      smtp: listenerState(smtpServer.server, app.ports.smtp),
      submission: listenerState(submissionServer.server, app.ports.submission),
      imap: listenerState(imapServer.server, app.ports.imap),
      ...(submissionTlsServer ? { submissionTls: listenerState(submissionTlsServer.server, app.ports.submissionTls ?? 0) } : {}),
      ...(imapTlsServer ? { imapTls: listenerState(imapTlsServer.server, app.ports.imapTls ?? 0) } : {}),
    }),
    searchMode: () => (indexWriter instanceof SearchWriterThread ? 'thread' : 'main'),
  };
  // Tests' fake resolvers cannot cross into a thread: with one injected, the checks stay here.
  // With the checks off (smtp.authenticationChecks) there is nothing for a thread to do.
  const authThread =
    options.dns || !options.authWorker || !config.smtp.authenticationChecks || !config.smtp.authenticationThread
      ? null
      : new AuthThread(
          options.authWorker,
          {
            dns: config.dns,
            hostname: config.smtp.hostname,
            timeoutMs: config.smtp.authenticationTimeoutMs,
          },
          logger,
        );
  const { clock, store, services, handoff, indexWriter, urls, payments } = openCore(
    config,
    { ...options, logger },
    { parseMail: parsePool?.parse, authenticateMail: authThread?.check, runtime },
  );
  const deliveryWorker = new DeliveryWorker(services.delivery, clock, logger);
  let ready = false;
  // The MCP adapter shares the HTTP listener. It is wired here rather than in an HTTP routes
  // file so neither adapter imports the other (DESIGN.md rules 2 and 3): the HTTP app only
  // lends the paths and Node's raw request/response to whatever main.ts mounts.
  // One budget for the bytes of request bodies held at once, shared by REST and MCP.
  const bodyLimits: BodyLimits = {
    sendBytes: config.http.maxBodyBytes,
    smallBytes: config.http.maxSmallBodyBytes,
    budget: new BodyBudget(config.http.maxBufferedBodyBytes),
  };
  // The request schemas with this config's limits: REST, the MCP tools and the OpenAPI document.
  const validator = createValidator(schemasWithLimits(config.limits));
  const mcpEndpoint = lazyMcpEndpoint({
    services,
    logger,
    validator,
    trustProxy: config.http.trustProxy,
    body: bodyLimits,
    baseUrl: () => app.baseUrl,
  });
  // The console is another adapter on the HTTP listener, handed over like MCP's endpoint.
  const consolePages = createConsole({
    services,
    logger,
    trustProxy: config.http.trustProxy,
    body: bodyLimits,
    timeZone: config.timeZone,
    baseUrl: () => app.baseUrl,
  });
  const httpApp = createHttpApp({
    services,
    logger,
    validator,
    trustProxy: config.http.trustProxy,
    body: bodyLimits,
    isReady: () => ready,
    baseUrl: () => app.baseUrl,
    events: { heartbeatMs: config.events.heartbeatSeconds * 1000 },
    observe: (method, route, status, seconds) => services.metrics.observeHttp(method, route, status, seconds),
    nodeMounts: [{ paths: MCP_PATHS, handle: mcpEndpoint }],
    pages: consolePages,
  });
  const httpListener = createHttpListener(httpApp.callback(), config.http.tls ? certificates : null);
  const smtpServer = createInboundServer(services, logger, { ...config.smtp, certificates });
  const submissionOptions = {
    ...config.submission,
    hostname: config.smtp.hostname,
    maxMessageBytes: config.smtp.maxMessageBytes,
    certificates,
    maxRecipients: config.limits.recipientsPerMessage,
  };
  const submissionServer = createSubmissionServer(services, logger, submissionOptions);
  const submissionTlsServer = certificates ? createSubmissionServer(services, logger, { ...submissionOptions, implicitTls: true }) : null;
  const smtpServers = [smtpServer, submissionServer, ...(submissionTlsServer ? [submissionTlsServer] : [])];
  const stopPresenting = [...(certificates ? smtpServers.map((server) => presentCertificates(server, certificates)) : []), httpListener.close];
  // smtp-server re-emits listener errors (EADDRINUSE) on itself; listen() below reports them,
  // so this only keeps an unhandled 'error' event from ending the process.
  for (const server of smtpServers)
    server.on('error', (error: Error) => logger.warn('smtp listener error', { port: server.server.address(), error: error.message }));
  const imapServer = createImapServer(services, logger, { ...config.imap, certificates });
  const imapTlsServer = certificates ? createImapServer(services, logger, { ...config.imap, certificates, implicitTls: true }) : null;
  const scheduler = new Scheduler(logger);
  const webhookDispatcher = new WebhookDispatcher(services.webhookDispatch, clock, logger, {
    concurrency: config.webhooks.concurrency,
    onAttempt: (ok) => services.metrics.webhookAttempt(ok),
  });
  const searchIndexer = new SearchIndexer(services.searchIndex, logger, options.searchIndexDelayMs);
  const bodyBackfill = new BodyBackfill(services.bodies, logger);
  const inboundDrain = new InboundDrain(services.inbound, logger);
  let stopReacting = (): void => {};
  // A burst of mail leaves garbage V8 keeps for minutes, and pages of the database read through
  // its memory maps; both handed back once quiet for 10 s.
  const gc = fullGc();
  const quiet = releaseWhenQuiet(10_000, () => {
    store.unmapPages();
    gc?.();
    // The parse and search threads collect on their own quiet checks, up to 2.75 s after
    // this one (the search thread's last work is the index a quarter second after the last
    // commit): the trim waits for their garbage too. One call trims every thread's arena.
    if (options.releaseNativeMemory) setTimeout(options.releaseNativeMemory, TRIM_AFTER_MS).unref();
  });
  let stopping: Promise<void> | null = null;

  const app: App = {
    config,
    store,
    services,
    logger,
    certificates,
    workers: { delivery: deliveryWorker, webhooks: webhookDispatcher, bodies: bodyBackfill, inbound: inboundDrain },
    bodyBudget: bodyLimits.budget,
    ports: { http: 0, smtp: 0, submission: 0, submissionTls: null, imap: 0, imapTls: null },
    baseUrl: config.baseUrl ?? '',
    async start() {
      // The threads load mailparser meanwhile; their failure is settled into a value so that it
      // is never an unhandled rejection while an earlier step throws, and is handled below.
      const parsersFailed = Promise.all([parsePool?.start(), authThread?.start()]).then(
        () => null,
        (error: unknown) => error,
      );
      await payments.load();
      // Mail stored before migration 7, or queued when the last process stopped, is indexed before anyone can search.
      await services.searchIndex.prepare();
      searchIndexer.kick(); // mail queued before the last stop
      // Mail stored before threads existed gets its thread before anyone can list threads (once, after the upgrade).
      const threaded = services.threads.backfillAll();
      if (threaded > 0) logger.info('threads assigned to earlier mail', { messages: threaded });
      bodyBackfill.kick(); // mail stored before stored bodies existed, or composed just before the last stop
      // Claims still held come from a process that stopped mid-handoff (see DeliveryService.recoverClaims);
      // settled before anything can claim again.
      services.delivery.recoverClaims();
      const autoDeliver = options.autoDeliver ?? true;
      const autoDrain = options.inboundDrain ?? true;
      // Every reaction to a commit, before the first commit can happen; the per-second webhook
      // tick and the delivery cron below are for retries.
      stopReacting = reactAfterCommit(store.feed, {
        indexSearch: () => searchIndexer.kick(),
        buildBodies: () => bodyBackfill.kick(),
        dispatchWebhooks: () => webhookDispatcher.kick(),
        drainInbound: autoDrain ? () => inboundDrain.queued() : undefined,
        deliver: autoDeliver ? () => deliveryWorker.kick() : undefined,
        watchers: services.mailboxWatchers,
        eventStreams: services.eventStreams,
        worked: quiet.touch,
        metrics: services.metrics,
      });
      app.ports = {
        http: await listen(httpListener.server, config.http.host, config.http.port),
        smtp: await listen(smtpServer.server, config.smtp.host, config.smtp.port),
        submission: await listen(submissionServer.server, config.submission.host, config.submission.port),
        submissionTls: submissionTlsServer ? await listen(submissionTlsServer.server, config.submission.host, config.submission.tlsPort) : null,
        imap: await listen(imapServer.server, config.imap.host, config.imap.port),
        imapTls: imapTlsServer ? await listen(imapTlsServer.server, config.imap.host, config.imap.tlsPort) : null,
      };
      app.baseUrl = baseUrlOf(config, app.ports.http);
      urls.base = app.baseUrl;
      // Starting up (loading modules, migrations, start-up jobs) leaves garbage too.
      quiet.touch();
      // Mail is accepted only with its parser up: an executable that cannot start one stops here.
      const parseFailure = await parsersFailed;
      if (parseFailure) {
        await app.stop();
        throw parseFailure;
      }
      scheduler.start([
        // Its deletes may read many pages of the database through its memory map: handed back once quiet.
        {
          name: 'sweep',
          schedule: '0 */10 * * * *',
          run: () => {
            quiet.touch();
            return sweepRunOnce(services);
          },
        },
        { name: 'key-expiry', schedule: '30 * * * * *', run: () => keyExpiryRunOnce(services) },
        // Queued inbound mail postponed after a failed delivery; new mail kicks the drain itself.
        ...(autoDrain ? [{ name: 'inbound-drain', schedule: '* * * * * *', run: () => inboundDrain.kick() }] : []),
        ...(options.webhookTick === false ? [] : [{ name: 'webhooks', schedule: '* * * * * *', run: () => webhookDispatcher.start(clock.now()) }]),
        { name: 'domain-recheck', schedule: config.domains.recheckSchedule, run: () => domainRecheckRunOnce(services, logger) },
      ]);
      if (config.payments.polygon.rpcUrl && config.payments.polygon.xpub) {
        scheduler.start([{ name: 'polygon-watcher', schedule: config.payments.polygon.watchSchedule, run: () => polygonWatcherRunOnce(services, logger) }]);
      }
      if (autoDeliver) {
        scheduler.start([{ name: 'delivery', schedule: '*/30 * * * * *', run: () => deliveryWorker.kick() }]);
        // Mail queued when the last process stopped (claims recovered above included) goes now, not at the next tick.
        deliveryWorker.kick();
      }
      // Mail queued when the last process stopped, before new mail queues behind it.
      if (autoDrain) inboundDrain.kick();
      certificates?.watch(options.tlsPollMs ?? 5000);
      ready = true;
      logger.info('agentpost listening', {
        ...app.ports,
        baseUrl: app.baseUrl,
        dataDir: config.dataDir,
        parseThreads: parsePool?.size ?? 0,
        authThread: authThread !== null,
        searchThread: indexWriter instanceof SearchWriterThread,
      });
      return app.ports;
    },
    stop() {
      stopping ??= (async () => {
        ready = false;
        certificates?.close();
        for (const unsubscribe of stopPresenting) unsubscribe();
        await scheduler.stop();
        await deliveryWorker.stop();
        await handoff.close();
        stopReacting();
        quiet.stop();
        await webhookDispatcher.stop();
        await searchIndexer.stop();
        await bodyBackfill.stop();
        await Promise.all([closeHttp(httpListener.server), ...smtpServers.map(closeSmtp), imapServer.close(), imapTlsServer?.close()]);
        // After the MX closed: a session still in DATA got its parse done or a 451, or was queued.
        await inboundDrain.stop();
        await parsePool?.close();
        await authThread?.close();
        await indexWriter.close();
        store.close();
      })();
      return stopping;
    },
    reloadCertificates: (trigger) => (certificates ? void certificates.reload(trigger) : logger.info('no certificate to reload: tls.cert is not set')),
  };
  return app;
};

/**
 * The binding given (the executable's), else the package, imported on first use: a process
 * that never checks a password never loads the addon.
 */
const argon2Loader = (given: Argon2Binding | undefined): Argon2Loader => {
  let loaded: Promise<Argon2Binding> | null = given ? Promise.resolve(given) : null;
  return () => (loaded ??= import('@node-rs/argon2') as Promise<Argon2Binding>);
};

/** The search thread when there is a way to start it; else the index's writer runs on the main thread. */
const createIndexWriter = (store: Store, options: AppOptions, logger: Logger): IndexWriter =>
  options.searchWorker
    ? new SearchWriterThread(store.searchFile, options.searchWorker, logger, {
        nativeBindingFile: options.nativeBindingFile,
        // An idle thread ends, and its arena's pages go back at once (see releaseNativeMemory).
        idleMs: SEARCH_IDLE_MS,
        onIdleExit: () => options.releaseNativeMemory?.(),
      })
    : new InlineIndexWriter(SearchIndexFileWriter.open(store.searchFile, { nativeBinding: options.nativeBinding }));

/** Null only when no way to start a thread was given (a bench that stores no received mail): then parses run inline. */
const createParsePool = (config: Config, factory: ParseWorkerFactory | undefined, logger: Logger, onIdleExit: () => void): ParsePool | null => {
  if (!factory) {
    logger.warn('mail is parsed on the main thread, with no time budget: no parse-thread factory was given');
    return null;
  }
  return new ParsePool(config.smtp.parseThreads, factory, logger, { timeoutMs: config.smtp.parseTimeoutMs, idleMs: PARSE_IDLE_MS, onIdleExit });
};

const listen = (server: Server | SMTPServer['server'], host: string, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });

const closeHttp = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

const listenerState = (server: Server | SMTPServer['server'], port: number) => ({ listening: server.listening, port });

const closeSmtp = (server: SMTPServer): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

/** config.baseUrl, else the HTTP listener's own URL (admin commands print links with it). */
export const baseUrlOf = (config: Config, port = config.http.port): string =>
  config.baseUrl ?? `${config.http.tls ? 'https' : 'http'}://${hostForUrl(config.http.host)}:${port}`;

const hostForUrl = (host: string): string => (host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host);
