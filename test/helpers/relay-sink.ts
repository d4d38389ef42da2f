import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { Test } from 'tap';
import { greetAtOnce } from './sink-options.js';

/**
 * A loopback relay that answers each message only after a delay, so that a process killed
 * during sending is often caught between DATA and the final reply. Per recipient it counts
 * the DATA commands it received and the messages it accepted (answered 250), across every
 * restart of the sending process.
 */
export interface RelaySink {
  port: number;
  /** DATA received for a transaction holding the recipient (the content may never have come). */
  dataBegun: Map<string, number>;
  /** Messages accepted with 250 for the recipient. */
  accepted: Map<string, number>;
  close(): Promise<void>;
}

const bump = (counts: Map<string, number>, key: string): void => {
  counts.set(key, (counts.get(key) ?? 0) + 1);
};

export const startRelaySink = async (t: Test, delay: () => number): Promise<RelaySink> => {
  const sink: RelaySink = { port: 0, dataBegun: new Map(), accepted: new Map(), close: () => new Promise((done) => server.close(() => done())) };
  const server = new SMTPServer(
    greetAtOnce({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      disableReverseLookup: true,
      logger: false,
      onData(stream, session, callback) {
        const recipients = session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase());
        for (const recipient of recipients) bump(sink.dataBegun, recipient);
        stream.on('data', () => {});
        // A client that dies mid-message destroys the stream: it never ends, nothing is accepted.
        stream.on('error', () => {});
        stream.on('end', () => {
          setTimeout(() => {
            for (const recipient of recipients) bump(sink.accepted, recipient);
            callback(null, '2.0.0 queued');
          }, delay());
        });
      },
    }),
  );
  server.on('error', () => {});
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  sink.port = (server.server.address() as AddressInfo).port;
  t.teardown(() => sink.close());
  return sink;
};
