import type { Clock } from '../../core/clock.js';
import { someInOrder } from '../../core/sequential.js';
import { AppError, invalidInput } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { Account, Principal, SendingState, SubmissionVia } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import { checkIdempotencyKeyHeader } from '../../core/idempotency-key.js';
import type { IdempotencyRecord } from '../../store/idempotency.js';
import type { AccessKeySendPolicy } from '../keys/access-key-send-policy.js';
import { requirePermission } from '../access/auth.js';
import { composeMessage, parsedOfComposed } from './compose.js';
import type { MessageAuthenticator } from '../mail/authentication.js';
import type { MailboxDeliveryAgent } from '../mail/delivery-agent.js';
import { SENT, type MailboxService } from '../mail/mailbox.js';
import type { ParseMail, ParsedMessage } from '../../core/parsed-message.js';
import {
  contentHashOf,
  normalizeSendRequest,
  recipientsOf,
  type AliasCheck,
  type PreparedSubmission,
  type SendingConfig,
  type SendRequest,
  type ThreadHeaders,
} from './send-input.js';
import type { SendingLimits, SendingStatus } from './send-limits.js';
import { deliverLocally, isLocalDomain, refuseLoopbackRecipients, type LocalDelivery } from './local-delivery.js';
import { settleSandbox } from './sandbox.js';
import { prepareRawSubmission, type RawEnvelope } from './submit-raw.js';

export type { PreparedSubmission, SendingConfig } from './send-input.js';

export interface SendOptions {
  /** The Idempotency-Key header; the body's idempotencyKey must equal it when both are given. */
  idempotencyKey?: string;
  via: SubmissionVia;
  /** A reply's In-Reply-To and References (src/services/sending/reply.ts); a send request never sets them. */
  thread?: ThreadHeaders;
}

export interface SendResult {
  success: true;
  id: string;
  messageId: string;
  status: 'accepted';
  replayed?: true;
  sentCopySaved?: boolean;
}

interface Parsed {
  sent: ParsedMessage;
  delivered: ParsedMessage | null;
}

const SENDING_STATES: readonly SendingState[] = ['probation', 'standard', 'reviewed', 'paused'];

/**
 * The one send path of REST, MCP and SMTP submission (docs/design.md "The process"): validate,
 * compose once, then accept in one transaction that checks idempotency, limits and the access-key
 * policy, reserves one credit per charged recipient, stores the submission and the Sent copy, and
 * delivers to local mailboxes. Remote recipients stay queued for the delivery worker, which the
 * store's commit feed wakes (src/app/reactions.ts).
 */
