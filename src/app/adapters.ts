import { join } from 'node:path';
import type { SMTPServer } from 'smtp-server';
import { schemasWithLimits } from '../../schema/limits.js';
import type { Config } from '../config/types.js';
import { BodyBudget, type BodyLimits } from '../core/body-budget.js';
import type { Logger } from '../core/logger.js';
import { MessageIntake, SPOOL_ABOVE_BYTES } from '../core/message-intake.js';
import { createValidator } from '../core/validate.js';
import { createConsole } from '../console/index.js';
import type { AcmeChallenges } from '../core/tls.js';
import { answerAcmeChallenges } from '../http/acme-challenge.js';
import { createHttpApp } from '../http/app.js';
import { createHttpListener, type HttpListener } from '../http/listener.js';
import { createImapServer, type ImapServer } from '../imap/server.js';
import { lazyMcpEndpoint, MCP_PATHS } from '../mcp/lazy-endpoint.js';
import type { Services } from '../services/index.js';
import { createInboundServer } from '../smtp/inbound.js';
import { createSubmissionServer } from '../smtp/submission.js';
import { presentCertificates } from '../smtp/tls.js';
import { MessageSpool } from '../store/message-spool.js';
import type { CertificateStore } from '../tls/certificate-store.js';

/** Every protocol adapter, built and not yet listening. */
export interface Adapters {
  http: HttpListener;
  smtp: SMTPServer;
  submission: SMTPServer;
  /** Submission over implicit TLS; null without a certificate. */
  submissionTls: SMTPServer | null;
  imap: ImapServer;
  /** IMAP over implicit TLS; null without a certificate. */
  imapTls: ImapServer | null;
  /** Request body bytes held at once across HTTP and MCP requests (`http.maxBufferedBodyBytes`). */
  bodyBudget: BodyBudget;
  /** Received mail held in memory or spooled, across the MX, submission and IMAP (`smtp.maxBufferedMessageBytes`). */
  intake: MessageIntake;
  /** Stops presenting reloaded certificates (SMTP's contexts and the HTTPS listener's). */
  stopPresenting(): void;
}

export interface AdapterContext {
  services: Services;
  config: Config;
  logger: Logger;
  certificates: CertificateStore | null;
  /** Answered by /healthz: true once every listener is bound. */
  isReady: () => boolean;
  /** Known once the HTTP listener is bound. */
  baseUrl: () => string;
  /** ACME's http-01 challenges, when they share the HTTP listener (src/http/acme-challenge.ts). */
  acmeChallenges?: AcmeChallenges | null;
}

/**
 * REST, MCP and the console on one HTTP listener, the MX, submission (and its implicit-TLS
 * port) and IMAP (and its implicit-TLS port). MCP and the console are mounted here rather than
 * in an HTTP routes file, so no adapter imports another: the HTTP app only lends them paths
 * and Node's raw request and response.
 */
export const createAdapters = ({ services, config, logger, certificates, isReady, baseUrl, acmeChallenges }: AdapterContext): Adapters => {
  // One budget for the bytes of request bodies held at once, shared by REST and MCP.
  const body: BodyLimits = {
    sendBytes: config.http.maxBodyBytes,
    smallBytes: config.http.maxSmallBodyBytes,
    budget: new BodyBudget(config.http.maxBufferedBodyBytes),
  };
  // The request schemas with this config's limits: REST, the MCP tools and the OpenAPI document.
  const validator = createValidator(schemasWithLimits(config.limits));
  const trustProxy = config.http.trustProxy;
  const mcp = lazyMcpEndpoint({ services, logger, validator, trustProxy, body, baseUrl });
  const pages = createConsole({ services, logger, trustProxy, body, timeZone: config.timeZone, baseUrl });
  const httpApp = createHttpApp({
    services,
    logger,
    validator,
    trustProxy,
    body,
    isReady,
    baseUrl,
    events: { heartbeatMs: config.events.heartbeatSeconds * 1000 },
    observe: (method, route, status, seconds) => services.metrics.observeHttp(method, route, status, seconds),
    nodeMounts: [{ paths: MCP_PATHS, handle: mcp }],
    pages,
  });
  const handler = acmeChallenges ? answerAcmeChallenges(acmeChallenges, httpApp.callback()) : httpApp.callback();
  const http = createHttpListener(handler, config.http.tls ? certificates : null);
  // One budget for received mail held in memory, shared by the MX, submission and IMAP; the rest waits in the spool.
  const intake = new MessageIntake(new BodyBudget(config.smtp.maxBufferedMessageBytes), new MessageSpool(join(config.dataDir, 'spool')), {
    maxMessageBytes: Math.max(config.smtp.maxMessageBytes, config.imap.maxAppendBytes),
    spoolAboveBytes: SPOOL_ABOVE_BYTES,
    maxSpooledBytes: config.smtp.maxSpooledMessageBytes,
  });
  const smtp = createInboundServer(services, logger, { ...config.smtp, certificates, intake });
  const submissionOptions = {
    ...config.submission,
    hostname: config.smtp.hostname,
    maxMessageBytes: config.smtp.maxMessageBytes,
    certificates,
    maxRecipients: config.limits.recipientsPerMessage,
    intake,
  };
  const submission = createSubmissionServer(services, logger, submissionOptions);
  const submissionTls = certificates ? createSubmissionServer(services, logger, { ...submissionOptions, implicitTls: true }) : null;
  const smtpServers = [smtp, submission, ...(submissionTls ? [submissionTls] : [])];
  // smtp-server re-emits listener errors (EADDRINUSE) on itself; binding reports them, so this
  // only keeps an unhandled 'error' event from ending the process.
  for (const server of smtpServers)
    server.on('error', (error: Error) => logger.warn('smtp listener error', { port: server.server.address(), error: error.message }));
  const presenting = [...(certificates ? smtpServers.map((server) => presentCertificates(server, certificates)) : []), http.close];
  return {
    http,
    smtp,
    submission,
    submissionTls,
    imap: createImapServer(services, logger, { ...config.imap, certificates, intake }),
    imapTls: certificates ? createImapServer(services, logger, { ...config.imap, certificates, intake, implicitTls: true }) : null,
    bodyBudget: body.budget,
    intake,
    stopPresenting: () => {
      for (const stop of presenting) stop();
    },
  };
};
