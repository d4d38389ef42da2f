import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { newUuid } from '../../core/ids.js';
import { hashKey, newAccessKey } from '../../core/keys.js';
import type { Permission, Principal } from '../../core/types.js';
import type { AccessKeyKind, AccessKeyRecord, AccessPolicy } from '../../store/access-keys.js';
import type { Store } from '../../store/index.js';
import type { AccessKeyPolicyService } from './access-key-policy.js';
import { requireFullKey, requireFullKeyOrOwner } from '../access/auth.js';
import type { TwoFactorService } from '../access/two-factor.js';

/** The request shape of docs/design.md "access key request", as schema/access-key-request.json validates it. */
export interface AccessKeyRequest {
  name: string;
  kind: AccessKeyKind;
  permissions: Permission[];
  expiresAt?: string | null;
  allowedSenders?: string[] | null;
  allowedRecipients?: string[] | null;
  dailyRecipientLimit?: number | null;
  totalRecipientLimit?: number | null;
  /** A sandbox key: its sends are validated, charged to nobody and never leave the host. */
  sandbox?: boolean;
}

export interface AccessKeyView {
  id: string;
  name: string;
  kind: AccessKeyKind;
  permissions: Permission[];
  status: 'active' | 'revoked' | 'expired';
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  allowedSenders: string[] | null;
  allowedRecipients: string[] | null;
  dailyRecipientLimit: number | null;
  dailyRecipientsUsed: number;
  totalRecipientLimit: number | null;
  totalRecipientsUsed: number;
  sandbox: boolean;
  /** The secret: in the creation response only. */
  apiKey?: string;
}

/** The list shows up to 100 keys (docs/agents/keys.md); more usable keys than that are refused at creation. */

const PERMISSIONS_OF_KIND: Record<AccessKeyKind, readonly Permission[]> = {
  mail: ['mail:read', 'mail:send', 'mail:junk', 'mail:draft'],
  domain: ['domains:read', 'domains:write'],
};

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const normalizeList = (list: string[] | null | undefined): string[] | null =>
  list === null || list === undefined ? null : [...new Set(list.map((address) => address.trim().toLowerCase()))];