export class SendingService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly mailbox: MailboxService,
    private readonly limits: SendingLimits,
    private readonly accessKeyPolicy: AccessKeySendPolicy,
    /** The parse workers (a submitted message is parsed under the same budget as received mail). */
    private readonly parseMail: ParseMail,
    private readonly config: SendingConfig,
    authenticator: MessageAuthenticator,
    agent: MailboxDeliveryAgent,
  ) {
    this.local = { store, agent, authenticator, mailDomain: config.mailDomain, hostname: config.hostname };
  }

  private readonly local: LocalDelivery;

  async send(principal: Principal, input: SendRequest, options: SendOptions): Promise<SendResult> {
    requirePermission(principal, 'mail:send');
    const idempotencyKey = resolveIdempotencyKey(options.idempotencyKey, input.idempotencyKey, this.config.idempotencyKeyMaxChars);
    const account = await this.accountOf(principal);
    const message = {
      ...(await normalizeSendRequest(input, account.email, this.config, this.aliasCheckOf(account))),
      ...(options.thread ? { thread: options.thread } : {}),
    };
    await refuseLoopbackRecipients(this.store, this.config.mailDomain, recipientsOf(message));
    const contentHash = contentHashOf(message);
    if (idempotencyKey !== undefined) {
      const earlier = await this.store.idempotency.get(account.id, idempotencyScopeOf(principal), idempotencyKey);
      if (earlier) return replayOf(earlier, principal, contentHash);
    }
    const messageId = `<${newUuid()}@${this.config.mailDomain}>`;
    const date = this.clock.now();
    const composed = await composeMessage(message, messageId, date);
    return this.accept(
      principal,
      {
        fromAddress: message.from.address,
        replyTo: message.replyTo.map((entry) => entry.address.toLowerCase()),
        subject: message.subject,
        recipients: recipientsOf(message),
        contentHash,
        messageId,
        ...composed,
        parsed: parsedOfComposed(message, messageId, date),
      },
      idempotencyKey,
      options.via,
    );
  }

  /**
   * SMTP submission: the client's own message and envelope, under the same rules, credits
   * and limits. A client Message-ID is the idempotency key, so a retried message is not
   * sent or charged twice.
   */
  async submitRaw(principal: Principal, envelope: RawEnvelope, raw: Buffer): Promise<SendResult> {
    requirePermission(principal, 'mail:send');
    const account = await this.accountOf(principal);
    const { prepared, idempotencyKey } = await prepareRawSubmission(
      envelope,
      raw,
      account.email,
      this.config,
      this.clock.now(),
      this.parseMail,
      this.aliasCheckOf(account),
    );
    await refuseLoopbackRecipients(this.store, this.config.mailDomain, prepared.recipients);
    if (idempotencyKey !== undefined) {
      const earlier = await this.store.idempotency.get(account.id, idempotencyScopeOf(principal), idempotencyKey);
      if (earlier) return replayOf(earlier, principal, prepared.contentHash);
    }
    return this.accept(principal, prepared, idempotencyKey, 'smtp');
  }

  async status(principal: Principal): Promise<SendingStatus> {
    return await this.limits.status(await this.accountOf(principal));
  }

  /** Operator command `agentpost sending set <email> <state>`. */
  async setState(email: string, state: string): Promise<SendingState> {
    if (!SENDING_STATES.includes(state as SendingState)) {
      throw invalidInput('state', `state must be one of ${SENDING_STATES.join(', ')}`);
    }
    const account = await this.store.accounts.byEmail(email.trim().toLowerCase());
    if (!account) throw new AppError('not_found', `no account with the address ${email}`);
    await this.store.transaction(() => this.store.accounts.setSendingState(account.id, state as SendingState));
    return state as SendingState;
  }

  /** Drops idempotency records past their retention (at least 24 hours). */
  async sweepIdempotency(): Promise<number> {
    const before = this.clock.now().getTime() - this.config.idempotencyRetentionMs;
    return await this.store.transaction(() => this.store.idempotency.sweepBefore(before));
  }

  /** An alias on a custom domain assigned to the account's mailbox may be `from` (docs/agents/sending.md, Sender). */
  private aliasCheckOf(account: Account): AliasCheck {
    return (address) => this.store.domainAddresses.isAliasOfAccount(account.id, address);
  }

  private async accountOf(principal: Principal): Promise<Account> {
    const account = await this.store.accounts.byId(principal.accountId);
    if (!account) throw new AppError('unauthorized', 'missing or invalid API key');
    if (account.status !== 'active') throw new AppError('forbidden', 'this account is suspended');
    return account;
  }

  private async accept(principal: Principal, prepared: PreparedSubmission, idempotencyKey: string | undefined, via: SubmissionVia): Promise<SendResult> {
    const parsed = await this.parse(prepared);
    return this.store.groupCommit(() => this.acceptNow(principal, prepared, parsed, idempotencyKey, via));
  }

  /**
   * Parsing is async, so it happens before the transaction. A copy delivered here is parsed as
   * received mail is (on the parse workers), so it gets its stored body and the junk filter's
   * features at once; a composed message's Sent copy needs no parse.
   */
  private async parse(prepared: PreparedSubmission): Promise<Parsed> {
    const hasLocal = await someInOrder(prepared.recipients, (recipient) => isLocalDomain(this.store, this.config.mailDomain, recipient.domain));
    const delivered = hasLocal ? this.parseMail(prepared.raw, this.local.agent.parseWants) : Promise.resolve(null);
    // Bcc is not among the parsed fields, so one parse serves the Sent and delivered copies.
    const sent = prepared.parsed ?? (hasLocal && prepared.raw === prepared.sentRaw ? delivered : this.parseMail(prepared.sentRaw));
    const [sentParsed, deliveredParsed] = await Promise.all([sent, delivered]);
    if (sentParsed === null) throw new Error('the Sent copy was not parsed');
    return { sent: sentParsed, delivered: deliveredParsed };
  }

  /** The accept transaction. Anything thrown here rolls all of it back: nothing charged or queued. */
  private async acceptNow(
    principal: Principal,
    prepared: PreparedSubmission,
    parsed: Parsed,
    idempotencyKey: string | undefined,
    via: SubmissionVia,
  ): Promise<SendResult> {
    const now = this.clock.now().getTime();
    const account = await this.accountOf(principal);
    if (idempotencyKey !== undefined) {
      const earlier = await this.store.idempotency.get(account.id, idempotencyScopeOf(principal), idempotencyKey);
      if (earlier) return replayOf(earlier, principal, prepared.contentHash);
    }
    if (await this.store.submissions.hasUnresolvedIdentical(account.id, prepared.contentHash)) {
      throw new AppError(
        'conflict',
        'an identical earlier message has an unresolved recipient; reconcile it (GET /api/v1/agent/outbound) before sending again',
      );
    }
    const addresses = prepared.recipients.map((recipient) => recipient.address);
    // The access-key policy, part 1: a limited key's allowed senders and recipients (403).
    await this.accessKeyPolicy.checkAddresses(principal, { from: prepared.fromAddress, replyTo: prepared.replyTo, recipients: addresses });
    // A sandbox send is charged to nobody: no credits, no budget units, no recipients counted against the account's limits.
    const sandbox = principal.sandbox === true;
    const suppressed = sandbox ? new Set<string>() : await this.store.suppressions.activeAmong(account.id, addresses);
    const charged = sandbox ? 0 : prepared.recipients.length - suppressed.size;
    await this.limits.check(account, charged, now);
    // The access-key policy, part 2: a limited key's daily and total budgets, one unit per charged recipient.
    await this.accessKeyPolicy.reserveUnits(principal, charged);
    if (charged > 0 && !(await this.store.accounts.reserveCredits(account.id, charged))) {
      throw new AppError('insufficient_credits', `sending to ${charged} recipient(s) needs ${charged} credit(s); the balance is ${account.credits}`);
    }
    const id = newUuid();
    const rows = await this.store.submissions.insert(
      {
        id,
        accountId: account.id,
        keyId: principal.keyId,
        messageId: prepared.messageId,
        contentHash: prepared.contentHash,
        fromAddress: prepared.fromAddress,
        subject: prepared.subject,
        via,
        createdAt: now,
        raw: prepared.raw,
      },
      prepared.recipients.map((recipient) => ({ ...recipient, status: suppressed.has(recipient.address) ? 'suppressed' : 'queued', sandbox })),
      this.limits.dayStartOf(now),
    );
    await this.mailbox.append(await this.mailbox.mailboxOfAccount(account.id), SENT, prepared.sentRaw, parsed.sent, { seen: true });
    await this.store.submissions.setSentCopySaved(id);
    if (sandbox) await settleSandbox(this.store, rows, now);
    else await deliverLocally(this.local, rows, { id, via, fromAddress: prepared.fromAddress, raw: prepared.raw }, parsed.delivered, now);
    const result: SendResult = { success: true, id, messageId: prepared.messageId, status: 'accepted' };
    if (idempotencyKey !== undefined) {
      await this.store.idempotency.insert({
        accountId: account.id,
        scope: idempotencyScopeOf(principal),
        idempotencyKey,
        keyId: principal.keyId,
        contentHash: prepared.contentHash,
        submissionId: id,
        responseJson: JSON.stringify(result),
        createdAt: now,
      });
    }
    return { ...result, sentCopySaved: true };
  }
}

