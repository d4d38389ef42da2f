import { connect, type Socket } from 'node:net';
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
}

export const rawImap = async (t: Test, port: number): Promise<RawImap> => {
  const socket = connect(port, '127.0.0.1');
  let buffer = '';
  let waiter: (() => void) | null = null;
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    waiter?.();
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {});
  t.teardown(() => socket.destroy());
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
  return { socket, send: (text) => socket.write(text), read, closed: () => closed };
};
