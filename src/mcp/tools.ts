import { bearerToken } from '../core/bearer.js';
import type { Principal } from '../core/types.js';
import type { Validator } from '../core/validate.js';
import type { RegisterInput } from '../services/accounts/accounts.js';
import type { Services } from '../services/index.js';
import type { ListQuery } from '../services/mail/mailbox.js';
import type { SendRequest } from '../services/sending/send-input.js';
import { easeToolArguments } from './coerce.js';

/** What one HTTP request tells a tool about its caller. */
export interface CallerContext {
  /** The raw Authorization header; the key is never taken from arguments or the URL. */
  authorization: string | undefined;
  /** Counted by the registration limit (contract Limits: 5 per IP per hour). */
  clientIp: string;
}

/**
 * One MCP tool. Its inputSchema is the very schema that validates the REST request
 * (DESIGN.md rule 4), with the app's limits; `call` returns exactly what the REST endpoint answers.
 */
export interface McpTool {
  name: string;
  description: string;
  schemaId: string;
  call(services: Services, validator: Validator, args: Record<string, unknown> | undefined, caller: CallerContext): Promise<unknown>;
}

/** Numbers and numeric strings are eased where unambiguous (coerce.ts), then validated. */
const validArguments = <T>(validator: Validator, schemaId: string, args: Record<string, unknown> | undefined): T =>
  validator.validate<T>(schemaId, easeToolArguments(validator.schema(schemaId), args));

/** A tool that needs no key (only register_agent). */
const keyless = <T>(name: string, description: string, schemaId: string, run: (services: Services, input: T, clientIp: string) => unknown): McpTool => ({
  name, description, schemaId,
  call: async (services, validator, args, caller) => run(services, validArguments<T>(validator, schemaId, args), caller.clientIp),
});

/** A tool that needs the Bearer key; like REST, the key is checked before the arguments. */
const withKey = <T>(name: string, description: string, schemaId: string, run: (services: Services, input: T, principal: Principal) => unknown): McpTool => ({
  name, description, schemaId,
  call: async (services, validator, args, caller) => {
    const principal = services.auth.authenticate(bearerToken(caller.authorization));
    return run(services, validArguments<T>(validator, schemaId, args), principal);
  },
});

interface EmailQuery {
  id: string;
  folder: string;
  markAsRead?: boolean;
  uidValidity?: string;
}

/** Contract "MCP over HTTP": the tool names are case-sensitive. */
export const TOOLS: readonly McpTool[] = [
  keyless<RegisterInput>(
    'register_agent',
    'Create an account and its mailbox (POST /api/v1/agent/register). No key needed; 5 per client IP per hour. The apiKey in the result is shown only once: store it and send it as "Authorization: Bearer <apiKey>".',
    'register-request.json',
    (services, input, clientIp) => services.accounts.register(input, clientIp),
  ),
  withKey<ListQuery>(
    'check_inbox',
    'List a folder, newest first (GET /api/v1/agent/inbox). Needs the Bearer key.',
    'inbox-query.json',
    (services, query, principal) => services.mailbox.list(principal, query),
  ),
  withKey<EmailQuery>(
    'get_email',
    'Read one message by its id in a folder (GET /api/v1/agent/email/{id}). A full key marks it read unless markAsRead is false. Needs the Bearer key.',
    'email-query.json',
    (services, query, principal) => services.mailbox.read(principal, {
      uid: Number(query.id), folder: query.folder, markAsRead: query.markAsRead, uidValidity: query.uidValidity,
    }),
  ),
  withKey<Record<string, never>>(
    'check_balance',
    'Credits, address and account status (GET /api/v1/agent/balance). Needs the Bearer key.',
    'empty.json',
    (services, _input, principal) => services.balance.of(principal),
  ),
  withKey<SendRequest>(
    'send_email',
    'Send a message (POST /api/v1/agent/send): one credit per recipient. Put idempotencyKey (1 to 128 characters) in the arguments to make a retry safe: the same key with the same message answers the first result with replayed true and sends nothing; the same key with other content is refused (conflict). After a submission_failed result the outcome may be unknown: retry with the same key and the identical message. Needs the Bearer key.',
    'send-request.json',
    // Contract "MCP over HTTP": idempotencyKey travels in the arguments, with the REST semantics.
    (services, input, principal) => services.sending.send(principal, input, { idempotencyKey: input.idempotencyKey, via: 'mcp' }),
  ),
];

export const toolNamed = (name: string): McpTool | undefined => TOOLS.find((tool) => tool.name === name);