/** Header and body keys: 1 to maxChars (`limits.idempotencyKeyMaxChars`) characters; when both are given they must be equal. */
const resolveIdempotencyKey = (header: string | undefined, body: string | undefined, maxChars: number): string | undefined => {
  checkIdempotencyKeyHeader(header, maxChars);
  if (header !== undefined && body !== undefined && header !== body) {
    throw invalidInput('idempotencyKey', 'the Idempotency-Key header and the body idempotencyKey differ');
  }
  return header ?? body;
};

/**
 * Whose idempotency records a send reads and writes: a sandbox key's are its own, so its
 * fake sends never answer another key's real one nor the reverse; every other key of the
 * account (and an owner approving a draft) shares the account's.
 */
const idempotencyScopeOf = (principal: Principal): string => (principal.sandbox === true ? `sandbox:${principal.keyId}` : '');

/**
 * docs/agents/sending.md, Idempotency: same key and identical message answers the first response
 * with replayed true and without sentCopySaved; same key and different content is 409. A limited
 * key may not replay another key's submission.
 */
const replayOf = (record: IdempotencyRecord, principal: Principal, contentHash: string): SendResult => {
  if (record.contentHash !== contentHash) {
    throw new AppError('conflict', 'this idempotency key was already used with a different message', { field: 'idempotencyKey' });
  }
  if (principal.kind === 'access' && record.keyId !== principal.keyId) {
    throw new AppError('conflict', 'this idempotency key was already used by another key', { field: 'idempotencyKey' });
  }
  const first = JSON.parse(record.responseJson) as SendResult;
  return { success: true, id: first.id, messageId: first.messageId, status: 'accepted', replayed: true };
};
