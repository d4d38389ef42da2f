import type { SMTPServerOptions } from 'smtp-server';
import type { MessageIntake } from '../core/message-intake.js';

/** What the MX and the submission listener share. */
export interface ListenerOptions {
  hostname: string;
  maxMessageBytes: number;
  /** Where DATA goes as it arrives: memory under the budget shared with IMAP, or the spool. */
  intake: MessageIntake;
  /** Concurrent connections; smtp-server answers 421 and closes past it. */
  maxClients: number;
  /** Pause before the 220 greeting; a command sent during it gets 421 (an early talker). */
  greetingDelayMs: number;
}

/**
 * `greetingDelay` comes from patches/smtp-server+3.21.6.patch (applied by `npm install`):
 * unpatched, smtp-server always pauses 100 ms. Typed here, not in the patch, so the code
 * type-checks against an unpatched copy too.
 */
type PatchedOptions = SMTPServerOptions & { greetingDelay?: number };

export const listenerOptions = (options: Omit<ListenerOptions, 'intake'>): PatchedOptions => ({
  name: options.hostname,
  size: options.maxMessageBytes,
  maxClients: options.maxClients,
  greetingDelay: options.greetingDelayMs,
  // smtp-server's own onConnect calls back on the next turn of the event loop, where a client
  // that sends EHLO without waiting is already "too early" even with no pause; nothing is
  // checked at connect time, so the greeting goes out in the same turn as the accept.
  onConnect: (_session, callback) => callback(),
  disableReverseLookup: true,
  logger: false,
  closeTimeout: 5000,
});
