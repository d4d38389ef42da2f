/**
 * The JSON Schemas, one file per request or response. ajv validates REST bodies with
 * them, MCP tools use them as inputSchema, and openapi.json refers to them by file name.
 * Imported (not read from disk) so the single executable carries them.
 */
import account from './account.json' with { type: 'json' };
import address from './address.json' with { type: 'json' };
import attachment from './attachment.json' with { type: 'json' };
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

// Issue 6: key rotation, access keys, two-factor.
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

export type JsonSchema = { $id: string } & Record<string, unknown>;

export const SCHEMAS: readonly JsonSchema[] = [
  account, address, attachment, balance, emailQuery, error, health, inboxQuery, inbox, messageFull, message,
  registerRequest,
  empty, mcpMessage,
  accessKeyList, accessKeyRequest, accessKeyRevokeRequest, accessKey, accountKey, keyRotationRequest,
  keyRotationResult, keyRotationState, pendingKey, twoFactorRequest, twoFactorResult,
  sendRequest, sendResult, sending, outboundQuery, outboundList, outboundDetail,
  suppression, suppressionList, suppressionRelease,
  webhookAttempt, webhookCreateRequest, webhookCreated, webhookDeleted, webhookDeliveriesQuery, webhookDeliveries, webhookDeliveryDetail, webhookDelivery, webhookEnvelope, webhookList, webhookReplayResult, webhookVerifyResult, webhook,
  cardCallbackResult, paymentList, paymentRequest, payment,
];

export const OPENAPI_SOURCE: Record<string, unknown> = openapi;

export const schemaById = (id: string): JsonSchema => {
  const schema = SCHEMAS.find((candidate) => candidate.$id === id);
  if (!schema) throw new Error(`no schema ${id}`);
  return schema;
};
