// `npm run bench:mcp`: latency of one MCP tools/call (a fresh SDK server and transport per
// request, the stateless pattern) against the same REST call, sequential, on loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/core/logger.js';
import { createApp } from '../src/main.js';

const ROUNDS = Number(process.env.ROUNDS ?? 1000);
const dataDir = mkdtempSync(join(tmpdir(), 'agentpost-bench-mcp-'));
const config = loadConfig({ overrides: { dataDir, http: { port: 0 }, smtp: { port: 0 }, log: { level: 'silent' } } });
const app = createApp(config, { logger: createLogger('silent', () => {}) });
await app.start();

const measure = async (label: string, call: () => Promise<unknown>): Promise<void> => {
  for (let i = 0; i < 50; i += 1) await call(); // warm-up
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < ROUNDS; i += 1) {
    const at = performance.now();
    await call();
    times.push(performance.now() - at);
  }
  const total = performance.now() - started;
  times.sort((a, b) => a - b);
  const pick = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2);
  console.log(`${label.padEnd(28)} ${ROUNDS} calls  p50 ${pick(0.5)} ms  p95 ${pick(0.95)} ms  ${(ROUNDS / (total / 1000)).toFixed(0)} calls/s`);
};

try {
  const registered = await fetch(`${app.baseUrl}/api/v1/agent/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agentId: 'bench' }),
  }).then((response) => response.json() as Promise<{ apiKey: string }>);
  const authorization = `Bearer ${registered.apiKey}`;
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', app.baseUrl), { requestInit: { headers: { authorization } } }));

  await measure('REST GET balance', () => fetch(`${app.baseUrl}/api/v1/agent/balance`, { headers: { authorization } }).then((r) => r.json()));
  await measure('MCP tools/call check_balance', () => client.callTool({ name: 'check_balance', arguments: {} }));
  await measure('REST GET inbox (empty)', () => fetch(`${app.baseUrl}/api/v1/agent/inbox`, { headers: { authorization } }).then((r) => r.json()));
  await measure('MCP tools/call check_inbox', () => client.callTool({ name: 'check_inbox', arguments: {} }));
  await measure('MCP tools/list', () => client.listTools());
  const rawCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'check_balance', arguments: {} } });
  const rawHeaders = {
    authorization,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  };
  await measure('raw POST /mcp check_balance', () => fetch(`${app.baseUrl}/mcp`, { method: 'POST', headers: rawHeaders, body: rawCall }).then((r) => r.json()));
  await client.close();
} finally {
  await app.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
