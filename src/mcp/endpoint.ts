import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { bearerToken } from '../core/bearer.js';
import { declaredLength, readBounded, type BoundedBody } from '../core/body-budget.js';
import { clientAddress } from '../core/client-ip.js';
import { isAppError } from '../core/errors.js';
import { normaliseAccept } from './accept.js';
import { isAllowedOrigin } from './origin.js';
import { buildMcpServer, type McpDeps } from './server.js';

const jsonRpcError = (res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
};

const headerText = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(',') : value);

/**
 * POST only. The service offers no SSE (docs/agents/mcp.md), so GET (the standalone stream) and
 * every other method answer 405, as the MCP Streamable HTTP transport allows for a server that
 * offers no stream. Any Accept that admits JSON is served (accept.ts). The SDK transport does the
 * rest: the Content-Type check, JSON-RPC parsing, the MCP-Protocol-Version check (400 when
 * unsupported), 202 for notifications, JSON responses. A browser Origin other than our own
 * answers 403 first (origin.ts).
 */
export const createMcpEndpoint =
  (deps: McpDeps) =>
  async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
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
    const body = await readBody(deps, req, res);
    if (!body) return;
    const server = buildMcpServer(deps, {
      authorization: headerText(req.headers.authorization),
      clientIp: clientAddress(headerText(req.headers['x-forwarded-for']), req.socket.remoteAddress, deps.trustProxy),
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    transport.onerror = (error) => deps.logger.debug('MCP request refused', { reason: error.message });
    res.on('close', () => {
      body.release();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body.parsed);
    } catch (error) {
      deps.logger.error('MCP request failed', { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'internal error');
      else res.end();
    }
  };

/**
 * Reads the JSON-RPC body before the SDK sees it, under the shared body budget: the large
 * limit only when the Authorization header holds a key that may send (send_email carries
 * attachments), the small one for everything else, unauthenticated requests included.
 * Answers 413, 503 or a JSON-RPC parse error itself and returns null in those cases.
 */
const readBody = async (deps: McpDeps, req: IncomingMessage, res: ServerResponse): Promise<(BoundedBody & { parsed: unknown }) | null> => {
  const limit = (await maySend(deps, headerText(req.headers.authorization))) ? deps.body.sendBytes : deps.body.smallBytes;
  let bounded: BoundedBody;
  try {
    bounded = await readBounded(req.iterator({ destroyOnReturn: false }), declaredLength(req.headers['content-length']), limit, deps.body.budget);
  } catch (error) {
    // Refused: the rest is read and dropped, so the answer reaches a client still sending.
    req.resume();
    if (isAppError(error) && error.code === 'too_large') jsonRpcError(res, 413, -32000, `Payload Too Large: ${error.message}`);
    else if (isAppError(error) && error.code === 'unavailable')
      jsonRpcError(res, 503, -32000, error.message, { 'Retry-After': String(error.details.retryAfterSeconds ?? 1) });
    else res.destroy();
    return null;
  }
  // Not JSON by its Content-Type: the SDK answers 415 without reading the body again.
  if (!/^application\/json\s*(;|$)/i.test(headerText(req.headers['content-type']) ?? '')) return { ...bounded, parsed: undefined };
  try {
    return { ...bounded, parsed: JSON.parse(bounded.body.toString('utf8')) as unknown };
  } catch {
    bounded.release();
    jsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
    return null;
  }
};

const maySend = async (deps: McpDeps, authorization: string | undefined): Promise<boolean> => {
  const secret = bearerToken(authorization);
  if (!secret) return false;
  try {
    return (await deps.services.auth.authenticate(secret)).permissions.includes('mail:send');
  } catch {
    return false;
  }
};
