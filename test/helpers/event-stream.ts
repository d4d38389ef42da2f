import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { EventSource } from 'eventsource';
import type { Test } from 'tap';

export interface StreamedEvent {
  id: string;
  type: string;
  data: any;
}

export interface StreamClient {
  source: EventSource;
  events: StreamedEvent[];
  /** Errors the client saw (a dropped connection, before it reconnects). */
  errors: number;
  /** Resolves when `count` events have arrived in all. */
  waitForCount(count: number): Promise<StreamedEvent[]>;
  close(): void;
}

/**
 * An `eventsource` client (the WHATWG EventSource for Node) on GET /api/v1/agent/events with
 * the Bearer key: it reconnects by itself after a drop, sending Last-Event-ID.
 */
export const openStream = (t: Test, baseUrl: string, key: string, options: { query?: string } = {}): StreamClient => {
  const url = `${baseUrl}/api/v1/agent/events${options.query ? `?${options.query}` : ''}`;
  const waiters: { count: number; resolve: (events: StreamedEvent[]) => void }[] = [];
  const client: StreamClient = {
    source: new EventSource(url, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...init.headers, authorization: `Bearer ${key}`, 'user-agent': 'agentpost-tests/1.0' },
        }),
    }),
    events: [],
    errors: 0,
    waitForCount: (count) =>
      new Promise((resolve) => {
        if (client.events.length >= count) resolve(client.events.slice());
        else waiters.push({ count, resolve });
      }),
    close: () => client.source.close(),
  };
  const record = (type: string) => (message: MessageEvent) => {
    client.events.push({ id: message.lastEventId, type, data: JSON.parse(message.data) });
    for (const waiter of waiters.splice(0)) {
      if (client.events.length >= waiter.count) waiter.resolve(client.events.slice());
      else waiters.push(waiter);
    }
  };
  for (const type of ['message.received', 'message.delivery_updated']) client.source.addEventListener(type, record(type));
  client.source.addEventListener('error', () => {
    client.errors += 1;
  });
  t.teardown(() => client.close());
  return client;
};

/** Resolves once the client is connected (its open event). */
export const opened = (client: StreamClient): Promise<void> =>
  new Promise((resolve) => {
    if (client.source.readyState === client.source.OPEN) resolve();
    else client.source.addEventListener('open', () => resolve(), { once: true });
  });

export interface DroppingProxy {
  port: number;
  /** Ends every connection through it now, and refuses new ones until `resume`. */
  drop(): void;
  resume(): void;
}

/** A TCP proxy to the app that a test can cut: a real dropped connection for the client. */
export const droppingProxy = async (t: Test, targetPort: number): Promise<DroppingProxy> => {
  const sockets = new Set<Socket>();
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) return client.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    port: (server.address() as AddressInfo).port,
    drop: () => {
      refusing = true;
      for (const socket of sockets) socket.destroy();
    },
    resume: () => {
      refusing = false;
    },
  };
};
