import type { Readable, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import packageJson from '../../package.json' with { type: 'json' };

export interface BridgeOptions {
  /** The service's base URL (`http://host:8080`) or the endpoint itself (`.../mcp`, `.../api/mcp`). */
  url: string;
  /** Sent only as `Authorization: Bearer`; never printed, never put in the URL. */
  apiKey?: string;
  input?: Readable;
  output?: Writable;
}

/** `http://h:8080` and `http://h:8080/base/` become `.../mcp`; a URL already naming the endpoint stays. */
export const bridgeEndpoint = (url: string): URL => {
  const endpoint = new URL(url);
  if (!/\/mcp\/?$/.test(endpoint.pathname)) endpoint.pathname = endpoint.pathname.replace(/\/?$/, '/mcp');
  return endpoint;
};

/** McpError prefixes "MCP error <code>: " to the text; drop one so each hop does not add another. */
const forwardedError = (error: unknown): unknown => {
  if (!(error instanceof McpError)) return error;
  const message = error.message.replace(`MCP error ${error.code}: `, '');
  return Object.assign(new Error(message), { code: error.code, data: error.data });
};

/**
 * The upstream connection, opened on first use (a desktop client may start the bridge before
 * the service is up) and opened again after a failed attempt.
 */
const upstreamConnector = (endpoint: URL, apiKey: string | undefined) => {
  let connecting: Promise<Client> | null = null;
  const connect = async (): Promise<Client> => {
    const client = new Client({ name: 'agentpost-stdio-bridge', version: packageJson.version });
    const headers: Record<string, string> = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
    await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }));
    return client;
  };
  return {
    get: (): Promise<Client> => {
      connecting ??= connect().catch((error: unknown) => {
        connecting = null;
        throw error;
      });
      return connecting;
    },
    close: async (): Promise<void> => {
      const pending = connecting;
      connecting = null;
      if (pending)
        await pending.then(
          (client) => client.close(),
          () => undefined,
        );
    },
  };
};

/**
 * `agentpost mcp --url <base>`: a stdio MCP server for desktop clients that forwards tools/list
 * and tools/call to the HTTP endpoint, so they get the same five tools with the same results.
 * Resolves when the input ends (the desktop client closed the pipe).
 */
export const runStdioBridge = async (options: BridgeOptions): Promise<void> => {
  const input = options.input ?? process.stdin;
  const upstream = upstreamConnector(bridgeEndpoint(options.url), options.apiKey);
  const inFlight = new Set<Promise<unknown>>();
  const forward = <T>(work: (client: Client) => Promise<T>): Promise<T> => {
    const call = upstream
      .get()
      .then(work)
      .catch((error: unknown) => Promise.reject(forwardedError(error)));
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call)).catch(() => undefined);
    return call;
  };
  const server = new Server({ name: 'agentpost', version: packageJson.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => forward((client) => client.listTools(request.params)));
  server.setRequestHandler(CallToolRequestSchema, (request) => forward((client) => client.callTool(request.params)));
  const ended = new Promise<void>((resolve) => {
    input.once('end', resolve);
    input.once('close', resolve);
  });
  await server.connect(new StdioServerTransport(input, options.output ?? process.stdout));
  await ended;
  // A piped caller may close its end right after its last request: answer what was asked first.
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  await new Promise((resolve) => setImmediate(resolve));
  await server.close();
  await upstream.close();
};
