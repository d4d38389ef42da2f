import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { clientAddress } from '../core/client-ip.js';
import { normaliseAccept } from './accept.js';
import { isAllowedOrigin } from './origin.js';
import { buildMcpServer, type McpDeps } from './server.js';

/** Contract "MCP over HTTP": the endpoint and its alias. */
export const MCP_PATHS: readonly string[] = ['/mcp', '/api/mcp'];

const jsonRpcError = (res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
};

const headerText = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(',') : value;

/**
 * POST only. The contract has no SSE, so GET (the standalone stream) and every other method
 * answer 405, as the MCP Streamable HTTP transport allows for a server that offers no stream.
 * Any Accept that admits JSON is served (accept.ts). The SDK transport does the rest: the
 * Content-Type check, JSON-RPC parsing, the MCP-Protocol-Version check (400 when
 * unsupported), 202 for notifications, JSON responses.
 * A browser Origin other than our own answers 403 first (origin.ts).
 */
export const createMcpEndpoint = (deps: McpDeps) => async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
  if (req.method !== 'POST') {
    jsonRpcError(res, 405, -32000, 'Method not allowed: the MCP endpoint takes POST only (no SSE stream).', { Allow: 'POST' });
    return;
  }
  if (!isAllowedOrigin(headerText(req.headers.origin), req.headers.host, deps.baseUrl())) {
    jsonRpcError(res, 403, -32000, 'Forbidden: this Origin may not call the MCP endpoint.');
    return;
  }
  if (!normaliseAccept(req)) {
    jsonRpcError(res, 406, -32000, 'Not Acceptable: this endpoint answers application/json only.');
    return;
  }
  const server = buildMcpServer(deps, {
    authorization: headerText(req.headers.authorization),
    clientIp: clientAddress(headerText(req.headers['x-forwarded-for']), req.socket.remoteAddress, deps.trustProxy),
  });
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: deps.maxBodyBytes,
  });
  transport.onerror = (error) => deps.logger.debug('MCP request refused', { reason: error.message });
  res.on('close', () => {
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res);
  } catch (error) {
    deps.logger.error('MCP request failed', { error: error instanceof Error ? error.stack ?? error.message : String(error) });
    if (!res.headersSent) jsonRpcError(res, 500, -32603, 'internal error');
    else res.end();
  }
};
