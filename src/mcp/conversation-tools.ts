import type { ReplyRequest } from '../services/sending/reply.js';
import type { ThreadListQuery, ThreadQuery } from '../services/mail/threads.js';
import type { WaitQuery } from '../services/mail/wait.js';
import { withKey, type McpTool } from './tool-kit.js';

interface MarkJunkArguments {
  id: string;
  junk: boolean;
  folder: string;
  uidValidity?: string;
}

interface ReplyArguments extends ReplyRequest {
  id: string;
  folder: string;
  uidValidity?: string;
  all: boolean;
}

/** Tools for holding a conversation, and for judging junk: beside the five of docs/agents/mcp.md, which stay as they are. */
export const CONVERSATION_TOOLS: readonly McpTool[] = [
  withKey<ReplyArguments>(
    'reply_email',
    'Reply to a message by its id in a folder (POST /api/v1/agent/email/{id}/reply, or /reply-all with all true): to, cc, the "Re:" subject, In-Reply-To and References are filled from the original; nothing is quoted unless quote is true. Sent and charged like send_email (idempotencyKey in the arguments makes a retry safe). Needs the Bearer key.',
    'reply-email-tool.json',
    (services, { id, folder, uidValidity, all, ...reply }, principal) =>
      services.replies.reply(principal, { uid: Number(id), folder, uidValidity, all }, reply, { idempotencyKey: reply.idempotencyKey, via: 'mcp' }),
  ),
  withKey<ThreadListQuery>(
    'list_threads',
    'List conversations across folders, newest activity first (GET /api/v1/agent/threads); pass nextCursor as before for the next page. Needs the Bearer key.',
    'thread-list-query.json',
    (services, query, principal) => services.threads.list(principal, query),
  ),
  withKey<ThreadQuery>(
    'get_thread',
    'One conversation with its messages in every folder, oldest first, each with folder and id for get_email (GET /api/v1/agent/threads/{id}). Needs the Bearer key.',
    'thread-query.json',
    (services, query, principal) => services.threads.get(principal, query),
  ),
  withKey<WaitQuery>(
    'wait_for_email',
    'Wait until INBOX has a message newer than afterUid (absent: newer than the newest now), for up to timeoutSeconds (at most 60, default 30), then answer the new messages oldest first, or timedOut true. Pass lastUid as afterUid to the next call. Needs the Bearer key.',
    'wait-for-email-tool.json',
    (services, query, principal, signal) => services.mailWait.wait(principal, query, signal),
  ),
  withKey<MarkJunkArguments>(
    'mark_junk',
    "Judge a message junk (junk true: it moves to Junk) or not junk (junk false: out of Junk to INBOX), by its id in a folder (POST /api/v1/agent/email/{id}/junk); the mailbox's junk filter learns from it. The answer gives its new id and folder. Needs the Bearer key (a limited key: mail:read and mail:junk).",
    'mark-junk-tool.json',
    (services, { id, junk, folder, uidValidity }, principal) => services.junkMarking.mark(principal, { uid: Number(id), folder, uidValidity }, junk),
  ),
];
