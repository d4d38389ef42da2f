import type { SMTPServerOptions } from 'smtp-server';

/**
 * smtp-server pauses 100 ms before every greeting to catch early talkers. The loopback servers
 * that play remote MTAs in tests (sink.ts, relay-sink.ts) greet at once: their pause is not
 * what any test checks (the client under test waits for the 220 either way), and with a new
 * connection per delivery it added up. `greetingDelay` comes from patches/smtp-server+3.21.6.patch
 * (see src/smtp/listener-options.ts), hence the cast: the package's types do not know it.
 */
export const greetAtOnce = (options: SMTPServerOptions): SMTPServerOptions => ({ ...options, greetingDelay: 0 }) as SMTPServerOptions;
