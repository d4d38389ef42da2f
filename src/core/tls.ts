import type { SecureContext, SecureContextOptions, SecureVersion } from 'node:tls';
import type { Signal } from './signal.js';

/**
 * The server certificates every listener presents (SMTP, submission, IMAP, HTTPS). main.ts
 * builds them from `tls.*` and hands this interface to the adapters, so an adapter never
 * reads a file and a reload reaches every listener at once.
 */
export interface ServerCertificates {
  readonly minVersion: SecureVersion;
  /**
   * False while there is no default pair yet (ACME before its first certificate): listeners
   * then offer no STARTTLS, and a handshake fails rather than present anything else.
   */
  available(): boolean;
  /** The default pair's context: for clients that send no server name (SNI). Without a pair, one with no certificate. */
  defaultContext(): SecureContext;
  /** node:tls SNICallback: the pair configured for that name, else the default pair (RFC 6066 section 3). */
  sniCallback(servername: string, callback: (error: Error | null, context?: SecureContext) => void): void;
  /** The default pair's options, for a server that builds its context itself (node:https setSecureContext). */
  defaultOptions(): SecureContextOptions;
  /** Announced after a new set of pairs replaced the old one. */
  readonly reloaded: Signal<void>;
}

/** What a connection negotiated, as node:tls reports it: kept with mail that arrived over TLS. */
export interface TlsSessionInfo {
  /** e.g. TLSv1.3 */
  version: string;
  /** The IANA (standard) cipher suite name, e.g. TLS_AES_256_GCM_SHA384. */
  cipher: string;
}

/** The version names node:tls uses for the `tls.minVersion` setting's values. */
export const tlsVersionOf = (setting: '1.2' | '1.3'): SecureVersion => (setting === '1.3' ? 'TLSv1.3' : 'TLSv1.2');

/** The http-01 challenges (RFC 8555 section 8.3) of orders in progress: what to answer for a token. */
export interface AcmeChallenges {
  keyAuthorization(token: string): string | undefined;
}
