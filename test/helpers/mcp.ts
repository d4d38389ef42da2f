import { request as httpRequest } from 'node:http';
import type { Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { validateInput } from '../../src/core/validate.js';

export interface McpClientOptions {
  key?: string;
  /** `/mcp` unless the alias is under test. */
  path?: string;
  headers?: Record<string, string>;
}

/** The official SDK client over Streamable HTTP against the running app; closed when the test ends. */
export const mcpClient = async (t: Test, baseUrl: string, options: McpClientOptions = {}): Promise<Client> => {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const client = new Client({ name: 'agentpost-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(options.path ?? '/mcp', baseUrl), { requestInit: { headers } }));
  t.teardown(() => client.close());
  return client;
};

export interface ToolOutcome {
  isError: boolean;
  /** The JSON in the one text block. */
  body: any;
}

/** A tool result must be exactly one text block holding JSON (contract "MCP over HTTP"). */
export const toolOutcome = (result: unknown): ToolOutcome => {
  const { content, isError } = result as { content: { type: string; text: string }[]; isError?: boolean };
  if (content.length !== 1 || content[0].type !== 'text') throw new Error(`expected one text block, got ${JSON.stringify(content)}`);
  return { isError: isError === true, body: JSON.parse(content[0].text) };
};

export const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> =>
  toolOutcome(await client.callTool({ name, arguments: args }));

/** A raw JSON-RPC POST, for what the SDK client would never send (bad headers, bare notifications). */
export const rawMcp = async (baseUrl: string, body: unknown, headers: Record<string, string> = {}, path = '/mcp') => {
  const response = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const parsed: any = text === '' ? undefined : JSON.parse(text);
  // Every MCP answer with a body is the JSON-RPC message openapi.json documents for /mcp.
  if (parsed !== undefined) validateInput('mcp-message.json', parsed);
  return { status: response.status, headers: response.headers, text, body: parsed };
};

/**
 * A JSON-RPC POST through node:http, which sends only the headers given: fetch always adds
 * Accept and may not set Host (DNS rebinding and Accept cases).
 */
export const nodeMcpPost = (baseUrl: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; text: string }> =>
  new Promise((resolve, reject) => {
    const request = httpRequest(new URL('/mcp', baseUrl), { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.once('error', reject);
    request.end(JSON.stringify(body));
  });
