import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** The remote MTA: accepts everything, counts recipients, keeps nothing. */
export const startRelaySink = async () => {
  let received = 0;
  let waiter: { count: number; resolve: () => void } | null = null;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    disableReverseLookup: true,
    logger: false,
    maxClients: 1000,
    onData(stream, session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => {
        received += session.envelope.rcptTo.length;
        if (waiter && received >= waiter.count) waiter.resolve();
        callback(null, 'ok');
      });
    },
  });
  // A client gone mid-reply (a Postfix phase stopping its idle SMTP clients) is no failure of the
  // bench; without a listener smtp-server's 'error' event (EPIPE, ECONNRESET) ends the process.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    get received() {
      return received;
    },
    reset() {
      received = 0;
    },
    waitFor: (count: number) =>
      new Promise<void>((resolve) => {
        if (received >= count) return resolve();
        waiter = { count, resolve };
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

export type RelaySink = Awaited<ReturnType<typeof startRelaySink>>;
