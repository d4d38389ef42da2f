import type { CheckedMessage, SmtpEnvelope } from '../core/authentication.js';
import type { DnsSettings } from '../net/dns-resolver.js';
import type { WorkerReply } from './worker-slot.js';

/**
 * Messages between the main thread and the authentication worker. Like the parse worker's
 * (parse-protocol.ts), each side posts what one turn of its event loop produced as one array.
 */
export interface AuthWorkerData {
  dns: DnsSettings;
  /** `smtp.hostname`: the authserv-id of our Authentication-Results fields. */
  hostname: string;
  timeoutMs: number;
  /**
   * Two Int32 cells the thread writes and the main thread reads (auth-client.ts):
   * BEAT counts up while the thread's event loop turns, RUNNING names the check whose code
   * runs (or ran last). A thread stuck in one check stops beating, and RUNNING names it.
   */
  state: SharedArrayBuffer;
}

export const BEAT = 0;
export const RUNNING = 1;
/** RUNNING while the checks' code (mailauth) loads: nobody's check to blame. */
export const LOADING = -1;
/** How often the thread beats. */
export const BEAT_MS = 100;

export interface AuthRequest {
  id: number;
  /** An exact-size copy whose memory moves to the thread. */
  raw: Uint8Array;
  envelope: SmtpEnvelope;
  /** Unix milliseconds: the main thread's clock judges signature expiry. */
  now: number;
}

export type AuthResult = { id: number; checked: CheckedMessage } | { id: number; error: string };

export type AuthReply = WorkerReply<AuthResult>;
