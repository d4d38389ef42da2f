/**
 * The JSON Schemas, one file per request or response. ajv validates REST bodies with
 * them, MCP tools use them as inputSchema, and openapi.json refers to them by file name.
 * Imported (not read from disk) so the single executable carries them.
 */
import account from './account.json' with { type: 'json' };
import address from './address.json' with { type: 'json' };
import attachment from './attachment.json' with { type: 'json' };
import authentication from './authentication.json' with { type: 'json' };
import balance from './balance.json' with { type: 'json' };
import emailQuery from './email-query.json' with { type: 'json' };
import empty from './empty.json' with { type: 'json' };
import error from './error.json' with { type: 'json' };
import health from './health.json' with { type: 'json' };
import inboxQuery from './inbox-query.json' with { type: 'json' };
import inbox from './inbox.json' with { type: 'json' };
import mcpMessage from './mcp-message.json' with { type: 'json' };
import messageFull from './message-full.json' with { type: 'json' };
import message from './message.json' with { type: 'json' };
import openapi from './openapi.json' with { type: 'json' };
import outboundDetail from './outbound-detail.json' with { type: 'json' };
import outboundList from './outbound-list.json' with { type: 'json' };
import outboundQuery from './outbound-query.json' with { type: 'json' };
import registerRequest from './register-request.json' with { type: 'json' };
import sendRequest from './send-request.json' with { type: 'json' };
import sendResult from './send-result.json' with { type: 'json' };
import sending from './sending.json' with { type: 'json' };
import status from './status.json' with { type: 'json' };
import suppressionList from './suppression-list.json' with { type: 'json' };
import suppressionRelease from './suppression-release.json' with { type: 'json' };
import suppression from './suppression.json' with { type: 'json' };
import webhookAttempt from './webhook-attempt.json' with { type: 'json' };
import webhookCreateRequest from './webhook-create-request.json' with { type: 'json' };
import webhookCreated from './webhook-created.json' with { type: 'json' };
import webhookDeleted from './webhook-deleted.json' with { type: 'json' };
import webhookDeliveriesQuery from './webhook-deliveries-query.json' with { type: 'json' };
import webhookDeliveries from './webhook-deliveries.json' with { type: 'json' };
import webhookDeliveryDetail from './webhook-delivery-detail.json' with { type: 'json' };
import webhookDelivery from './webhook-delivery.json' with { type: 'json' };
import webhookEnvelope from './webhook-envelope.json' with { type: 'json' };
import webhookList from './webhook-list.json' with { type: 'json' };
import webhookReplayResult from './webhook-replay-result.json' with { type: 'json' };
import webhookVerifyResult from './webhook-verify-result.json' with { type: 'json' };
import webhook from './webhook.json' with { type: 'json' };

// Payments.
import cardCallbackResult from './card-callback-result.json' with { type: 'json' };
import paymentList from './payment-list.json' with { type: 'json' };
import paymentRequest from './payment-request.json' with { type: 'json' };
import payment from './payment.json' with { type: 'json' };

// Key rotation, access keys, two-factor.
import accessKeyList from './access-key-list.json' with { type: 'json' };
import accessKeyRequest from './access-key-request.json' with { type: 'json' };
import accessKeyRevokeRequest from './access-key-revoke-request.json' with { type: 'json' };
import accessKey from './access-key.json' with { type: 'json' };
import accountKey from './account-key.json' with { type: 'json' };
import keyRotationRequest from './key-rotation-request.json' with { type: 'json' };
import keyRotationResult from './key-rotation-result.json' with { type: 'json' };
import keyRotationState from './key-rotation-state.json' with { type: 'json' };
import pendingKey from './pending-key.json' with { type: 'json' };
import twoFactorRequest from './two-factor-request.json' with { type: 'json' };
import twoFactorResult from './two-factor-result.json' with { type: 'json' };

// IMAP for mail clients: folders, move and delete over REST.
import emailDeleteQuery from './email-delete-query.json' with { type: 'json' };
import folderList from './folder-list.json' with { type: 'json' };
import messageDeleted from './message-deleted.json' with { type: 'json' };
import messageMoveRequest from './message-move-request.json' with { type: 'json' };
import messageMoved from './message-moved.json' with { type: 'json' };
import junkVerdict from './junk-verdict.json' with { type: 'json' };
import messageJunkRequest from './message-junk-request.json' with { type: 'json' };
import messageJunkResult from './message-junk-result.json' with { type: 'json' };
import markJunkTool from './mark-junk-tool.json' with { type: 'json' };
// Owners: human accounts, sessions, claims, drafts.
import ownerPasswordRequest from './owner-password-request.json' with { type: 'json' };
import ownerSessionRequest from './owner-session-request.json' with { type: 'json' };
import ownerSession from './owner-session.json' with { type: 'json' };
import ownerSignedOut from './owner-signed-out.json' with { type: 'json' };
import ownerSignupRequest from './owner-signup-request.json' with { type: 'json' };
import ownerSignup from './owner-signup.json' with { type: 'json' };
import owner from './owner.json' with { type: 'json' };
import ownerAgent from './owner-agent.json' with { type: 'json' };
import ownerAgentList from './owner-agent-list.json' with { type: 'json' };
import ownerAgentOverview from './owner-agent-overview.json' with { type: 'json' };
import ownerClaimRequest from './owner-claim-request.json' with { type: 'json' };
import ownerClaimCode from './owner-claim-code.json' with { type: 'json' };
import ownerEmailQuery from './owner-email-query.json' with { type: 'json' };
import agentOwnerRequest from './agent-owner-request.json' with { type: 'json' };
import agentOwner from './agent-owner.json' with { type: 'json' };
import draftApproval from './draft-approval.json' with { type: 'json' };
import draftDeleted from './draft-deleted.json' with { type: 'json' };
import draftList from './draft-list.json' with { type: 'json' };
import draftPatchRequest from './draft-patch-request.json' with { type: 'json' };
import draftApproveRequest from './draft-approve-request.json' with { type: 'json' };
import draftRejectRequest from './draft-reject-request.json' with { type: 'json' };
import draftSummary from './draft-summary.json' with { type: 'json' };
import draft from './draft.json' with { type: 'json' };
import draftsQuery from './drafts-query.json' with { type: 'json' };
import ownerDraftsQuery from './owner-drafts-query.json' with { type: 'json' };
// Conversations: threads, replies, the event stream.
import threadListQuery from './thread-list-query.json' with { type: 'json' };
import threadList from './thread-list.json' with { type: 'json' };
import threadQuery from './thread-query.json' with { type: 'json' };
import threadSummary from './thread-summary.json' with { type: 'json' };
import thread from './thread.json' with { type: 'json' };
import replyRequest from './reply-request.json' with { type: 'json' };
import replyQuery from './reply-query.json' with { type: 'json' };
import replyEmailTool from './reply-email-tool.json' with { type: 'json' };
import waitForEmailTool from './wait-for-email-tool.json' with { type: 'json' };
import eventsQuery from './events-query.json' with { type: 'json' };

