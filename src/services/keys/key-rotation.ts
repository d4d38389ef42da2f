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

  state(principal: Principal): RotationState {
    requireFullKey(principal);
    return this.store.transaction(() => {
      this.store.keys.expirePending(principal.accountId, this.now());
      return this.currentState(principal.accountId);
    });
  }

  mutate(principal: Principal, action: RotationAction): RotationResult {
    requireFullKey(principal);
    // Counted before the work so refused attempts count too.
    this.rateLimiter.take(
      {
        bucket: 'key-rotation',
        limit: this.config.mutationsPer15Minutes,
        windowMs: FIFTEEN_MINUTES_MS,
        message: 'too many key rotation changes; try again later',
      },
      principal.accountId,
    );
    return this.store.transaction(() => {
      this.store.keys.expirePending(principal.accountId, this.now());
      if (action === 'prepare') return this.prepare(principal);
      if (action === 'activate') return this.activate(principal);
      return this.cancel(principal);
    });
  }

  /** The worker's sweep: marks replacements past their time expired. */
  expireReplacements(): number {
    return this.store.transaction(() => this.store.keys.expirePending(null, this.now()));
  }

  private prepare(principal: Principal): RotationResult {
    if (this.store.keys.fullKey(principal.accountId, 'pending')) {
      throw new AppError('conflict', 'a replacement key is already pending; activate or cancel it first');
    }
    const apiKey = newFullKey();
    const now = this.now();
    this.store.keys.insert({
      id: newUuid(),
      accountId: principal.accountId,
      kind: 'full',
      keyHash: hashKey(apiKey),
      status: 'pending',
      createdAt: now,
      expiresAt: now + this.config.replacementMinutes * 60_000,
      revokedAt: null,
    });
    return { action: 'prepare', status: 'pending', apiKey, ...this.currentState(principal.accountId) };
  }

  /** Must be authenticated with the replacement itself: proof the caller holds the new key. */
  private activate(principal: Principal): RotationResult {
    const pending = this.requirePending(principal.accountId);
    if (pending.id !== principal.keyId) {
      throw new AppError('forbidden', 'activate must be authenticated with the replacement key');
    }
    const old = this.store.keys.fullKey(principal.accountId, 'active');
    if (old) this.store.keys.close(old.id, 'revoked', this.now());
    this.store.keys.activate(pending.id);
    return { action: 'activate', status: 'active', ...this.currentState(principal.accountId) };
  }

  private cancel(principal: Principal): RotationResult {
    const pending = this.requirePending(principal.accountId);
    if (pending.id === principal.keyId) {
      throw new AppError('forbidden', 'cancel must be authenticated with the original key');
    }
    this.store.keys.close(pending.id, 'revoked', this.now());
    return { action: 'cancel', status: 'cancelled', ...this.currentState(principal.accountId) };
  }

  private requirePending(accountId: string): KeyRecord {
    const pending = this.store.keys.fullKey(accountId, 'pending');
    if (!pending) throw new AppError('conflict', 'no replacement key is pending');
    return pending;
  }

  private currentState(accountId: string): RotationState {
    const active = this.store.keys.fullKey(accountId, 'active');
    const pending = this.store.keys.fullKey(accountId, 'pending');
    return {
      active: active ? { id: active.id, createdAt: iso(active.createdAt) } : null,
      pending: pending ? { id: pending.id, createdAt: iso(pending.createdAt), expiresAt: iso(pending.expiresAt ?? pending.createdAt) } : null,
    };
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}
