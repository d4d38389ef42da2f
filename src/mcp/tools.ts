import type { RegisterInput } from '../services/accounts/accounts.js';
import type { ListQuery } from '../services/mail/mailbox.js';
import type { SendRequest } from '../services/sending/send-input.js';
import { CONVERSATION_TOOLS } from './conversation-tools.js';
import { keyless, withKey, type McpTool } from './tool-kit.js';

export type { CallerContext, McpTool } from './tool-kit.js';

interface EmailQuery {
  id: string;
  folder: string;
  markAsRead?: boolean;
  uidValidity?: string;
}

/** The tool names are case-sensitive (docs/agents/mcp.md). */
export const TOOLS: readonly McpTool[] = [
  keyless<RegisterInput>(
    'register_agent',
    'Create an account and its mailbox (POST /api/v1/agent/register). No key needed; 5 requests per client IP per hour, failed ones included. Do not retry automatically, not even after a timeout or an interrupted answer: each success is a new mailbox with its own key, and a lost answer cannot be fetched again. The apiKey in the result is shown only once: store it and send it as "Authorization: Bearer <apiKey>".',
    'register-request.json',
    (services, read, clientIp) => services.accounts.registerFrom(clientIp, read),
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
    (services, query, principal) =>
      services.mailbox.read(principal, {
        uid: Number(query.id),
        folder: query.folder,
        markAsRead: query.markAsRead,
        uidValidity: query.uidValidity,
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
    // idempotencyKey travels in the arguments, with the REST semantics (docs/agents/mcp.md).
    (services, input, principal) => services.sending.send(principal, input, { idempotencyKey: input.idempotencyKey, via: 'mcp' }),
  ),
  ...CONVERSATION_TOOLS,
];

export const toolNamed = (name: string): McpTool | undefined => TOOLS.find((tool) => tool.name === name);
