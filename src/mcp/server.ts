import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import packageJson from '../../package.json' with { type: 'json' };
import type { BodyLimits } from '../core/body-budget.js';
import type { Logger } from '../core/logger.js';
import type { Validator } from '../core/validate.js';
import type { McpServices } from './services.js';
import { toolFailure, toolSuccess } from './results.js';
import { TOOLS, toolNamed, type CallerContext } from './tools.js';

export interface McpDeps {
  services: McpServices;
  logger: Logger;
  trustProxy: boolean;
  body: BodyLimits;
  /** Request schemas with this app's limits: the tools' inputSchema and their validation. */
  validator: Validator;
  /** The public base URL (known once the listener is bound); its origin may call from a browser. */
  baseUrl: () => string;
}

export const SERVER_INFO = { name: 'agentpost', version: packageJson.version };

/** tools/list: raw JSON Schemas, which is why this uses the low-level Server (McpServer wants zod). */
const toolList = (validator: Validator) => TOOLS.map(({ name, description, schemaId }) => ({ name, description, inputSchema: validator.schema(schemaId) }));

/**
 * The SDK checks elicitation answers with it (this server asks for none); without one given it
 * builds an Ajv per Server, that is per request (bench:send's profile showed the cost).
 */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

/**
 * One server per HTTP request (the SDK's stateless pattern): it knows this request's
 * caller, and there is no session to share. initialize, ping and unknown methods are the SDK's.
 */
export const buildMcpServer = (deps: McpDeps, caller: CallerContext): Server => {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, jsonSchemaValidator: SCHEMA_VALIDATOR });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList(deps.validator) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const tool = toolNamed(name);
    // An unknown tool is a protocol error, not a tool failure (MCP 2025-11-25, tools: error handling).
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name}`);
    try {
      return toolSuccess(await tool.call(deps.services, deps.validator, args, caller, extra.signal));
    } catch (error) {
      return toolFailure(error, name, deps.logger);
    }
  });
  return server;
};
