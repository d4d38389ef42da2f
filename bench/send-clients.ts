import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { setMaxListeners } from 'node:events';
import nodemailer from 'nodemailer';

/**
 * The clients of bench:send: the same messages (same recipients, subject and text) through
 * agentpost's REST send, its MCP `send_email`, or SMTP to Postfix. Each virtual client sends
 * one message at a time, as an agent waiting for its answer does.
 */

export interface MessageShape {
  recipientsPerSend: number;
}

const TEXT = 'Hello from the agentpost send benchmark.\n'.repeat(20);

/** Send i's recipients: remote domains only, so every recipient goes through the delivery worker. */
const recipientsOf = (i: number, shape: MessageShape): string[] =>
  Array.from({ length: shape.recipientsPerSend }, (_, r) => `user${i}-${r}@domain${r}.bench.test`);

const messageOf = (i: number, shape: MessageShape) => ({ to: recipientsOf(i, shape), subject: `bench ${i}`, text: TEXT });

/** Sends message `i` from virtual client `client`; resolves once the server accepted it. */
export interface Sender {
  send(client: number, i: number): Promise<void>;
  close(): Promise<void>;
}

export const restSender = (baseUrl: string, apiKey: string, shape: MessageShape): Sender => ({
  async send(_client, i) {
    const response = await fetch(`${baseUrl}/api/v1/agent/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'agentpost-bench/1.0', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify(messageOf(i, shape)),
    });
    if (response.status !== 200) throw new Error(`REST send ${i}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  },
  close: async () => {},
});

/**
 * The SDK's transport hands one AbortSignal to every fetch of a session, and Node 20's fetch
 * leaves a listener on it per request until the response is collected: a lone client's 2,200
 * calls passed the 1,500 at which Node warns of a leak, once per call. Client side only.
 */
const fetchWithoutListenerWarnings = (url: string | URL, init?: RequestInit): Promise<Response> => {
  if (init?.signal) setMaxListeners(0, init.signal);
  return fetch(url, init);
};

/** One MCP session per virtual client, as each agent holds its own; connected before the clock starts. */
export const mcpSender = async (baseUrl: string, apiKey: string, clients: number, shape: MessageShape): Promise<Sender> => {
  const sessions = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new Client({ name: 'agentpost-bench', version: '1.0.0' });
      const headers = { authorization: `Bearer ${apiKey}`, 'user-agent': 'agentpost-bench/1.0' };
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers }, fetch: fetchWithoutListenerWarnings }));
      return client;
    }),
  );
  return {
    async send(client, i) {
      const result = await sessions[client].callTool({ name: 'send_email', arguments: messageOf(i, shape) });
      if (result.isError) throw new Error(`MCP send_email ${i}: ${JSON.stringify(result.content)}`);
    },
    close: async () => {
      await Promise.all(sessions.map((session) => session.close()));
    },
  };
};

/** nodemailer's pool, one SMTP connection per virtual client, kept open (as the REST clients keep theirs). */
export const smtpSender = (port: number, clients: number, shape: MessageShape): Sender => {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, pool: true, maxConnections: clients, maxMessages: Infinity, ignoreTLS: true });
  return {
    async send(_client, i) {
      await transport.sendMail({ from: 'bench@agents.localhost', ...messageOf(i, shape) });
    },
    close: async () => transport.close(),
  };
};

/**
 * Sends messages first .. first + count - 1 over `clients` virtual clients, each taking the
 * next message once its last was accepted. Returns the wall time and every send's latency.
 */
export const runLoad = async (sender: Sender, first: number, count: number, clients: number): Promise<{ seconds: number; latenciesMs: number[] }> => {
  let next = first;
  const end = first + count;
  const latenciesMs: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (next < end) {
        const i = next++;
        const at = performance.now();
        await sender.send(client, i);
        latenciesMs.push(performance.now() - at);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latenciesMs };
};
