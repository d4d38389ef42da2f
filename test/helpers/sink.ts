import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { Test } from 'tap';
import { greetAtOnce } from './sink-options.js';

export interface SinkMessage {
  from: string;
  to: string[];
  raw: Buffer;
  /** The MAIL FROM parameters as smtp-server parsed them, e.g. {BODY: '8BITMIME', SMTPUTF8: true}. */
  mailFromArgs: Record<string, unknown>;
  /** It came over TLS (STARTTLS). */
  secure: boolean;
}

export interface SinkOptions {
  behavior?: (address: string) => SinkBehavior;
  /** Leave 8BITMIME out of the EHLO answer (a 7-bit-only server). */
  hide8BITMIME?: boolean;
  /** Leave SMTPUTF8 out of the EHLO answer. */
  hideSMTPUTF8?: boolean;
  /** A certificate and key: STARTTLS is offered. */
  tls?: { cert: string; key: string };
}

/**
 * What the remote MTA does with a recipient, chosen by its local part's prefix:
 * defer... 451 4.2.0 at RCPT, unknown... 550 5.1.1, policy... 554 5.7.1, drop... accepted at RCPT
 * and then the socket is destroyed after the message (the unknown outcome); hang... never answers
 * the message (a timeout after DATA); anything else 250.
 */
export type SinkBehavior = 'accept' | 'defer' | 'unknown' | 'policy' | 'drop' | 'hang';

export const behaviorOf = (address: string): SinkBehavior => {
  const local = address.toLowerCase();
  for (const behavior of ['defer', 'unknown', 'policy', 'drop', 'hang'] as const) if (local.startsWith(behavior)) return behavior;
  return 'accept';
};

export interface Sink {
  port: number;
  messages: SinkMessage[];
  /** TCP connections accepted so far (connection reuse shows here). */
  connections: number;
  /**
   * MAIL FROM and RCPT TO lines exactly as the client wrote them (smtp-server hands its
   * handlers the domain decoded to Unicode, so the wire form is only seen here).
   */
  commands: string[];
  /** Resolves when `count` messages have arrived. */
  waitFor(count: number): Promise<void>;
  /** With a certificate (the `tls` option): whether STARTTLS is offered from now on. */
  offerStartTls(on: boolean): void;
  close(): Promise<void>;
}

const readAll = async (stream: NodeJS.ReadableStream): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** A loopback smtp-server playing the remote MTA; `t` closes it when the test ends. */
export const startSink = async (t: Test | null, options: SinkOptions = {}): Promise<Sink> => {
  const behavior = options.behavior ?? behaviorOf;
  const sockets = new Map<number, Socket>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const sink: Sink = {
    port: 0,
    messages: [],
    connections: 0,
    commands: [],
    waitFor: (count) =>
      new Promise((resolve) => {
        if (sink.messages.length >= count) return resolve();
        waiters.push({ count, resolve });
      }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
    offerStartTls: (on) => {
      // smtp-server reads the list at each command; nodemailer's requireTLS sends STARTTLS even unadvertised.
      server.options.disabledCommands = on ? ['AUTH'] : ['STARTTLS', 'AUTH'];
    },
  };
  const server = new SMTPServer(
    greetAtOnce({
      authOptional: true,
      disabledCommands: options.tls ? ['AUTH'] : ['STARTTLS', 'AUTH'],
      ...(options.tls && { key: options.tls.key, cert: options.tls.cert }),
      disableReverseLookup: true,
      logger: false,
      hide8BITMIME: options.hide8BITMIME ?? false,
      hideSMTPUTF8: options.hideSMTPUTF8 ?? false,
      onRcptTo(address, _session, callback) {
        const kind = behavior(address.address);
        if (kind === 'defer') return callback(Object.assign(new Error('4.2.0 mailbox busy, try later'), { responseCode: 451 }));
        if (kind === 'unknown') return callback(Object.assign(new Error(`5.1.1 <${address.address}>: no such user`), { responseCode: 550 }));
        if (kind === 'policy') return callback(Object.assign(new Error('5.7.1 refused by policy'), { responseCode: 554 }));
        callback();
      },
      onData(stream, session, callback) {
        readAll(stream).then((raw) => {
          const to = session.envelope.rcptTo.map((rcpt) => rcpt.address);
          if (to.some((address) => behavior(address) === 'hang')) return;
          if (to.some((address) => behavior(address) === 'drop')) {
            sockets.get(session.remotePort)?.destroy();
            return;
          }
          const mailFrom = session.envelope.mailFrom;
          sink.messages.push({ from: mailFrom ? mailFrom.address : '', to, raw, mailFromArgs: { ...(mailFrom ? mailFrom.args : {}) }, secure: session.secure });
          for (const waiter of waiters.filter((w) => sink.messages.length >= w.count)) waiter.resolve();
          callback(null, `2.0.0 queued as ${sink.messages.length}`);
        }, callback);
      },
    }),
  );
  server.server.on('connection', (socket: Socket) => {
    sink.connections += 1;
    const port = socket.remotePort ?? 0;
    sockets.set(port, socket);
    socket.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\r\n')) if (/^(MAIL FROM|RCPT TO):/i.test(line)) sink.commands.push(line);
    });
    socket.on('close', () => sockets.delete(port));
  });
  // A client that dies mid-session (a killed node) resets its connection: a remote MTA shrugs that off.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  sink.port = (server.server.address() as AddressInfo).port;
  t?.teardown(() => sink.close());
  return sink;
};
