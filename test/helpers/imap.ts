import { connect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { ImapFlow } from 'imapflow';
import type { Test } from 'tap';

/** An imapflow client (a real IMAP client) logged in to our server; logged out when the test ends. */
export const imapLogin = async (t: Test, port: number, user: string, pass: string): Promise<ImapFlow> => {
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, pass }, logger: false, disableAutoIdle: true });
  client.on('error', () => {});
  await client.connect();
  t.teardown(() => client.logout().catch(() => client.close()));
  return client;
};

/** A raw TCP conversation: send bytes, read until a line starting with a tag (or any pattern) arrives. */
export interface RawImap {
  socket: Socket;
  send(text: string | Buffer): void;
  /** Resolves with everything received since the last call, once `until` matches it. */
  read(until: RegExp): Promise<string>;
  closed(): Promise<void>;
  /** The client side of STARTTLS, after the server's tagged OK: the handshake on this socket. */
  startTls(options: ConnectionOptions): Promise<TLSSocket>;
}

export interface RawImapOptions {
  host?: string;
  /** Implicit TLS: the handshake before the greeting. */
  tls?: ConnectionOptions;
}

export const rawImap = async (t: Test, port: number, options: RawImapOptions = {}): Promise<RawImap> => {
  const host = options.host ?? '127.0.0.1';
  let socket: Socket = options.tls ? tlsConnect({ host, port, ...options.tls }) : connect(port, host);
  let buffer = '';
  let waiter: (() => void) | null = null;
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    waiter?.();
  };
  socket.on('data', onData);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {});
  t.teardown(() => socket.destroy());
  const startTls = (tls: ConnectionOptions) =>
    new Promise<TLSSocket>((resolve, reject) => {
      socket.off('data', onData);
      const secure = tlsConnect({ socket, ...tls });
      secure.once('error', reject);
      secure.once('secureConnect', () => {
        secure.off('error', reject);
        secure.on('error', () => {});
        secure.on('data', onData);
        socket = secure;
        resolve(secure);
      });
    });
  const read = (until: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${until}; got ${JSON.stringify(buffer)}`)), 10_000);
      const check = () => {
        if (!until.test(buffer)) return;
        clearTimeout(timer);
        const out = buffer;
        buffer = '';
        waiter = null;
        resolve(out);
      };
      waiter = check;
      check();
    });
  await read(/^\* OK .*\r\n/);
  return {
    get socket() {
      return socket;
    },
    send: (text) => socket.write(text),
    read,
    closed: () => closed,
    startTls,
  };
};
