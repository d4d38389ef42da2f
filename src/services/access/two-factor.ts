import { Secret, TOTP } from 'otpauth';
import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { seal, unseal } from '../../core/seal.js';
import type { Principal } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import { requireFullKey } from './auth.js';
import type { RateLimiter } from './rate-limiter.js';

export interface TwoFactorConfig {
  /** Seals seeds at rest (the service's secret key, from secretsDir). */
  secretKey: Buffer;
  issuer: string;
  /** Code attempts per account per 15 minutes, across enroll-confirm, disable and revocations. */
  attemptsPer15Minutes: number;
}

export type TwoFactorAction = 'enroll' | 'confirm' | 'disable';

export interface TwoFactorResult {
  action: TwoFactorAction;
  status: 'off' | 'pending' | 'enabled';
  /** The seed as an otpauth:// URI: on enroll only, never again. */
  otpauthUrl?: string;
}

/** RFC 6238 defaults every authenticator app understands. */
const PERIOD_SECONDS = 30;
const FIFTEEN_MINUTES_MS = 15 * 60 * 1000;
const WRONG_CODE = 'the factorCode is wrong, expired or already used';

/** TOTP second factor per account (docs/design.md "2FA"); guards access-key revocation. */
export class TwoFactorService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly rateLimiter: RateLimiter,
    private readonly config: TwoFactorConfig,
  ) {}

  /** A new seed; replaces an unconfirmed one. Refused while 2FA is on (disable first). */
  async enroll(principal: Principal): Promise<TwoFactorResult> {
    requireFullKey(principal);
    const account = await this.store.accounts.byId(principal.accountId);
    if (!account) throw new AppError('not_found', 'account not found');
    return await this.enrollAccount(account.id, account.email);
  }

  async confirm(principal: Principal, factorCode: string | undefined): Promise<TwoFactorResult> {
    requireFullKey(principal);
    return await this.confirmAccount(principal.accountId, factorCode);
  }

  async disable(principal: Principal, factorCode: string | undefined): Promise<TwoFactorResult> {
    requireFullKey(principal);
    return await this.disableAccount(principal.accountId, factorCode);
  }

  /** The three actions for an account the caller has already authorized (an agent's full key, a signed-in owner). */
  async enrollAccount(accountId: string, label: string): Promise<TwoFactorResult> {
    const totp = this.totp(new Secret({ size: 20 }), label);
    await this.store.transaction(async () => {
      if ((await this.store.twoFactor.byAccount(accountId))?.status === 'enabled') {
        throw new AppError('conflict', 'two-factor is already on; disable it first to enroll a new device');
      }
      await this.store.twoFactor.upsertPending(accountId, seal(this.config.secretKey, totp.secret.base32), this.now());
    });
    return { action: 'enroll', status: 'pending', otpauthUrl: totp.toString() };
  }

  async confirmAccount(accountId: string, factorCode: string | undefined): Promise<TwoFactorResult> {
    if ((await this.store.twoFactor.byAccount(accountId))?.status !== 'pending') {
      throw new AppError('conflict', 'nothing to confirm: enroll first');
    }
    await this.verify(accountId, factorCode);
    await this.store.transaction(() => this.store.twoFactor.enable(accountId, this.now()));
    return { action: 'confirm', status: 'enabled' };
  }

  async disableAccount(accountId: string, factorCode: string | undefined): Promise<TwoFactorResult> {
    if (!(await this.isEnabled(accountId))) throw new AppError('conflict', 'two-factor is not on');
    await this.verify(accountId, factorCode);
    await this.store.transaction(() => this.store.twoFactor.remove(accountId));
    return { action: 'disable', status: 'off' };
  }

  /** off, pending (enrolled, not confirmed) or enabled. */
  async statusOf(accountId: string): Promise<TwoFactorResult['status']> {
    return (await this.store.twoFactor.byAccount(accountId))?.status ?? 'off';
  }

  /** Operator reset (`agentpost 2fa reset`): drops the seed; true when one was there. */
  async reset(accountId: string): Promise<boolean> {
    return await this.store.transaction(async () => {
      const had = (await this.store.twoFactor.byAccount(accountId)) !== null;
      await this.store.twoFactor.remove(accountId);
      return had;
    });
  }

  async isEnabled(accountId: string): Promise<boolean> {
    return (await this.store.twoFactor.byAccount(accountId))?.status === 'enabled';
  }

  /** Revoking a limited key needs `factorCode` when 2FA is on; 403 without or wrong (docs/agents/keys.md). */
  async requireFactorIfEnabled(accountId: string, factorCode: string | undefined): Promise<void> {
    if (await this.isEnabled(accountId)) await this.verify(accountId, factorCode);
  }

  /**
   * Accepts a code of the current step or one step either side (clock drift, RFC 6238
   * section 5.2), and only for a step later than the last accepted one, so a code
   * cannot be replayed within its window. Every attempt counts against the rate limit.
   */
  private async verify(accountId: string, factorCode: string | undefined): Promise<void> {
    if (factorCode === undefined || factorCode === '') throw new AppError('forbidden', 'factorCode is required: two-factor is on');
    await this.rateLimiter.take(
      {
        bucket: 'factor-code',
        limit: this.config.attemptsPer15Minutes,
        windowMs: FIFTEEN_MINUTES_MS,
        message: 'too many factor code attempts; try again later',
      },
      accountId,
    );
    await this.store.transaction(async () => {
      const record = await this.store.twoFactor.byAccount(accountId);
      if (!record) throw new AppError('forbidden', WRONG_CODE);
      const now = this.now();
      const totp = this.totp(Secret.fromBase32(unseal(this.config.secretKey, record.sealedSeed)), accountId);
      const delta = /^[0-9]{6}$/.test(factorCode) ? totp.validate({ token: factorCode, timestamp: now, window: 1 }) : null;
      if (delta === null) throw new AppError('forbidden', WRONG_CODE);
      const step = Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
      if (!(await this.store.twoFactor.useStep(accountId, step))) throw new AppError('forbidden', WRONG_CODE);
    });
  }

  private totp(secret: Secret, label: string): TOTP {
    return new TOTP({ issuer: this.config.issuer, label, secret, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS });
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}
