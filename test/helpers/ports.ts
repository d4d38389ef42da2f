import { connect, createServer } from 'node:net';

/**
 * A loopback port nothing listens on right now, for a server that must be told its port
 * before it starts (Dovecot, pebble) or a client that must find nothing there.
 */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

/**
 * Resolves once a server on the loopback port accepts a connection (`greets`: and says
 * something first, as an IMAP server does); throws at the deadline.
 */
export const accepting = async (port: number, deadline: number, greets = false): Promise<void> => {
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once(greets ? 'data' : 'connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing ${greets ? 'greets' : 'listens'} on 127.0.0.1:${port}`);
};
