import { request } from 'node:http';

/**
 * Opens `count` event streams (GET /api/v1/agent/events) spread over `accounts` and holds them
 * idle, reading nothing but the heartbeats; `close` ends them all. Bare node:http, so the
 * client holds little per stream.
 */
export const holdIdleStreams = async (baseUrl: string, count: number, accounts: { apiKey: string }[]): Promise<{ close(): void }> => {
  const url = new URL('/api/v1/agent/events', baseUrl);
  const open = (apiKey: string) =>
    new Promise<() => void>((resolve, reject) => {
      const req = request(url, { agent: false, headers: { authorization: `Bearer ${apiKey}`, 'user-agent': 'agentpost-bench/1.0' } }, (response) => {
        if (response.statusCode !== 200) return reject(new Error(`event stream: ${response.statusCode}`));
        response.resume();
        resolve(() => req.destroy());
      });
      req.on('error', reject);
      req.end();
    });
  const closers: (() => void)[] = [];
  // A few at a time: a thousand connects at once would only measure the listen backlog.
  for (let i = 0; i < count; i += 50) {
    closers.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => open(accounts[(i + j) % accounts.length].apiKey)))));
  }
  return { close: () => closers.forEach((close) => close()) };
};
