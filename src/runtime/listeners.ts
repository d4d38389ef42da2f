import type { Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Config } from '../config/types.js';

/** A bound listener: what `listen` answers and a status page reads. */
export interface ListenerState {
  listening: boolean;
  port: number;
}

/** Binds `server` and resolves with the port it got (port 0 picks one); rejects on EADDRINUSE and the like. */
export const listen = (server: NetServer, host: string, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });

/** Stops accepting and ends every connection, keep-alive ones included. */
export const closeHttp = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

export const listenerState = (server: NetServer, port: number): ListenerState => ({ listening: server.listening, port });

/** config.baseUrl, else the HTTP listener's own URL (admin commands print links with it). */
export const baseUrlOf = (config: Config, port = config.http.port): string =>
  config.baseUrl ?? `${config.http.tls ? 'https' : 'http'}://${hostForUrl(config.http.host)}:${port}`;

const hostForUrl = (host: string): string => (host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host);
