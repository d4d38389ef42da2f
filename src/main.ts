import { calendarJobs } from './app/calendar-jobs.js';
import { createAdapters } from './app/adapters.js';
import { loggerOf, openCore } from './app/core.js';
import { listenersPart, listenerStates, UNBOUND, type BoundPorts } from './app/listening.js';
import type { AppOptions } from './app/options.js';
import { createQueues, type Queues } from './app/queues.js';
import { LeaseKeeper } from './runtime/lease-keeper.js';
import { reactAfterCommit } from './app/reactions.js';
import { wakeOnForeignCommits } from './app/foreign-commits.js';
import { createAuthWorker, createParsePool } from './app/workers.js';
import type { Config } from './config/types.js';
import type { BodyBudget } from './core/body-budget.js';
import type { MessageIntake } from './core/message-intake.js';
import { systemClock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import { Lifecycle } from './runtime/lifecycle.js';
import { baseUrlOf } from './runtime/listeners.js';
import { fullGc, releaseWhenQuiet } from './runtime/memory-release.js';
import type { RuntimeProbe } from './services/health/status.js';
import type { Services } from './services/index.js';
import type { Store } from './store/index.js';
import { CertificateStore, type ReloadTrigger } from './tls/certificate-store.js';
import { createAcme } from './tls/acme.js';
import type { AcmeRenewal } from './tls/acme-renewal.js';
import { createAcmeChallengeListener } from './http/acme-challenge.js';
import { acmeChallengeListens } from './config/services-config.js';
import { SearchWriter } from './workers/search-writer.js';

export { databasePath, openCore } from './app/core.js';
export type { BoundPorts } from './app/listening.js';
export type { AppOptions } from './app/options.js';
export { baseUrlOf } from './runtime/listeners.js';

/** How long after the main thread's quiet-time collection the C heap is trimmed (see there). */
const TRIM_AFTER_MS = 3000;
/** Quiet for this long after mail was stored or sent: the memory a burst used is handed back. */
const QUIET_MS = 10_000;

export interface App {
  readonly config: Config;
  readonly store: Store;
  readonly services: Services;
  readonly logger: Logger;
  /** The durable queues' runners; a test may drive one by hand (`driveManually`, then `runOnce`). */
  readonly queues: Queues;
  /** Request body bytes held at once across HTTP and MCP requests (`http.maxBufferedBodyBytes`). */
  readonly bodyBudget: BodyBudget;
  /** Received mail held in memory or spooled, across the MX, submission and IMAP (`smtp.maxBufferedMessageBytes`). */
  readonly messageIntake: MessageIntake;
  /** The `tls.*` certificates; null when none is configured. */
  readonly certificates: CertificateStore | null;
  /** Certificates by ACME (`tls.acme`); null without. */
  readonly acme: AcmeRenewal | null;
  /** Known after start(). */
  ports: BoundPorts;
  baseUrl: string;
  start(): Promise<BoundPorts>;
  stop(): Promise<void>;
  /** SIGHUP: reads the certificate files again (certbot's deploy hook); a bad new pair is refused and logged. */
  reloadCertificates(trigger: ReloadTrigger): void;
}

/**
 * Wiring: config -> store -> services -> adapters and queues, each a part of the lifecycle
 * (src/runtime/lifecycle.ts), which starts them in this order and stops them in reverse.
 * Nothing listens until start().
 */
export const createApp = (config: Config, options: AppOptions = {}): App => {
  const logger = loggerOf(config, options);
  const clock = options.clock ?? systemClock;
  const certificates = CertificateStore.fromConfig(config, logger, clock);
  // A parse worker ended for idleness leaves its arena's pages free: handed back at once.
  const parsePool = createParsePool(config, options.parseWorker, logger, () => options.releaseNativeMemory?.());
  const authWorker = createAuthWorker(config, options, logger);
  // Read at each status request, once the listeners exist.
  const runtime: RuntimeProbe = {
    listeners: () => listenerStates(adapters, app.ports, acmeListener),
    searchMode: () => (core.indexWriter instanceof SearchWriter ? 'thread' : 'main'),
  };
  const core = openCore(config, { ...options, logger }, { parseMail: parsePool?.parse, authenticateMail: authWorker?.check, runtime });
  const { store, services } = core;
  let ready = false;
  const acme = createAcme(config, certificates, { logger, clock, policyHosts: () => services.domains.policyHostsHere(), pollMs: options.acmePollMs });
  // The CA's http-01 requests: on a listener of their own, or on the HTTP listener's port (src/config/services-config.ts).
  const acmeListener = acme && acmeChallengeListens(config) ? createAcmeChallengeListener(acme.challenges) : null;
  const acmeChallenges = acme && !acmeListener ? acme.challenges : null;
  const adapters = createAdapters({ services, config, logger, certificates, isReady: () => ready, baseUrl: () => app.baseUrl, acmeChallenges });
  const { queues, inbound, calendar } = createQueues(services, clock, logger, { webhookConcurrency: config.webhooks.concurrency });
  const leaseKeeper = new LeaseKeeper(
    config.cluster.leaseMs,
    {
      renew: () => services.claims.renew(),
      look: () => {
        for (const queue of [queues.delivery, queues.webhooks, queues.inbound, queues.search]) queue.kick();
      },
    },
    logger,
  );
  // A burst of mail leaves garbage V8 keeps for minutes, and pages of the database read through
  // its memory maps; both handed back once quiet.
  const gc = fullGc();
  const quiet = releaseWhenQuiet(QUIET_MS, () => {
    store.unmapPages();
    adapters.intake.memory.forget();
    gc?.();
    // The parse and search workers collect on their own quiet checks, up to 2.75 s after this
    // one: the trim waits for their garbage too. One call trims every thread's arena.
    if (options.releaseNativeMemory) setTimeout(options.releaseNativeMemory, TRIM_AFTER_MS).unref();
  });
  // The threads load mailparser while the rest starts; a failure is settled into a value, so it
  // is never an unhandled rejection while an earlier part throws, and is thrown once listening.
  let workersStarted: Promise<unknown> = Promise.resolve(null);
  let stopReacting = (): void => {};
  let stopWakingOnForeignCommits = (): void => {};
  const lifecycle = new Lifecycle(logger).own({ name: 'store', stop: () => store.close() }, { name: 'search index', stop: () => core.indexWriter.close() });
  lifecycle.add(
    {
      name: 'workers',
      start: () => {
        workersStarted = Promise.all([parsePool?.start(), authWorker?.start()]).then(
          () => null,
          (error: unknown) => error,
        );
      },
      stop: async () => {
        await parsePool?.close();
        await authWorker?.close();
      },
    },
    { name: 'payments', start: () => core.payments.load() },
    // Changes an earlier version left for its webhooks to read after the commit are logged now.
    { name: 'legacy outbox', start: () => services.eventLog.drainLegacyOutbox() },
    // Mail stored before the index existed, or queued when the last process stopped, is indexed before anyone can search.
    { name: 'search backlog', start: () => services.searchIndex.prepare() },
    {
      // Mail stored before threads existed gets its thread before anyone can list threads (once, after the upgrade).
      name: 'thread backfill',
      start: async () => {
        const threaded = await services.threads.backfillAll();
        if (threaded > 0) logger.info('threads assigned to earlier mail', { messages: threaded });
      },
    },
    {
      // Claims this node's name still holds come from a process that stopped mid-work, and a claim
      // whose lease ran out from a node that died (DeliveryService.recoverClaims, NodeClaims):
      // settled before anything claims again. A live node's claims are left alone.
      name: 'claims',
      start: async () => {
        await services.claims.releaseOwnAtStart();
        await services.delivery.recoverClaims();
      },
    },
    { name: 'memory release', start: () => quiet.touch(), stop: () => quiet.stop() },
    {
      // Every reaction to a commit, before the first commit can happen.
      name: 'reactions',
      start: () => {
        stopReacting = reactAfterCommit(store.feed, queues, {
          noteInboundQueued: () => inbound.noteQueued(),
          watchers: services.mailboxWatchers,
          eventStreams: services.eventStreams,
          worked: quiet.touch,
          metrics: services.metrics,
        });
      },
      stop: () => stopReacting(),
    },
    {
      // Changes other processes on the same data folder commit wake what waits here too.
      name: 'foreign commits',
      start: () => {
        stopWakingOnForeignCommits = wakeOnForeignCommits(store, services, queues, logger);
      },
      stop: () => stopWakingOnForeignCommits(),
    },
    {
      // Each queue runs once at start (what the last process left), then on kicks and its due times.
      name: 'queues',
      start: async () => {
        await calendar.register(calendarJobs(services, config, logger, quiet.touch), clock.now());
        for (const queue of Object.values(queues)) queue.kick();
        leaseKeeper.start();
      },
      stop: async () => {
        leaseKeeper.stop();
        await Promise.all(Object.values(queues).map((queue) => queue.stop()));
        await core.handoff.close();
      },
    },
    listenersPart(adapters, config, acmeListener, (ports) => {
      app.ports = ports;
      app.baseUrl = baseUrlOf(config, ports.http);
      core.urls.base = app.baseUrl;
    }),
    {
      // Mail is accepted only with its parser up: an executable that cannot start one stops here.
      name: 'workers ready',
      start: async () => {
        const failure = await workersStarted;
        if (failure) throw failure;
      },
    },
    { name: 'certificates', start: () => certificates?.watch(options.tlsPollMs ?? 5000), stop: () => certificates?.close() },
    // After the listeners: the challenge's must answer, and the others take TLS once a certificate comes.
    { name: 'acme', start: () => acme?.renewal.start(), stop: () => acme?.renewal.stop() },
    {
      name: 'ready',
      start: () => {
        ready = true;
        const workers = {
          parseWorkers: parsePool?.size ?? 0,
          authenticationWorker: authWorker !== null,
          searchWorker: core.indexWriter instanceof SearchWriter,
        };
        logger.info('agentpost listening', { ...app.ports, baseUrl: app.baseUrl, dataDir: config.dataDir, node: config.cluster.nodeId, ...workers });
      },
      stop: () => {
        ready = false;
      },
    },
  );

  const app: App = {
    config,
    store,
    services,
    logger,
    certificates,
    acme: acme?.renewal ?? null,
    queues,
    bodyBudget: adapters.bodyBudget,
    messageIntake: adapters.intake,
    ports: UNBOUND,
    baseUrl: config.baseUrl ?? '',
    async start() {
      await lifecycle.start();
      return app.ports;
    },
    stop: () => lifecycle.stop(),
    reloadCertificates: (trigger) => (certificates ? void certificates.reload(trigger) : logger.info('no certificate to reload: tls.cert is not set')),
  };
  return app;
};
