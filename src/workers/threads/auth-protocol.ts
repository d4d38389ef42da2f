import type { CheckedMessage, SmtpEnvelope } from '../../core/authentication.js';
import type { DnsSettings } from '../../net/dns-resolver.js';

/**
 * Messages between the main thread and the authentication thread. Like the parse thread's
 * (parse-protocol.ts), each side posts what one turn of its event loop produced as one array.
 */
export interface AuthThreadData {
  dns: DnsSettings;
  /** `smtp.hostname`: the authserv-id of our Authentication-Results fields. */
  hostname: string;
  timeoutMs: number;
}

export interface AuthRequest {
  id: number;
  /** An exact-size copy whose memory moves to the thread. */
  raw: Uint8Array;
  envelope: SmtpEnvelope;
  /** Unix milliseconds: the main thread's clock judges signature expiry. */
  now: number;
}

export type AuthResult = { id: number; checked: CheckedMessage } | { id: number; error: string };

export type AuthReply = { type: 'ready' } | { type: 'results'; results: AuthResult[] };
