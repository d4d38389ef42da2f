import type { Server } from 'node:http';
import type { SMTPServer } from 'smtp-server';
import type { Config } from '../config/types.js';
import type { Part } from '../runtime/lifecycle.js';
import { closeHttp, listen, listenerState, type ListenerState } from '../runtime/listeners.js';
import type { Adapters } from './adapters.js';

export interface BoundPorts {
  http: number;
  smtp: number;
  submission: number;
  /** Submission over implicit TLS; null without a certificate. */
  submissionTls: number | null;
  imap: number;
  /** IMAP over implicit TLS; null without a certificate. */
  imapTls: number | null;
  /** The ACME http-01 challenge's own listener (`tls.acme.httpPort`); null without one. */
  acmeHttp: number | null;
}

export const UNBOUND: BoundPorts = { http: 0, smtp: 0, submission: 0, submissionTls: null, imap: 0, imapTls: null, acmeHttp: null };

/** Binds every listener at start (reporting the ports it got) and closes them all at stop. */
export const listenersPart = (adapters: Adapters, config: Config, acmeListener: Server | null, bound: (ports: BoundPorts) => void): Part => ({
  name: 'listeners',
  async start() {
    const { http, smtp, submission, submissionTls, imap, imapTls } = adapters;
    bound({
      http: await listen(http.server, config.http.host, config.http.port),
      smtp: await listen(smtp.server, config.smtp.host, config.smtp.port),
      submission: await listen(submission.server, config.submission.host, config.submission.port),
      submissionTls: submissionTls ? await listen(submissionTls.server, config.submission.host, config.submission.tlsPort) : null,
      imap: await listen(imap.server, config.imap.host, config.imap.port),
      imapTls: imapTls ? await listen(imapTls.server, config.imap.host, config.imap.tlsPort) : null,
      acmeHttp: acmeListener ? await listen(acmeListener, config.http.host, config.tls.acme?.httpPort ?? 80) : null,
    });
  },
  async stop() {
    adapters.stopPresenting();
    const smtpServers = [adapters.smtp, adapters.submission, ...(adapters.submissionTls ? [adapters.submissionTls] : [])];
    await Promise.all([
      closeHttp(adapters.http.server),
      ...smtpServers.map(closeSmtp),
      adapters.imap.close(),
      adapters.imapTls?.close(),
      acmeListener && closeHttp(acmeListener),
    ]);
  },
});

/** Each listener's state, for the status page. */
export const listenerStates = (adapters: Adapters, ports: BoundPorts, acmeListener: Server | null): Record<string, ListenerState> => ({
  http: listenerState(adapters.http.server, ports.http),
  smtp: listenerState(adapters.smtp.server, ports.smtp),
  submission: listenerState(adapters.submission.server, ports.submission),
  imap: listenerState(adapters.imap.server, ports.imap),
  ...(adapters.submissionTls ? { submissionTls: listenerState(adapters.submissionTls.server, ports.submissionTls ?? 0) } : {}),
  ...(adapters.imapTls ? { imapTls: listenerState(adapters.imapTls.server, ports.imapTls ?? 0) } : {}),
  ...(acmeListener ? { acmeHttp: listenerState(acmeListener, ports.acmeHttp ?? 0) } : {}),
});

const closeSmtp = (server: SMTPServer): Promise<void> => new Promise((resolve) => server.close(() => resolve()));
