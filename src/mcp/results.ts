import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isAppError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';

/**
 * This adapter's error mapping (docs/design.md rule 5; docs/agents/mcp.md):
 * a failed tool call is still HTTP 200 with a JSON-RPC result; `isError: true` marks it and
 * the text is the REST failure body `{error, code}`. So every AppError code maps the same way,
 * and the client tells 401 from 402 from 429 by `code`, as a REST client does.
 * Unknown tools and methods are JSON-RPC errors instead (the SDK raises those).
 */
export const toolSuccess = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
});

const failureBody = (error: string, code: string): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify({ error, code }) }],
  isError: true,
});

/** Anything that is not an AppError is an internal failure: generic text, cause only logged. */
export const toolFailure = (error: unknown, tool: string, logger: Logger): CallToolResult => {
  if (isAppError(error)) return failureBody(error.message, error.code);
  logger.error('unhandled error in MCP tool', { tool, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  return failureBody('internal error', 'internal');
};
