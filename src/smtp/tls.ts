import type { SMTPServer, SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import type { ServerCertificates, TlsSessionInfo } from '../core/tls.js';

/**
 * smtp-server options that make a listener present our certificates: SNI picks a pair per
 * name, and the minimum version is ours (smtp-server's own default still allows TLS 1.0).
 * While there is no certificate yet (ACME's first), a session is not offered STARTTLS: its
 * own disabled commands replace the listener's `disabledCommands` (smtp-server reads them
 * at each command), so it is decided when the client connects.
 */
export const certificateOptions = (certificates: ServerCertificates, disabledCommands: string[]): Partial<SMTPServerOptions> => ({
  disabledCommands,
  SNICallback: (servername, callback) => certificates.sniCallback(servername, callback),
  minVersion: certificates.minVersion,
  // Called back in the same turn, as listenerOptions' own onConnect does (see there).
  onConnect: (session, callback) => {
    if (!certificates.available()) session.disabledCommands = [...disabledCommands, 'STARTTLS'];
    callback();
  },
});

/**
 * smtp-server keeps the context for clients without SNI in `secureContext` under '*' and reads
 * it at every handshake; it is set now and again after every reload. Returns the unsubscribe.
 */
export const presentCertificates = (server: SMTPServer, certificates: ServerCertificates): (() => void) => {
  server.secureContext.set('*', certificates.defaultContext());
  return certificates.reloaded.subscribe(() => server.secureContext.set('*', certificates.defaultContext()));
};

/** What the session negotiated (node:tls getCipher), or null for a session in the clear. */
export const tlsOf = (session: SMTPServerSession): TlsSessionInfo | null => {
  if (!session.secure || !session.tlsOptions) return null;
  const { version, name, standardName } = session.tlsOptions;
  return { version, cipher: standardName ?? name };
};