export type JsonSchema = { $id: string } & Record<string, unknown>;

const OWNER_SCHEMAS: readonly JsonSchema[] = [
  ownerPasswordRequest,
  ownerSessionRequest,
  ownerSession,
  ownerSignedOut,
  ownerSignupRequest,
  ownerSignup,
  owner,
  ownerAgent,
  ownerAgentList,
  ownerAgentOverview,
  ownerClaimRequest,
  ownerClaimCode,
  ownerEmailQuery,
  agentOwnerRequest,
  agentOwner,
  draftApproval,
  draftDeleted,
  draftList,
  draftPatchRequest,
  draftApproveRequest,
  draftRejectRequest,
  draftSummary,
  draft,
  draftsQuery,
  ownerDraftsQuery,
];
// Custom domains.
import domainCreateRequest from './domain-create-request.json' with { type: 'json' };
import dnsRecord from './dns-record.json' with { type: 'json' };
import domainCheck from './domain-check.json' with { type: 'json' };
import domain from './domain.json' with { type: 'json' };
import domainList from './domain-list.json' with { type: 'json' };
import domainVerifyResult from './domain-verify-result.json' with { type: 'json' };
import domainDeleted from './domain-deleted.json' with { type: 'json' };
import aliasCreateRequest from './alias-create-request.json' with { type: 'json' };
import alias from './alias.json' with { type: 'json' };
import aliasList from './alias-list.json' with { type: 'json' };
import domainMailboxCreateRequest from './domain-mailbox-create-request.json' with { type: 'json' };
import domainMailbox from './domain-mailbox.json' with { type: 'json' };
import domainMailboxList from './domain-mailbox-list.json' with { type: 'json' };
import domainMailboxDeleteRequest from './domain-mailbox-delete-request.json' with { type: 'json' };
import domainMailboxDeleted from './domain-mailbox-deleted.json' with { type: 'json' };

const DOMAIN_SCHEMAS: readonly JsonSchema[] = [
  domainCreateRequest,
  dnsRecord,
  domainCheck,
  domain,
  domainList,
  domainVerifyResult,
  domainDeleted,
  aliasCreateRequest,
  alias,
  aliasList,
  domainMailboxCreateRequest,
  domainMailbox,
  domainMailboxList,
  domainMailboxDeleteRequest,
  domainMailboxDeleted,
];
const PAYMENT_SCHEMAS: readonly JsonSchema[] = [cardCallbackResult, paymentList, paymentRequest, payment];

export const SCHEMAS: readonly JsonSchema[] = [
  account,
  address,
  attachment,
  authentication,
  balance,
  emailQuery,
  error,
  health,
  inboxQuery,
  inbox,
  messageFull,
  message,
  registerRequest,
  empty,
  mcpMessage,
  accessKeyList,
  accessKeyRequest,
  accessKeyRevokeRequest,
  accessKey,
  accountKey,
  keyRotationRequest,
  keyRotationResult,
  keyRotationState,
  pendingKey,
  twoFactorRequest,
  twoFactorResult,
  sendRequest,
  sendResult,
  sending,
  status,
  outboundQuery,
  outboundList,
  outboundDetail,
  suppression,
  suppressionList,
  suppressionRelease,
  emailDeleteQuery,
  folderList,
  messageDeleted,
  messageMoveRequest,
  messageMoved,
  junkVerdict,
  messageJunkRequest,
  messageJunkResult,
  markJunkTool,
  webhookAttempt,
  webhookCreateRequest,
  webhookCreated,
  webhookDeleted,
  webhookDeliveriesQuery,
  webhookDeliveries,
  webhookDeliveryDetail,
  webhookDelivery,
  webhookEnvelope,
  webhookList,
  webhookReplayResult,
  webhookVerifyResult,
  webhook,
  ...OWNER_SCHEMAS,
  ...DOMAIN_SCHEMAS,
  ...PAYMENT_SCHEMAS,
  threadListQuery,
  threadList,
  threadQuery,
  threadSummary,
  thread,
  replyRequest,
  replyQuery,
  replyEmailTool,
  waitForEmailTool,
  eventsQuery,
];

export const OPENAPI_SOURCE: Record<string, unknown> = openapi;

export const schemaById = (id: string): JsonSchema => {
  const schema = SCHEMAS.find((candidate) => candidate.$id === id);
  if (!schema) throw new Error(`no schema ${id}`);
  return schema;
};