/** Limited access keys: issue, list, revoke (docs/agents/keys.md). */
export class AccessKeyService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly twoFactor: TwoFactorService,
    private readonly policy: AccessKeyPolicyService,
    /** Usable keys per account, and the list's length (config `limits.accessKeysPerAccount`). */
    private readonly maxKeys: number,
  ) {}

  async create(principal: Principal, request: AccessKeyRequest): Promise<AccessKeyView> {
    requireFullKey(principal);
    if (request.permissions.includes('mail:draft')) {
      throw new AppError('forbidden', 'mail:draft keys are issued by human owners only', { field: 'permissions' });
    }
    return await this.issue(principal.accountId, this.policyFrom(request), request.expiresAt);
  }

  /**
   * The agent's owner issues the exclusive mail:draft kind (docs/agents/drafts.md), and
   * only that: other keys come from the agent's full key.
   */
  async createDraftKey(principal: Principal, request: AccessKeyRequest): Promise<AccessKeyView> {
    if (principal.kind !== 'owner') throw new AppError('forbidden', 'mail:draft keys are issued by human owners only');
    if (request.kind !== 'mail' || request.permissions.length === 0 || request.permissions.some((permission) => permission !== 'mail:draft')) {
      throw new AppError('invalid_input', 'an owner issues mail:draft keys only: kind "mail" and permissions ["mail:draft"] (the kind is exclusive)', {
        field: 'permissions',
      });
    }
    return await this.issue(principal.accountId, this.policyFrom(request), request.expiresAt);
  }

  private async issue(accountId: string, policy: AccessPolicy, requestedExpiry: string | null | undefined): Promise<AccessKeyView> {
    const now = this.clock.now().getTime();
    const expiresAt = this.expiryFrom(requestedExpiry, now);
    const apiKey = newAccessKey();
    await this.store.transaction(async () => {
      if ((await this.store.accessKeys.countUsable(accountId, now)) >= this.maxKeys) {
        throw new AppError('conflict', `an account holds at most ${this.maxKeys} usable access keys; revoke one first`);
      }
      await this.store.keys.insert({
        id: policy.keyId,
        accountId,
        kind: 'access',
        keyHash: hashKey(apiKey),
        status: 'active',
        createdAt: now,
        expiresAt,
        revokedAt: null,
      });
      await this.store.accessKeys.insertPolicy(policy);
    });
    const record = (await this.store.accessKeys.byId(accountId, policy.keyId)) as AccessKeyRecord;
    return { ...(await this.view(record, now)), apiKey };
  }

  async list(principal: Principal): Promise<{ accessKeys: AccessKeyView[] }> {
    requireFullKeyOrOwner(principal);
    const now = this.clock.now().getTime();
    return {
      accessKeys: await Promise.all(
        await Promise.all((await this.store.accessKeys.list(principal.accountId, now, this.maxKeys)).map((key) => this.view(key, now))),
      ),
    };
  }

  /**
   * Idempotent: an already revoked key answers as it is, with no factor needed (nothing
   * changes). Otherwise a factorCode is needed when 2FA is on (docs/agents/keys.md):
   * the agent's for its full key; the owner's own for an owner, the person acting.
   */
  async revoke(principal: Principal, keyId: string, factorCode: string | undefined): Promise<AccessKeyView> {
    requireFullKeyOrOwner(principal);
    const existing = await this.store.accessKeys.byId(principal.accountId, keyId);
    if (!existing) throw new AppError('not_found', `no access key ${keyId}`);
    if (existing.status !== 'revoked') {
      await this.twoFactor.requireFactorIfEnabled(principal.ownerId ?? principal.accountId, factorCode);
      await this.store.transaction(() => this.store.keys.close(keyId, 'revoked', this.clock.now().getTime()));
    }
    const now = this.clock.now().getTime();
    return await this.view((await this.store.accessKeys.byId(principal.accountId, keyId)) as AccessKeyRecord, now);
  }

  /** The policy of a limited key (null for a full key). */
  async policyOf(principal: Principal): Promise<AccessPolicy | null> {
    return principal.kind === 'access' ? await this.store.accessKeys.policy(principal.keyId) : null;
  }

  async view(key: AccessKeyRecord, now: number): Promise<AccessKeyView> {
    const expired = key.expiresAt !== null && key.expiresAt <= now;
    const usage = await this.policy.usage(key.keyId, now);
    return {
      id: key.keyId,
      name: key.name,
      kind: key.kind,
      permissions: key.permissions,
      status: key.status === 'revoked' ? 'revoked' : expired ? 'expired' : 'active',
      createdAt: iso(key.createdAt) as string,
      expiresAt: iso(key.expiresAt),
      revokedAt: iso(key.revokedAt),
      allowedSenders: key.allowedSenders,
      allowedRecipients: key.allowedRecipients,
      dailyRecipientLimit: key.dailyRecipientLimit,
      dailyRecipientsUsed: usage.dailyRecipientsUsed,
      totalRecipientLimit: key.totalRecipientLimit,
      totalRecipientsUsed: usage.totalRecipientsUsed,
      sandbox: key.sandbox,
    };
  }

  private policyFrom(request: AccessKeyRequest): AccessPolicy {
    const permissions = request.permissions;
    const foreign = permissions.filter((permission) => !PERMISSIONS_OF_KIND[request.kind].includes(permission));
    if (foreign.length > 0) {
      throw new AppError('invalid_input', `permissions ${foreign.join(', ')} do not belong to a ${request.kind} key`, { field: 'permissions' });
    }
    // Judging junk moves what the key reads (docs/agents/junk.md): never without reading.
    if (permissions.includes('mail:junk') && !permissions.includes('mail:read')) {
      throw new AppError('invalid_input', 'mail:junk needs mail:read on the same key', { field: 'permissions' });
    }
    const sends = permissions.includes('mail:send');
    const daily = request.dailyRecipientLimit ?? null;
    const total = request.totalRecipientLimit ?? null;
    if (sends && (daily === null || total === null)) {
      throw new AppError('invalid_input', 'a key with mail:send needs both dailyRecipientLimit and totalRecipientLimit', {
        field: daily === null ? 'dailyRecipientLimit' : 'totalRecipientLimit',
      });
    }
    const sendOnly = {
      allowedSenders: request.allowedSenders,
      allowedRecipients: request.allowedRecipients,
      dailyRecipientLimit: daily,
      totalRecipientLimit: total,
    };
    const misplaced = Object.entries(sendOnly).find(([, value]) => value !== null && value !== undefined);
    if (!sends && misplaced) {
      throw new AppError('invalid_input', `${misplaced[0]} applies only to a key with mail:send`, { field: misplaced[0] });
    }
    if (!sends && request.sandbox) throw new AppError('invalid_input', 'sandbox applies only to a key with mail:send', { field: 'sandbox' });
    return {
      keyId: newUuid(),
      name: request.name,
      kind: request.kind,
      permissions: [...new Set(permissions)],
      allowedSenders: normalizeList(request.allowedSenders),
      allowedRecipients: normalizeList(request.allowedRecipients),
      dailyRecipientLimit: daily,
      totalRecipientLimit: total,
      sandbox: request.sandbox === true,
    };
  }

  private expiryFrom(expiresAt: string | null | undefined, now: number): number | null {
    if (expiresAt === null || expiresAt === undefined) return null;
    const at = Date.parse(expiresAt);
    if (!Number.isFinite(at) || at <= now) throw new AppError('invalid_input', 'expiresAt must be a time in the future', { field: 'expiresAt' });
    return at;
  }
}
