import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { newUuid } from '../../core/ids.js';
import { hashKey, newFullKey } from '../../core/keys.js';
import type { Principal } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { KeyRecord } from '../../store/keys.js';
import { requireFullKey } from '../access/auth.js';
import type { RateLimiter } from '../access/rate-limiter.js';

export type RotationAction = 'prepare' | 'activate' | 'cancel';

export interface RotationConfig {
  /** `limits.keyRotationMutationsPer15Minutes` (12). */
  mutationsPer15Minutes: number;
  /** docs/design.md "key rotation": a replacement not activated in 30 minutes expires. */
  replacementMinutes: number;
}

export interface RotationState {
  active: { id: string; createdAt: string } | null;
  pending: { id: string; createdAt: string; expiresAt: string } | null;
}

export interface RotationResult extends RotationState {
  action: RotationAction;
  /** pending after prepare, active after activate (the replacement is now the key), cancelled after cancel. */
  status: 'pending' | 'active' | 'cancelled';
  /** The replacement secret: on prepare only, never again. */
  apiKey?: string;
}

const FIFTEEN_MINUTES_MS = 15 * 60 * 1000;
const iso = (ms: number): string => new Date(ms).toISOString();

/** Zero-downtime rotation of the full account key (docs/agents/keys.md). */
export class KeyRotationService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly rateLimiter: RateLimiter,
    private readonly config: RotationConfig,
  ) {}

  async state(principal: Principal): Promise<RotationState> {
    requireFullKey(principal);
    return await this.store.transaction(async () => {
      await this.store.keys.expirePending(principal.accountId, this.now());
      return await this.currentState(principal.accountId);
    });
  }

  async mutate(principal: Principal, action: RotationAction): Promise<RotationResult> {
    requireFullKey(principal);
    // Counted before the work so refused attempts count too.
    await this.rateLimiter.take(
      {
        bucket: 'key-rotation',
        limit: this.config.mutationsPer15Minutes,
        windowMs: FIFTEEN_MINUTES_MS,
        message: 'too many key rotation changes; try again later',
      },
      principal.accountId,
    );
    return await this.store.transaction(async () => {
      await this.store.keys.expirePending(principal.accountId, this.now());
      if (action === 'prepare') return await this.prepare(principal);
      if (action === 'activate') return await this.activate(principal);
      return await this.cancel(principal);
    });
  }

  /** The worker's sweep: marks replacements past their time expired. */
  async expireReplacements(): Promise<number> {
    return await this.store.transaction(() => this.store.keys.expirePending(null, this.now()));
  }

  private async prepare(principal: Principal): Promise<RotationResult> {
    if (await this.store.keys.fullKey(principal.accountId, 'pending')) {
      throw new AppError('conflict', 'a replacement key is already pending; activate or cancel it first');
    }
    const apiKey = newFullKey();
    const now = this.now();
    await this.store.keys.insert({
      id: newUuid(),
      accountId: principal.accountId,
      kind: 'full',
      keyHash: hashKey(apiKey),
      status: 'pending',
      createdAt: now,
      expiresAt: now + this.config.replacementMinutes * 60_000,
      revokedAt: null,
    });
    return { action: 'prepare', status: 'pending', apiKey, ...(await this.currentState(principal.accountId)) };
  }

  /** Must be authenticated with the replacement itself: proof the caller holds the new key. */
  private async activate(principal: Principal): Promise<RotationResult> {
    const pending = await this.requirePending(principal.accountId);
    if (pending.id !== principal.keyId) {
      throw new AppError('forbidden', 'activate must be authenticated with the replacement key');
    }
    const old = await this.store.keys.fullKey(principal.accountId, 'active');
    if (old) await this.store.keys.close(old.id, 'revoked', this.now());
    await this.store.keys.activate(pending.id);
    return { action: 'activate', status: 'active', ...(await this.currentState(principal.accountId)) };
  }

  private async cancel(principal: Principal): Promise<RotationResult> {
    const pending = await this.requirePending(principal.accountId);
    if (pending.id === principal.keyId) {
      throw new AppError('forbidden', 'cancel must be authenticated with the original key');
    }
    await this.store.keys.close(pending.id, 'revoked', this.now());
    return { action: 'cancel', status: 'cancelled', ...(await this.currentState(principal.accountId)) };
  }

  private async requirePending(accountId: string): Promise<KeyRecord> {
    const pending = await this.store.keys.fullKey(accountId, 'pending');
    if (!pending) throw new AppError('conflict', 'no replacement key is pending');
    return pending;
  }

  private async currentState(accountId: string): Promise<RotationState> {
    const active = await this.store.keys.fullKey(accountId, 'active');
    const pending = await this.store.keys.fullKey(accountId, 'pending');
    return {
      active: active ? { id: active.id, createdAt: iso(active.createdAt) } : null,
      pending: pending ? { id: pending.id, createdAt: iso(pending.createdAt), expiresAt: iso(pending.expiresAt ?? pending.createdAt) } : null,
    };
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}
