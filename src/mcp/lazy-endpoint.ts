import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpDeps } from './server.js';

/** The endpoint and its alias (docs/agents/mcp.md). */
export const MCP_PATHS: readonly string[] = ['/mcp', '/api/mcp'];

/**
 * The MCP endpoint, loaded on its first request: the MCP SDK and its zod schemas are a
 * tenth of what the idle process holds (docs/contributing/benchmarks.md), and many
 * installations never use MCP. Nothing here imports the SDK until then (only types are imported above).
 */
export const lazyMcpEndpoint = (deps: McpDeps) => {
  let endpoint: Promise<(req: IncomingMessage, res: ServerResponse) => Promise<void>> | null = null;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    endpoint ??= import('./endpoint.js').then(({ createMcpEndpoint }) => createMcpEndpoint(deps));
    return (await endpoint)(req, res);
  };
};
